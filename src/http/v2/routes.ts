// the Open Inference Protocol dialect (OIP.md, KServe v2 REST): health, server and model metadata,
// and (infer.ts) inference. A thin adapter over the same table of operations and pipeline as /v1.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import type { Engine } from '../../jobs/pipeline.js';
import type { ServiceState } from '../guards.js';
import { oipRouteSchemas } from '../openapi/oip-schemas.js';
import { readiness, refuseQuery } from '../service-routes.js';
import { registerInferRoutes } from './infer-route.js';
import { EXTENSIONS, modelFor, modelMetadata, PLATFORM } from './models.js';

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

interface ModelParams { model: string; version?: string }

// the OpenAPI document's schema of each route (params, answers): fastify serializes the answers with it
const options = (url: string) => ({ schema: oipRouteSchemas[url] });

export async function registerV2Routes(app: FastifyInstance, engine: Engine, config: Readonly<Config>, state: ServiceState): Promise<void> {
  const { pool } = engine;
  app.get('/v2', options('/v2'), async () => ({ name: PLATFORM, version, extensions: EXTENSIONS }));
  // the health checks refuse a query parameter, as /healthz does
  app.get('/v2/health/live', { ...options('/v2/health/live'), onRequest: refuseQuery }, async () => ({ live: true }));
  app.get('/v2/health/ready', { ...options('/v2/health/ready'), onRequest: refuseQuery }, async (_request, reply) => {
    const { ready } = readiness(pool, state);
    return reply.code(ready ? 200 : 503).send({ ready });
  });
  for (const prefix of ['/v2/models/:model', '/v2/models/:model/versions/:version']) {
    app.get<{ Params: ModelParams }>(prefix, options(prefix), async (request) => {
      const { model, version: asked } = request.params;
      return modelMetadata(model, modelFor(model, asked));
    });
    app.get<{ Params: ModelParams }>(`${prefix}/ready`, options(`${prefix}/ready`), async (request, reply) => {
      const { model, version: asked } = request.params;
      modelFor(model, asked);
      const { ready } = readiness(pool, state);
      return reply.code(ready ? 200 : 503).send({ name: model, ready });
    });
  }
  await registerInferRoutes(app, engine, config, state);
}
