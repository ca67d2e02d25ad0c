// entry point: read the environment, build the app, listen, drain on SIGTERM/SIGINT.
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { startGrpc, type GrpcFrontEnd } from './grpc/server.js';

const config = loadConfig();
const app = await buildApp(config);

const DRAIN_GRACE_MS = 5_000; // beyond the longest deadline: the last answers flush, their connections linger (http/connections.ts, LINGER_MS)

// while draining, a connection's answer to its latest request closes it, and it lingers half-closed
// until its client has read that answer (http/connections.ts)
app.connections.track(app);

// the gRPC front end (OIP.md "gRPC") on its own port, over the same engine; GRPC_PORT=off serves none
let grpc: GrpcFrontEnd | null = null;
let draining = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (draining) return;
    draining = true;
    app.service.draining = true; // /readyz turns 503, new work gets 503
    app.connections.drain(); // each connection's latest answer closes it
    // stop accepting at once: a balancer's next connection is refused, which takes this replica out
    // of its rotation at its first try (HAProxy: observe layer4) rather than after answers of 503;
    // requests on open connections still get 503 (above). Resolves once every connection has ended
    const httpDrained = new Promise<void>((resolve) => app.server.close(() => resolve()));
    // logged once the listener is closed: from this line on, a new connection is refused
    app.log.info({ signal, inFlight: app.service.inFlight, receiving: app.service.receiving }, 'draining');
    // in-flight requests end by their deadline at the latest; then give up
    setTimeout(() => {
      app.log.error('drain timed out');
      process.exit(1);
    }, config.requestTimeoutMs + DRAIN_GRACE_MS).unref();
    // then the engine, which both front ends' calls in flight still need (app.close() shuts it down;
    // its own server.close() finds the listener gone, which fastify allows)
    Promise.all([grpc?.drain(), httpDrained]).then(() => app.close()).then(() => {
      app.log.info('drained');
      process.exit(0);
    }, (err) => {
      app.log.error({ err }, 'close failed');
      process.exit(1);
    });
  });
}

await app.ready();
await app.listen({ port: config.port, host: config.host });
if (config.grpcPort !== null) {
  grpc = await startGrpc(app.engine, config, (err, message) => app.log.error({ err }, message));
  app.log.info({ port: grpc.port }, `gRPC listening on ${config.host}:${grpc.port}`);
}
