// what every request gets as it arrives, in one onRequest hook: its X-Request-Id echoed, a lease on
// shared memory (memory/lease.ts) that its body and jobs take slabs into, and one 'close' listener
// that ends it: its admission, when a dialect admitted it (http/admission-hook.ts; a close before
// the answer was written means the client went away, and its queued work is dropped), then its
// lease. 'close' comes either way: fastify's onResponse does not run for an answer cut short, and an
// answer streamed from shared memory would then keep its slabs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Admitted } from '../engine/admission.js';
import { Lease } from '../memory/lease.js';
import type { TensorMemory } from '../memory/tensor-memory.js';

declare module 'fastify' {
  interface FastifyRequest {
    lease: Lease;
    /** set by a dialect's admission hook; ended when the request closes */
    admitted: Admitted | null;
  }
}

export function registerRequestScope(app: FastifyInstance, slabs: TensorMemory): void {
  app.decorateRequest('lease', null as unknown as Lease);
  app.decorateRequest('admitted', null);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('x-request-id', request.id);
    const lease = new Lease(slabs);
    request.lease = lease;
    const res = reply.raw;
    res.on('close', () => {
      request.admitted?.end(res.writableFinished);
      lease.release();
    });
    done();
  });
}
