// GET /healthz, /readyz and /metrics: what an orchestrator and Prometheus ask.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Engine } from '../engine/engine.js';
import { serviceError } from '../errors.js';
import { serviceRouteSchemas } from './openapi/service-schemas.js';

/**
 * an onRequest hook of the service endpoints: they take no query parameter, so one is a 400 naming
 * it rather than silently ignored (a typo'd probe option fails loudly)
 */
export async function refuseQuery(request: FastifyRequest): Promise<void> {
  const query = request.url.indexOf('?');
  if (query === -1) return;
  const names = Object.keys(request.query as Record<string, unknown>);
  if (names.length > 0) throw serviceError('fieldUnknown', `?${names[0].slice(0, 32)}`);
}

export function registerServiceRoutes(app: FastifyInstance, engine: Engine): void {
  const options = (path: string) => ({ schema: serviceRouteSchemas[path], onRequest: refuseQuery });

  app.get('/healthz', options('/healthz'), async () => ({ status: 'ok' }));

  app.get('/readyz', options('/readyz'), async (_request, reply) => {
    const { ready, status, workers } = engine.readiness();
    return reply.code(ready ? 200 : 503).send({ status, workers });
  });

  app.get('/metrics', options('/metrics'), async (_request, reply) => {
    const text = await engine.metrics.registry.metrics();
    return reply.type(engine.metrics.registry.contentType).send(text);
  });
}
