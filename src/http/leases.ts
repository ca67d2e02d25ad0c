// every request gets a lease on shared memory (memory/lease.ts) that its body and jobs take slabs
// into; the lease ends when the answer has been written or the connection has gone ('close' comes
// either way: fastify's onResponse does not run for an answer cut short, and an answer streamed
// from shared memory would then keep its slabs).
import type { FastifyInstance } from 'fastify';
import { Lease } from '../memory/lease.js';
import type { TensorMemory } from '../memory/tensor-memory.js';

declare module 'fastify' {
  interface FastifyRequest {
    lease: Lease;
  }
}

export function registerLeases(app: FastifyInstance, slabs: TensorMemory): void {
  app.decorateRequest('lease', null as unknown as Lease);
  app.addHook('onRequest', (request, reply, done) => {
    const lease = new Lease(slabs);
    request.lease = lease;
    reply.raw.once('close', () => lease.release());
    done();
  });
}
