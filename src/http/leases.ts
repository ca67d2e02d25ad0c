// every request gets a lease on shared memory (memory/lease.ts) that its body and jobs take slabs
// into; the lease ends when the answer has been written.
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
  app.addHook('onRequest', (request, _reply, done) => {
    request.lease = new Lease(slabs);
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    // null when an earlier onRequest hook (auth, overload) answered first
    request.lease?.release();
    done();
  });
}
