import { serviceError } from '../errors.js';
import { BlockAllocator, GRANULE } from './block-allocator.js';

// request memory: slabs carved out of one shared WebAssembly.Memory by a best-fit allocator
// (block-allocator.ts). The memory's buffer is a SharedArrayBuffer the workers see too, so the wasm
// kernels read and write request tensors in place. The memory grows as slabs reach further and never
// shrinks; growing it costs milliseconds, a reused range nothing. Slabs hold stale bytes: every user
// writes before it reads.
//
// One budget, `limitBytes`, bounds everything requests hold: their slabs (bodies are read into slabs
// as they arrive, JSON ones too). Past it, the request gets a 503 instead of the process outgrowing
// its container.

const PAGE = 64 * 1024; // wasm page
/** the area below the slabs for values made once and read by every later request (kernels/const-params.ts) */
export const KEPT_AREA_BYTES = 1024 * 1024;
/** wasm32 addresses end at 4 GiB; one page short of it, so a kernel's end pointer never wraps to 0 */
export const MAX_TENSOR_MEMORY = 65535 * PAGE;

export interface Slab {
  /** the memory's buffer as it was when the slab was handed out (it covers the slab) */
  memory: SharedArrayBuffer;
  /** byte offset of the slab in the memory: a pointer for the wasm kernels */
  offset: number;
  size: number;
}

export interface TensorMemory {
  readonly memory: WebAssembly.Memory;
  /** a slab of at least `bytes` bytes; throws the 503 `memoryExhausted` when the budget or the memory is full */
  acquire(bytes: number): Slab;
  /**
   * the slab grown to at least `bytes`, its first `keep` bytes kept: in place when the memory after it
   * is free, else moved (the old slab is given back). Throws like acquire, leaving `slab` as it was.
   */
  grow(slab: Slab, bytes: number, keep: number): Slab;
  /** give a slab back once nothing (no worker, no socket write) can touch it again */
  release(slab: Slab): void;
  /** the budget: slabs in use never exceed it */
  readonly limitBytes: number;
  /** bytes of the shared memory grown so far (in use or free for reuse) */
  readonly reservedBytes: number;
  /** bytes of the slabs handed out and not yet given back */
  readonly inUseBytes: number;
  /** [offset, offset + size): outside the slabs and the budget, never handed out by acquire */
  readonly keptArea: { memory: SharedArrayBuffer; offset: number; size: number };
}

export function createTensorMemory(limitBytes: number): TensorMemory {
  // offset 0 stays unused because the wasm kernels read a null pointer as 0; the kept area follows it
  const start = GRANULE + KEPT_AREA_BYTES;
  const limit = Math.min(limitBytes, MAX_TENSOR_MEMORY - start);
  const allocator = new BlockAllocator(start, start + limit);
  const maximum = Math.ceil((start + limit) / PAGE);
  const memory = new WebAssembly.Memory({ initial: Math.ceil(start / PAGE), maximum, shared: true });
  // the buffer read once per growth, not per slab: the getter of a shared memory's buffer costs
  // ~0.2 µs a call, and only this thread grows the memory
  let buffer = memory.buffer as unknown as SharedArrayBuffer;
  /** grows the memory to cover [0, end); false when the system refuses the pages */
  const cover = (end: number): boolean => {
    const have = buffer.byteLength;
    if (end <= have) return true;
    try {
      memory.grow(Math.ceil((end - have) / PAGE));
      buffer = memory.buffer as unknown as SharedArrayBuffer;
      return true;
    } catch {
      return false;
    }
  };
  const slabAt = (offset: number, size: number): Slab => ({ memory: buffer, offset, size });
  const pool: TensorMemory = {
    memory,
    acquire(bytes) {
      const block = allocator.allocate(bytes);
      if (block === null) throw serviceError('memoryExhausted');
      // the allocator's range is the budget; the system may still refuse the pages (as full as the budget)
      if (!cover(block.offset + block.size)) {
        allocator.release(block.offset, block.size);
        throw serviceError('memoryExhausted');
      }
      return slabAt(block.offset, block.size);
    },
    grow(slab, bytes, keep) {
      if (bytes <= slab.size) return slab;
      // pages first, so a grown block is always covered (growing the memory past a block that then
      // cannot extend costs address space only: untouched pages are not resident)
      if (cover(slab.offset + bytes + GRANULE)) {
        const size = allocator.extend(slab.offset, slab.size, bytes);
        if (size !== null) return slabAt(slab.offset, size);
      }
      const moved = pool.acquire(bytes);
      new Uint8Array(moved.memory, moved.offset, keep).set(new Uint8Array(moved.memory, slab.offset, keep));
      allocator.release(slab.offset, slab.size);
      return moved;
    },
    release(slab) {
      allocator.release(slab.offset, slab.size);
    },
    limitBytes: limit,
    get reservedBytes() {
      return buffer.byteLength;
    },
    get inUseBytes() {
      return allocator.inUseBytes;
    },
    keptArea: { memory: buffer, offset: GRANULE, size: KEPT_AREA_BYTES },
  };
  return pool;
}
