// what both dialects do around the pipeline: the timeout header's verdict, the test-only fault
// header, and the Server-Timing header of a successful answer.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Timings } from '../jobs/pipeline.js';
import type { TaskFault } from '../pool/protocol.js';

/** a bad X-Request-Timeout-Ms is answered after the body (400s come after 413) */
export function checkTimeoutHeader(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  done(request.timeoutHeaderError ?? undefined);
}

export function serverTiming(t: Timings): string {
  return `decode;dur=${t.decode.toFixed(3)}, queue;dur=${t.queue.toFixed(3)}, compute;dur=${t.compute.toFixed(3)}, encode;dur=${t.encode.toFixed(3)}`;
}

/** X-Test-Fault, honoured only when the app was built with faultInjection (tests) */
export function testFault(request: FastifyRequest): TaskFault | null {
  const header = request.headers['x-test-fault'];
  if (header === 'crash-worker') return { kind: 'crash' };
  return header === 'block' ? { kind: 'block' } : null;
}
