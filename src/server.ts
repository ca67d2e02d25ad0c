// entry point: read the environment, build the app, listen, drain on SIGTERM/SIGINT.
import type { Socket } from 'node:net';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { startGrpc, type GrpcFrontEnd } from './grpc/server.js';

const config = loadConfig();
const app = await buildApp(config);

const DRAIN_GRACE_MS = 5_000; // beyond the longest deadline, for the last responses to flush
const LINGER_MS = 3_000; // for a client to read its last answer and close; within DRAIN_GRACE_MS

// close() waits for every connection, and a client's kept-alive one would hold it until it idles
// out (fastify's keepAliveTimeout is 72 s): while draining, answers close their connections
// (a callback hook: an async one costs every answer a promise)
app.addHook('onSend', (_request, reply, payload, done) => {
  if (app.service.draining) reply.header('connection', 'close');
  done(null, payload);
});
// Node destroys a connection it closes as soon as the answer is in kernel buffers, and close()
// destroys idle kept-alive ones outright; exiting then can cut an answer short (in a container the
// port proxy and network go with the process). While draining, half-close instead and let the
// client's own close end the connection, so close() resolves once every client has read its
// answer (bounded by LINGER_MS).
const lingering = new WeakSet<Socket>();
/** once per socket: both destroySoon and the answer's finish, or two close() calls, may ask */
function lingeringClose(socket: Socket): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  app.log.info({ remotePort: socket.remotePort }, 'lingering until the client closes');
  socket.end(); // the client's FIN then destroys it (autoDestroy)
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
/** every open connection, with the number of its requests not yet answered */
const connections = new Map<Socket, number>();
app.server.on('connection', (socket: Socket) => {
  connections.set(socket, 0);
  socket.once('close', () => connections.delete(socket));
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = () => (app.service.draining ? lingeringClose(socket) : destroySoon());
});
app.server.on('request', (req, res) => {
  const socket = req.socket;
  connections.set(socket, (connections.get(socket) ?? 0) + 1);
  res.once('finish', () => {
    if (connections.has(socket)) connections.set(socket, connections.get(socket)! - 1);
    // an answer whose headers went out before the signal said keep-alive: end its connection too
    if (app.service.draining) lingeringClose(socket);
  });
});
// called by close() (Node's own pre-close step and fastify's), which would destroy() them
app.server.closeIdleConnections = () => {
  for (const [socket, unanswered] of connections) if (unanswered === 0) lingeringClose(socket);
};

// the gRPC front end (OIP.md "gRPC") on its own port, over the same engine; GRPC_PORT=off serves none
let grpc: GrpcFrontEnd | null = null;
let draining = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (draining) return;
    draining = true;
    app.service.draining = true; // /readyz turns 503, new work gets 503
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
