// GET /healthz, /readyz and /metrics: what an orchestrator and Prometheus ask.
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.js';
import type { NormPool } from '../pool/pool.js';
import type { ServiceState } from './guards.js';
import { serviceRouteSchemas } from './openapi/service-schemas.js';

export function registerServiceRoutes(app: FastifyInstance, pool: NormPool, metrics: Metrics, state: ServiceState): void {
  app.get('/healthz', { schema: serviceRouteSchemas['/healthz'] }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: serviceRouteSchemas['/readyz'] }, async (_request, reply) => {
    const workers = pool.piscina.threads.length;
    if (state.draining || pool.closing) return reply.code(503).send({ status: 'draining', workers });
    if (workers < pool.workers) return reply.code(503).send({ status: 'starting', workers });
    return { status: 'ready', workers };
  });

  app.get('/metrics', { schema: serviceRouteSchemas['/metrics'] }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
