// a packed answer laid out in one slab of the request's: its small pieces (msgpack headers) written
// there, each tensor's bytes copied there by the kernels' memory.copy, the whole sent as one view of
// the slab. A JavaScript copy out of shared memory goes byte by byte unless both ends agree modulo 8
// (V8's relaxed copy: 1.6 GB/s where memory.copy runs 35, measured on 3 KiB tensors), and a packer
// copies every tensor that way; here nothing is joined in ordinary memory.
import type { HeldBytes } from '../codec/write-tensor.js';
import type { WasmKernels } from '../kernels/wasm-kernels.js';
import type { Lease } from '../memory/lease.js';
import type { TensorMemory } from '../memory/tensor-memory.js';

/** bytes to write, or bytes already in the shared memory */
export type BytePiece = Buffer | HeldBytes;

/** an answer as pieces, in order (AnswerFormat.encode) */
export interface GatheredAnswer {
  pieces: BytePiece[];
}

/** the pieces one after the other in a new slab of the lease's; throws the 503 `memoryExhausted` past the budget */
export function layOutAnswer(pieces: BytePiece[], slabs: TensorMemory, lease: Lease, wasm: WasmKernels): Buffer {
  let total = 0;
  for (const piece of pieces) total += piece.length;
  const slab = slabs.acquire(total);
  lease.add(slab);
  const answer = Buffer.from(slab.memory, slab.offset, total);
  let at = 0;
  for (const piece of pieces) {
    if (Buffer.isBuffer(piece)) answer.set(piece, at);
    else wasm.copyBytes(slab.offset + at, piece.byteOffset, piece.length);
    at += piece.length;
  }
  return answer;
}
