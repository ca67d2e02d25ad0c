// reads a request body as its socket chunks arrive, enforcing the byte limit as the bytes arrive
// (§4: early 413) and, through the app's body watch (body-watch.ts), the idle limit between them and
// the minimum rate (§5: 408). Memory follows the bytes that arrived, never the declared
// Content-Length: a client that declared 60 MB and sent 1 KiB holds about 1 KiB.
//  - msgpack bodies go into a shared slab that grows as they arrive (first to twice what arrived,
//    then by four times, never past the declared length), each chunk copied while it is still in
//    cache: the tensor bytes' one copy into memory the workers can read. A slab that cannot grow in
//    place moves (a copy within shared memory, in phase); growing by four keeps those copies under a
//    third of the body (by two they cost 2 ms of a 16 MiB request with 4 concurrent uploads, measured).
//  - JSON bodies the same way: the workers parse the long ones where they lie.
import type { Readable } from 'node:stream';
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import { bodyWatchFor, type Arriving } from './body-watch.js';
import type { Slab, TensorMemory } from '../memory/tensor-memory.js';

export type BodyLimits = Pick<Config, 'maxBodyBytes' | 'bodyIdleTimeoutMs' | 'bodyMinRateGraceMs' | 'bodyMinBytesPerSecond'>;

/** where arriving chunks go; `accept` may throw (a 503 for memory), then `abort` gives all back */
interface Sink<T> {
  accept(chunk: Buffer, received: number): void;
  finish(length: number): T;
  abort(): void;
}

/** called once: the error (the slab already given back), or the body */
export type BodyDone<T> = (err: Error | null, body?: T) => void;

/** the body in shared memory: bytes [slab.offset, slab.offset + length). A callback, not a promise:
 *  with fastify's callback parsers a small request's body costs no promise on its way */
export function readBodyIntoSlab(payload: Readable, contentLength: string | undefined, limits: BodyLimits, slabs: TensorMemory, done: BodyDone<{ slab: Slab; length: number }>): void {
  const declared = contentLength === undefined ? Infinity : Number(contentLength);
  let slab: Slab | null = null;
  receive(payload, contentLength, limits, done, {
    accept(chunk, received) {
      const needed = received + chunk.length;
      if (slab === null) slab = slabs.acquire(Math.min(declared, 2 * needed));
      else if (needed > slab.size) slab = slabs.grow(slab, Math.min(declared, Math.max(needed, 4 * slab.size)), received);
      copyInPhase(chunk, new Uint8Array(slab.memory, slab.offset + received, chunk.length));
    },
    finish(length) {
      return { slab: slab ?? slabs.acquire(1), length };
    },
    abort() {
      if (slab !== null) slabs.release(slab);
      slab = null;
    },
  });
}

function receive<T>(payload: Readable, contentLength: string | undefined, limits: BodyLimits, done: BodyDone<T>, sink: Sink<T>): void {
  const declared = contentLength === undefined ? NaN : Number(contentLength);
  if (declared > limits.maxBodyBytes) return done(serviceError('bodyTooLarge'));
  const watch = bodyWatchFor(limits);
  // what the watch sweeps (http/body-watch.ts): the count of bytes in, and the way to give up
  const arriving: Arriving = { received: 0, fail: (err) => finish(err), slot: -1 };
  const finish = (err: Error | null) => {
    watch.delete(arriving);
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    payload.removeListener('close', onClose);
    const received = arriving.received;
    if (err === null) {
      let body: T;
      try {
        body = sink.finish(received);
      } catch (finishErr) {
        sink.abort();
        return done(finishErr as Error);
      }
      return done(null, body);
    }
    sink.abort();
    done(err);
  };
  const onData = (chunk: Buffer) => {
    const received = arriving.received;
    if (received + chunk.length > limits.maxBodyBytes) return finish(serviceError('bodyTooLarge'));
    if (received + chunk.length > declared) return finish(serviceError('bodyLonger'));
    try {
      sink.accept(chunk, received);
    } catch (err) {
      return finish(err as Error);
    }
    arriving.received = received + chunk.length;
  };
  const onEnd = () => finish(!Number.isNaN(declared) && arriving.received !== declared ? serviceError('bodyShorter') : null);
  const onError = (err: Error) => finish(serviceError('bodyInvalid', err.message));
  // a request torn down before its end: the socket closed under it
  const onClose = () => finish(serviceError('bodyInvalid', 'the connection closed before the body ended'));
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.on('close', onClose);
  watch.add(arriving);
  payload.resume();
}

// V8 copies into a SharedArrayBuffer byte by byte when source and destination differ modulo 8, and
// socket chunks land at any phase: a 512 KiB copy runs at 2.2 GB/s that way, 15 GB/s in phase
// (scripts/measure-shared-copy.mjs). A chunk out of phase goes through this small ordinary buffer,
// placed at the destination's phase; the ordinary copy of a chunk still in cache costs little.
const STAGING = 64 * 1024;
const staging = Buffer.allocUnsafeSlow(STAGING + 8);

/** ordinary buffers' backing stores, and the shared memory, are at least 8-aligned */
function copyInPhase(chunk: Buffer, dest: Uint8Array): void {
  if (chunk.byteOffset % 8 === dest.byteOffset % 8) {
    dest.set(chunk);
    return;
  }
  for (let from = 0; from < chunk.length; from += STAGING) {
    const piece = chunk.subarray(from, Math.min(from + STAGING, chunk.length));
    const phase = (dest.byteOffset + from) % 8;
    piece.copy(staging, phase);
    dest.set(staging.subarray(phase, phase + piece.length), from);
  }
}
