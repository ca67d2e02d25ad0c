// the Open Inference Protocol dialect (OIP.md, KServe v2 REST): health, server and model metadata,
// and (infer.ts) inference. A thin adapter over the same table of operations and pipeline as /v1.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import type { Engine } from '../../jobs/pipeline.js';
import type { ServiceState } from '../guards.js';
import { readiness } from '../service-routes.js';
import { registerInferRoutes } from './infer-route.js';
import { modelFor, modelMetadata } from './models.js';

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

interface ModelParams { model: string; version?: string }

// not in the OpenAPI document until the whole dialect is (inference is the next step of issue 13)
const options = { schema: { hide: true } };

export async function registerV2Routes(app: FastifyInstance, engine: Engine, config: Readonly<Config>, state: ServiceState): Promise<void> {
  const { pool } = engine;
  app.get('/v2', options, async () => ({ name: 'tensor-norm-service', version, extensions: ['binary_tensor_data', 'parameters'] }));
  app.get('/v2/health/live', options, async () => ({ live: true }));
  app.get('/v2/health/ready', options, async (_request, reply) => {
    const { ready } = readiness(pool, state);
    return reply.code(ready ? 200 : 503).send({ ready });
  });
  for (const prefix of ['/v2/models/:model', '/v2/models/:model/versions/:version']) {
    app.get<{ Params: ModelParams }>(prefix, options, async (request) => {
      const { model, version: asked } = request.params;
      return modelMetadata(model, modelFor(model, asked));
    });
    app.get<{ Params: ModelParams }>(`${prefix}/ready`, options, async (request, reply) => {
      const { model, version: asked } = request.params;
      modelFor(model, asked);
      const { ready } = readiness(pool, state);
      return reply.code(ready ? 200 : 503).send({ name: model, ready });
    });
  }
  await registerInferRoutes(app, engine, config, state);
}
