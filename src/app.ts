// the app factory: a configured Fastify instance with its worker pool; it does not listen.
import { randomUUID } from 'node:crypto';
import underPressure from '@fastify/under-pressure';
import Fastify, { type FastifyInstance } from 'fastify';
import { resolveConfig, type Config } from './config.js';
import { serviceError } from './errors.js';
import { registerBodyParsers } from './http/body-parsers.js';
import { registerDocs } from './http/openapi/document.js';
import { registerErrorHandling } from './http/error-handler.js';
import { createAuthHook, type ServiceState } from './http/guards.js';
import { registerLeases } from './http/leases.js';
import { registerServiceRoutes } from './http/service-routes.js';
import { registerV1Routes } from './http/v1/routes.js';
import { AJV_OPTIONS } from './http/v1/schemas.js';
import { registerV2Routes } from './http/v2/routes.js';
import type { Engine } from './jobs/pipeline.js';
import { loadWasmKernels } from './kernels/wasm-kernels.js';
import { createSlabPool } from './memory/slab-pool.js';
import { createMetrics } from './metrics.js';
import { createPool } from './pool/pool.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** drain state, shared with the entry point's signal handling */
    service: ServiceState;
    /** with faultInjection: where tasks with the `block` fault wait (pool/protocol.ts); else null */
    faultGate: Int32Array | null;
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp(options: Partial<Config> = {}): Promise<FastifyInstance> {
  const config = resolveConfig(options);
  const app = Fastify({
    logger: { level: config.logLevel },
    bodyLimit: config.maxBodyBytes,
    // draining is answered by the admission hook, with a coded body and Retry-After
    return503OnClosing: false,
    // a caller's X-Request-Id is kept when it is sane, else one is made; it is echoed back
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: {
      // nothing is coerced, nothing removed, no defaults injected: the contract checks what was sent
      customOptions: { ...AJV_OPTIONS, keywords: [...AJV_OPTIONS.keywords] },
    },
  });
  const state: ServiceState = { draining: false, poolFailed: false, inFlight: 0 };
  app.decorate('service', state);
  const slabs = createSlabPool(config.maxTensorMemoryBytes);
  const wasm = loadWasmKernels(slabs.memory); // this thread's copy: inline work and per-request prep
  const faultGate = config.faultInjection ? new Int32Array(new SharedArrayBuffer(8)) : null;
  app.decorate('faultGate', faultGate);
  const pool = createPool(config, slabs.memory, (err) => app.log.error({ err }, 'worker pool error'), faultGate);
  const metrics = createMetrics(pool, slabs);
  pool.piscina.on('workerDestroy', () => {
    if (!pool.closing) metrics.workerRestarts.inc();
  });
  app.addHook('onClose', () => pool.close());
  // before the server listens: a build whose workers cannot load their kernels never turns ready
  state.poolFailed = !(await pool.warmUp());

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // 401 before anything else, including 404 and overload; hooks for features that are off are
  // not registered, so the hot path pays nothing for them
  if (config.apiKeys.length > 0) app.addHook('onRequest', createAuthHook(config.apiKeys));
  if (config.maxEventLoopDelayMs > 0) {
    await app.register(underPressure, {
      maxEventLoopDelay: config.maxEventLoopDelayMs,
      pressureHandler: async (request) => {
        if (request.url.startsWith('/v1/')) throw serviceError('overloaded');
      },
    });
  }
  app.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    metrics.requests.inc(labels);
    metrics.requestDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  await registerDocs(app);
  registerErrorHandling(app);
  registerLeases(app, slabs);
  registerBodyParsers(app, config, slabs);
  registerServiceRoutes(app, pool, metrics, state);
  const engine: Engine = { pool, slabs, wasm, metrics, limits: config };
  registerV1Routes(app, engine, config, state);
  await registerV2Routes(app, engine, config, state);
  return app;
}
