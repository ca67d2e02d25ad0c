// the Open Inference Protocol dialect (OIP.md, KServe v2 REST) as a Fastify plugin registered under
// /v2: health, server and model metadata, and (infer-route.ts) inference; its API keys (all but the
// two health checks), admission, `{"error"}` bodies and not-found answer. A thin adapter over the
// same table of operations and engine as /v1.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../engine/engine.js';
import { admissionHooks } from '../admission-hook.js';
import { authHook } from '../auth-hook.js';
import { registerErrorReplies } from '../error-handler.js';
import { refuseQuery } from '../service-routes.js';
import { registerInferRoutes } from './infer-route.js';
import { oipRouteSchemas } from './openapi-routes.js';
import { EXTENSIONS, modelFor, modelMetadata, PLATFORM } from './models.js';

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

interface ModelParams { model: string; version?: string }

const PREFIX = '/v2';

// the OpenAPI document's schema of each route (params, answers): fastify serializes the answers with it
const options = (path: string) => ({ schema: oipRouteSchemas[`${PREFIX}${path}`] });

/** registered with `{ prefix: '/v2' }` */
export async function v2Dialect(scope: FastifyInstance, { engine }: { engine: Engine }): Promise<void> {
  const authenticate = authHook(engine);
  if (authenticate !== null) scope.addHook('onRequest', authenticate);
  // OIP's error form, for every /v2 error and the 404 of any other path under /v2
  registerErrorReplies(scope, (error) => ({ error: error.message }));
  // '' rather than '/': /v2 itself, not /v2/
  scope.get('', options(''), async () => ({ name: PLATFORM, version, extensions: EXTENSIONS }));
  // the health checks need no key and refuse a query parameter, as /healthz does
  const health = { onRequest: refuseQuery, config: { public: true } };
  scope.get('/health/live', { ...options('/health/live'), ...health }, async () => ({ live: true }));
  scope.get('/health/ready', { ...options('/health/ready'), ...health }, async (_request, reply) => {
    const { ready } = engine.readiness();
    return reply.code(ready ? 200 : 503).send({ ready });
  });
  for (const prefix of ['/models/:model', '/models/:model/versions/:version']) {
    scope.get<{ Params: ModelParams }>(prefix, options(prefix), async (request) => {
      const { model, version: asked } = request.params;
      return modelMetadata(model, modelFor(model, asked));
    });
    scope.get<{ Params: ModelParams }>(`${prefix}/ready`, options(`${prefix}/ready`), async (request, reply) => {
      const { model, version: asked } = request.params;
      modelFor(model, asked);
      const { ready } = engine.readiness();
      return reply.code(ready ? 200 : 503).send({ name: model, ready });
    });
  }
  await registerInferRoutes(scope, engine, admissionHooks(scope, engine), (path) => options(path).schema);
}
