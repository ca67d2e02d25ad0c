// the app factory: the engine (engine/) behind a Fastify instance, with the service endpoints and one
// plugin per dialect under its prefix (http/v1, http/v2); it does not listen.
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { resolveConfig, type Config } from './config.js';
import { LogDestination } from './log-destination.js';
import type { ServiceState } from './engine/admission.js';
import { createEngine, type Engine } from './engine/engine.js';
import { AccessLog, LOG_SERIALIZERS } from './http/access-log.js';
import { Connections } from './http/connections.js';
import { registerDocs } from './http/openapi/document.js';
import { clientErrorHandler } from './http/client-errors.js';
import { registerErrorReplies, serviceErrorBody } from './http/error-handler.js';
import { requestId } from './http/request-id.js';
import { registerRequestScope } from './http/request-scope.js';
import { registerServiceRoutes } from './http/service-routes.js';
import { v1ComponentDescriptions } from './http/v1/openapi.js';
import { v1Dialect } from './http/v1/plugin.js';
import { AJV_OPTIONS } from './http/v1/schemas.js';
import { oipComponentDescriptions } from './http/v2/openapi-bodies.js';
import { v2Dialect } from './http/v2/plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    engine: Engine;
    /** the engine's drain state, shared with the entry point's signal handling */
    service: ServiceState;
    /** with faultInjection: where tasks with the `hold` fault wait (pool/protocol.ts); else null */
    faultGate: Int32Array | null;
    /** HTTP connections and their unanswered requests; followed once the entry point listens */
    connections: Connections;
  }
}

export async function buildApp(options: Partial<Config> = {}): Promise<FastifyInstance> {
  const config = resolveConfig(options);
  // log lines are written in batches (log-destination.ts), not as a blocking write each (a line per
  // request at info cost a small request ~40 % more that way)
  const logStream = new LogDestination();
  // the service's logger, as app.log. Fastify's own is off: with one, fastify makes every request a
  // child logger and puts 'finish' and 'error' listeners on its answer to log it at the end (3-5 % of
  // a small request's CPU, measured), where the request's one 'close' listener (http/request-scope.ts)
  // writes the access line; request.log and reply.log are then fastify's silent logger
  const log = pino({ level: config.logLevel, serializers: LOG_SERIALIZERS }, logStream);
  // a pipe whose reader fell 16 MiB behind: the lines past that were dropped (log-destination.ts)
  logStream.onDropped = (lines) => log.warn({ droppedLines: lines }, "log lines dropped: the log's reader fell behind");
  const accessLog = new AccessLog(config.accessLog);
  const app = Fastify({
    logger: false,
    // one access line per request at its end, not fastify's two; fastify's other lines about a
    // request go through app.log too
    logController: accessLog,
    bodyLimit: config.maxBodyBytes,
    // draining is answered by admission, with a coded body and Retry-After
    return503OnClosing: false,
    // a caller's X-Request-Id is kept when it is sane, else one is made; it is echoed back
    genReqId: requestId,
    // slow or half-sent headers: a 408 and the connection closed within a second of the timeout
    // (Node checks every connectionsCheckingInterval, 30 s by default). The body has its own rules
    // (idle limit, minimum rate: http/body-reader.ts), so no overall request timeout
    http: { headersTimeout: config.headersTimeoutMs, requestTimeout: 0, connectionsCheckingInterval: 1_000 },
    clientErrorHandler: clientErrorHandler(config.headersTimeoutMs),
    ajv: {
      // nothing is coerced, nothing removed, no defaults injected: the contract checks what was sent
      customOptions: { ...AJV_OPTIONS, keywords: [...AJV_OPTIONS.keywords] },
    },
  });
  app.log = log;
  // before the server listens: a build whose workers cannot load their kernels never turns ready
  const engine = await createEngine(config, (err, message) => app.log.error({ err }, message));
  app.decorate('engine', engine);
  app.decorate('service', engine.state);
  app.decorate('faultGate', engine.faultGate);
  app.addHook('onClose', () => {
    logStream.close();
    return engine.close();
  });

  const connections = new Connections(engine.state, app.log);
  app.decorate('connections', connections);
  registerRequestScope(app, engine.slabs, engine.metrics, connections, accessLog);

  await registerDocs(app, { ...v1ComponentDescriptions, ...oipComponentDescriptions });
  registerErrorReplies(app, serviceErrorBody);
  registerServiceRoutes(app, engine);
  await app.register(v1Dialect, { prefix: '/v1', engine });
  await app.register(v2Dialect, { prefix: '/v2', engine });
  return app;
}
