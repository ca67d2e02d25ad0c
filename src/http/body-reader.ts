// reads a request body. Its socket chunks are kept as they arrive (each counted in the memory budget,
// so a client that declared 60 MB and sent 1 KiB holds 1 KiB) and copied into shared memory once the
// body is complete: the tensor bytes' one copy into memory the workers can read. Enforces the byte
// limit as the bytes arrive (§4: early 413) and the idle limit between them (§5: 408).
import type { Readable } from 'node:stream';
import { serviceError } from '../errors.js';
import type { Slab, SlabPool } from '../memory/slab-pool.js';

export interface BodyLimits {
  maxBodyBytes: number;
  bodyIdleTimeoutMs: number;
}

/** the body in shared memory: bytes [slab.offset, slab.offset + length) */
export async function readBodyIntoSlab(payload: Readable, contentLength: string | undefined, limits: BodyLimits, slabs: SlabPool): Promise<{ slab: Slab; length: number }> {
  const { chunks, length } = await collectBody(payload, contentLength, limits, slabs);
  try {
    const slab = slabs.acquire(Math.max(length, 1));
    copyInto(new Uint8Array(slab.memory, slab.offset, length), chunks);
    return { slab, length };
  } finally {
    slabs.unhold(length);
  }
}

/** the body as text (JSON) */
export async function readBodyText(payload: Readable, contentLength: string | undefined, limits: BodyLimits, slabs: SlabPool): Promise<string> {
  const { chunks, length } = await collectBody(payload, contentLength, limits, slabs);
  try {
    return (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)).toString('utf8');
  } finally {
    slabs.unhold(length);
  }
}

/** the body's chunks, `length` bytes of them held in the budget: the caller unholds them */
function collectBody(payload: Readable, contentLength: string | undefined, limits: BodyLimits, slabs: SlabPool): Promise<{ chunks: Buffer[]; length: number }> {
  const declared = contentLength === undefined ? NaN : Number(contentLength);
  if (declared > limits.maxBodyBytes) return Promise.reject(serviceError('bodyTooLarge'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err: Error | null) => {
      clearTimeout(idle);
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
      payload.removeListener('close', onClose);
      if (err === null) return resolve({ chunks, length: received });
      slabs.unhold(received);
      chunks.length = 0;
      reject(err);
    };
    const idle = setTimeout(() => finish(serviceError('bodyStalled', limits.bodyIdleTimeoutMs)), limits.bodyIdleTimeoutMs);
    const onData = (chunk: Buffer) => {
      idle.refresh();
      if (received + chunk.length > limits.maxBodyBytes) return finish(serviceError('bodyTooLarge'));
      if (received + chunk.length > declared) return finish(serviceError('bodyLonger'));
      try {
        slabs.hold(chunk.length);
      } catch (err) {
        return finish(err as Error);
      }
      chunks.push(chunk);
      received += chunk.length;
    };
    const onEnd = () => {
      if (!Number.isNaN(declared) && received !== declared) return finish(serviceError('bodyShorter'));
      finish(null);
    };
    const onError = (err: Error) => finish(serviceError('bodyInvalid', err.message));
    // a request torn down before its end: the socket closed under it
    const onClose = () => finish(serviceError('bodyInvalid', 'the connection closed before the body ended'));
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.on('close', onClose);
    payload.resume();
  });
}

// V8 copies into a SharedArrayBuffer byte by byte when source and destination differ modulo 8, and
// socket chunks land at any phase: a 512 KiB copy runs at 2.2 GB/s that way, 15 GB/s in phase
// (scripts/measure-shared-copy.mjs). A chunk out of phase goes through this small ordinary buffer,
// placed at the destination's phase; the ordinary copy runs at 34 GB/s here.
const STAGING = 64 * 1024;
const staging = Buffer.allocUnsafeSlow(STAGING + 8);

/** `dest` starts 8-aligned in its memory; ordinary buffers' backing stores are at least 8-aligned */
function copyInto(dest: Uint8Array, chunks: readonly Buffer[]): void {
  let at = 0;
  for (const chunk of chunks) {
    const phase = (dest.byteOffset + at) % 8;
    if (chunk.byteOffset % 8 === phase) {
      dest.set(chunk, at);
      at += chunk.length;
      continue;
    }
    for (let from = 0; from < chunk.length; from += STAGING) {
      const piece = chunk.subarray(from, Math.min(from + STAGING, chunk.length));
      const piecePhase = (dest.byteOffset + at) % 8;
      piece.copy(staging, piecePhase);
      dest.set(staging.subarray(piecePhase, piecePhase + piece.length), at);
      at += piece.length;
    }
  }
}
