// reads a request body straight into a shared slab: the tensor bytes' one copy, from the socket's
// chunks into memory the workers can read. Enforces the byte limit as the bytes arrive (§4: early 413).
import type { Readable } from 'node:stream';
import { serviceError } from '../errors.js';
import type { Slab, SlabPool } from '../memory/slab-pool.js';

const CHUNKED_START = 64 * 1024; // first guess for a body without Content-Length

export function readBodyIntoSlab(payload: Readable, contentLength: string | undefined, limit: number, slabs: SlabPool): Promise<{ slab: Slab; length: number }> {
  const declared = contentLength === undefined ? NaN : Number(contentLength);
  if (declared > limit) return Promise.reject(serviceError('bodyTooLarge'));
  return new Promise((resolve, reject) => {
    let slab = slabs.acquire(Number.isNaN(declared) ? CHUNKED_START : Math.max(declared, 1));
    let bytes = new Uint8Array(slab.memory, slab.offset, slab.size);
    let received = 0;
    const finish = (err: Error | null) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
      if (err !== null) {
        slabs.release(slab);
        reject(err);
      }
    };
    const onData = (chunk: Buffer) => {
      if (received + chunk.length > limit) {
        finish(serviceError('bodyTooLarge'));
        return;
      }
      if (received + chunk.length > bytes.length) {
        if (!Number.isNaN(declared)) {
          finish(serviceError('bodyLonger'));
          return;
        }
        // chunked: grow by doubling, so the copies add up to less than one more body
        const grown = slabs.acquire(Math.min(Math.max(bytes.length * 2, received + chunk.length), limit));
        const grownBytes = new Uint8Array(grown.memory, grown.offset, grown.size);
        grownBytes.set(bytes.subarray(0, received));
        slabs.release(slab);
        slab = grown;
        bytes = grownBytes;
      }
      bytes.set(chunk, received);
      received += chunk.length;
    };
    const onEnd = () => {
      if (!Number.isNaN(declared) && received !== declared) {
        finish(serviceError('bodyShorter'));
        return;
      }
      finish(null);
      resolve({ slab, length: received });
    };
    const onError = (err: Error) => finish(serviceError('bodyInvalid', err.message));
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  });
}
