// GET /healthz, /readyz and /metrics: what an orchestrator and Prometheus ask.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serviceError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import type { NormPool } from '../pool/pool.js';
import type { ServiceState } from './guards.js';
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

/** what /readyz and the Open Inference Protocol's /v2/health/ready both answer from */
export function readiness(pool: NormPool, state: ServiceState): { ready: boolean; status: 'ready' | 'starting' | 'draining' | 'failed'; workers: number } {
  const workers = pool.piscina.threads.length;
  if (state.draining || pool.closing) return { ready: false, status: 'draining', workers };
  if (state.poolFailed) return { ready: false, status: 'failed', workers };
  if (workers < pool.workers) return { ready: false, status: 'starting', workers };
  return { ready: true, status: 'ready', workers };
}

export function registerServiceRoutes(app: FastifyInstance, pool: NormPool, metrics: Metrics, state: ServiceState): void {
  const options = (path: string) => ({ schema: serviceRouteSchemas[path], onRequest: refuseQuery });

  app.get('/healthz', options('/healthz'), async () => ({ status: 'ok' }));

  app.get('/readyz', options('/readyz'), async (_request, reply) => {
    const { ready, status, workers } = readiness(pool, state);
    return reply.code(ready ? 200 : 503).send({ status, workers });
  });

  app.get('/metrics', options('/metrics'), async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
