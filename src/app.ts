// the app factory: a configured Fastify instance with its worker pool; it does not listen.
import Fastify, { type FastifyInstance } from 'fastify';
import { resolveConfig, type Config } from './config.js';
import { registerBodyParsers } from './http/body-parsers.js';
import { registerErrorHandling } from './http/error-handler.js';
import { registerRoutes } from './http/routes.js';
import { ajvKeywords } from './http/schemas.js';
import { createPool } from './pool/pool.js';

export async function buildApp(options: Partial<Config> = {}): Promise<FastifyInstance> {
  const config = resolveConfig(options);
  const app = Fastify({
    logger: { level: config.logLevel },
    bodyLimit: config.maxBodyBytes,
    ajv: {
      // nothing is coerced, nothing removed, no defaults injected: the contract checks what was sent
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, strictNumbers: true, allErrors: false, keywords: ajvKeywords },
    },
  });
  const pool = createPool(config);
  app.addHook('onClose', () => pool.close());
  registerErrorHandling(app);
  registerBodyParsers(app, config.maxBodyBytes);
  registerRoutes(app, pool, config);
  app.get('/healthz', async () => ({ status: 'ok' }));
  return app;
}
