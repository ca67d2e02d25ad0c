// what the Fastify dialects do around the pipeline: the test-only fault header, and the
// Server-Timing header of a successful answer.
import type { FastifyRequest } from 'fastify';
import type { Timings } from '../jobs/pipeline.js';
import type { TaskFault } from '../pool/protocol.js';

/** ms to the µs, as the shortest decimal (toFixed(3) cost four times as much per answer) */
const ms = (x: number) => Math.round(x * 1000) / 1000;

/** `decodedBefore`: ms of decoding before the pipeline (the body's parse), added to its own */
export function serverTiming(t: Timings, decodedBefore = 0): string {
  return `decode;dur=${ms(decodedBefore + t.decode)}, queue;dur=${ms(t.queue)}, compute;dur=${ms(t.compute)}, encode;dur=${ms(t.encode)}`;
}

/** a test fault by its name (`crash-worker`, `hold`), whichever front end carried it */
export function faultNamed(name: unknown): TaskFault | null {
  if (name === 'crash-worker') return { kind: 'crash' };
  return name === 'hold' ? { kind: 'hold' } : null;
}

/** X-Test-Fault, honoured only when the app was built with faultInjection (tests) */
export function testFault(request: FastifyRequest): TaskFault | null {
  return faultNamed(request.headers['x-test-fault']);
}
