import { serviceError } from '../errors.js';

// request memory: slabs carved out of one shared WebAssembly.Memory, reused by size class.
// The memory's buffer is a SharedArrayBuffer the workers see too, so the wasm kernels can read
// and write request tensors in place. A fresh 16 MiB allocation costs milliseconds; a reused one
// nothing. Slabs hold stale bytes: every user writes before it reads.

const PAGE = 64 * 1024; // wasm page
const MIN_CLASS = 4 * 1024; // 4 KiB

export interface Slab {
  /** the memory's buffer as it was when the slab was handed out (it covers the slab) */
  memory: SharedArrayBuffer;
  /** byte offset of the slab in the memory: a pointer for the wasm kernels */
  offset: number;
  size: number;
}

export interface SlabPool {
  readonly memory: WebAssembly.Memory;
  /** a slab of at least `bytes` bytes (its size may be larger) */
  acquire(bytes: number): Slab;
  /** give a slab back once nothing (no worker, no socket write) can touch it again */
  release(slab: Slab): void;
  /** bytes of the memory handed out or cached */
  readonly reservedBytes: number;
  /** bytes of the slabs handed out and not yet given back */
  readonly inUseBytes: number;
}

function sizeClass(bytes: number): number {
  let size = MIN_CLASS;
  while (size < bytes) size *= 2;
  return size;
}

/** `maxBytes` caps the memory (wasm32: 4 GiB); past it, acquire throws and the request gets a 503 */
export function createSlabPool(maxBytes: number): SlabPool {
  // one page short of wasm32's 4 GiB: the kernels loop to an end pointer, which must not wrap to 0
  const maximum = Math.min(65535, Math.floor(maxBytes / PAGE));
  const memory = new WebAssembly.Memory({ initial: 1, maximum, shared: true });
  const free = new Map<number, number[]>();
  // bump pointer: everything below was handed out at least once; offset 0 stays unused because
  // the wasm kernels read a null pointer as 0
  let top = MIN_CLASS;
  let inUse = 0;
  return {
    memory,
    acquire(bytes) {
      const size = sizeClass(bytes);
      let offset = free.get(size)?.pop();
      if (offset === undefined) {
        // size classes are powers of two and start aligned, so blocks stay aligned to their size
        offset = Math.ceil(top / Math.min(size, PAGE)) * Math.min(size, PAGE);
        const end = offset + size;
        const have = memory.buffer.byteLength;
        if (end > have) {
          const pages = Math.ceil((end - have) / PAGE);
          if (have / PAGE + pages > maximum) {
            throw serviceError('memoryExhausted');
          }
          memory.grow(pages);
        }
        top = end;
      }
      inUse += size;
      return { memory: memory.buffer as unknown as SharedArrayBuffer, offset, size };
    },
    release(slab) {
      let list = free.get(slab.size);
      if (list === undefined) free.set(slab.size, (list = []));
      list.push(slab.offset);
      inUse -= slab.size;
    },
    get reservedBytes() {
      return top;
    },
    get inUseBytes() {
      return inUse;
    },
  };
}
