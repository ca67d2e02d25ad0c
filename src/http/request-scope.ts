// what every request gets as it arrives, in one onRequest hook: its X-Request-Id echoed, a lease on
// shared memory (memory/lease.ts) that its body and jobs take slabs into, its connection told of it
// (http/connections.ts: while the service drains, its answer may be the one to close the
// connection), and one 'close' listener that ends it: its admission, when a dialect admitted it
// (http/admission-hook.ts; a close before the answer was written means the client went away, and its
// queued work is dropped), its lease, its count and time in the HTTP metrics and its access line
// (when it was answered) and its connection's count of unanswered requests. 'close' comes either
// way: fastify's onResponse does not run for an answer cut short, and an answer streamed from shared
// memory would then keep its slabs. One listener here, not an onResponse hook and listeners of their
// own, as each of those costs every request (fastify's logger is off for the same reason: app.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Admitted } from '../engine/admission.js';
import type { AccessLog } from './access-log.js';
import { Lease } from '../memory/lease.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import type { Metrics } from '../metrics.js';
import type { Connections } from './connections.js';

declare module 'fastify' {
  interface FastifyRequest {
    lease: Lease;
    /** set by a dialect's admission hook; ended when the request closes */
    admitted: Admitted | null;
  }
}

function countAnswer(metrics: Metrics, request: FastifyRequest, reply: FastifyReply, ms: number): void {
  const route = request.routeOptions.url ?? 'unmatched';
  const status = String(reply.statusCode);
  metrics.requests.cell(request.method, route, status).value++;
  metrics.requestDuration.cell(request.method, route, status).observe(ms / 1000);
}

export function registerRequestScope(app: FastifyInstance, slabs: TensorMemory, metrics: Metrics, connections: Connections, accessLog: AccessLog): void {
  app.decorateRequest('lease', null as unknown as Lease);
  app.decorateRequest('admitted', null);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const arrived = performance.now();
    reply.header('x-request-id', request.id);
    const lease = new Lease(slabs);
    request.lease = lease;
    const res = reply.raw;
    const socket = request.raw.socket;
    connections.arrived(socket, res);
    res.on('close', () => {
      request.admitted?.end(res.writableFinished);
      lease.release();
      const ms = performance.now() - arrived;
      // an answer was given (ended; its last bytes may have been cut off): not a client gone before it
      if (res.writableEnded) countAnswer(metrics, request, reply, ms);
      if (res.writableFinished) accessLog.completed(request, reply, ms);
      else if (res.errored !== null) accessLog.errored(request, reply, res.errored, ms);
      connections.answered(socket);
    });
    done();
  });
}
