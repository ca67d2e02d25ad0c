// what the Fastify dialects do around the pipeline: the test-only fault header, and the
// Server-Timing header of a successful answer.
import type { FastifyRequest } from 'fastify';
import type { Timings } from '../jobs/pipeline.js';
import type { TaskFault } from '../pool/protocol.js';

// ms to the µs with three decimals, as toFixed(3) wrote them, from integers (toFixed cost 0.4 µs an
// answer, this 0.2: small integers' text is cached)
const THOUSANDTHS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const ms = (x: number) => {
  const n = Math.max(0, Math.round(x * 1000));
  return `${Math.floor(n / 1000)}.${THOUSANDTHS[n % 1000]}`;
};

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
