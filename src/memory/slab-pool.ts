import { serviceError } from '../errors.js';
import { BlockAllocator, GRANULE } from './block-allocator.js';

// request memory: slabs carved out of one shared WebAssembly.Memory by a best-fit allocator
// (block-allocator.ts). The memory's buffer is a SharedArrayBuffer the workers see too, so the wasm
// kernels read and write request tensors in place. The memory grows as slabs reach further and never
// shrinks; growing it costs milliseconds, a reused range nothing. Slabs hold stale bytes: every user
// writes before it reads.
//
// One budget, `limitBytes`, bounds everything requests hold: slabs, and the ordinary memory a body
// holds while it arrives (its socket chunks, `hold`). Past it, the request gets a 503 instead of the
// process outgrowing its container.

const PAGE = 64 * 1024; // wasm page
/** wasm32 addresses end at 4 GiB; one page short of it, so a kernel's end pointer never wraps to 0 */
export const MAX_TENSOR_MEMORY = 65535 * PAGE;

export interface Slab {
  /** the memory's buffer as it was when the slab was handed out (it covers the slab) */
  memory: SharedArrayBuffer;
  /** byte offset of the slab in the memory: a pointer for the wasm kernels */
  offset: number;
  size: number;
}

export interface SlabPool {
  readonly memory: WebAssembly.Memory;
  /** a slab of at least `bytes` bytes; throws the 503 `memoryExhausted` when the budget or the memory is full */
  acquire(bytes: number): Slab;
  /** give a slab back once nothing (no worker, no socket write) can touch it again */
  release(slab: Slab): void;
  /** counts `bytes` of ordinary memory held for a request against the budget; throws like acquire */
  hold(bytes: number): void;
  /** gives back what hold counted */
  unhold(bytes: number): void;
  /** the budget: slabs in use plus bytes held never exceed it */
  readonly limitBytes: number;
  /** bytes of the shared memory grown so far (in use or free for reuse) */
  readonly reservedBytes: number;
  /** bytes of the slabs handed out and not yet given back */
  readonly inUseBytes: number;
  /** ordinary bytes held for requests (bodies still arriving) */
  readonly heldBytes: number;
}

export function createSlabPool(limitBytes: number): SlabPool {
  const limit = Math.min(limitBytes, MAX_TENSOR_MEMORY - GRANULE);
  // offset 0 stays unused because the wasm kernels read a null pointer as 0
  const allocator = new BlockAllocator(GRANULE, GRANULE + limit);
  const maximum = Math.ceil((GRANULE + limit) / PAGE);
  const memory = new WebAssembly.Memory({ initial: 1, maximum, shared: true });
  let held = 0;
  const fits = (bytes: number) => allocator.inUseBytes + held + bytes <= limit;
  return {
    memory,
    acquire(bytes) {
      const block = allocator.allocate(bytes);
      if (block === null) throw serviceError('memoryExhausted');
      if (!fits(0)) {
        // the block fits the memory, but with the bytes held for arriving bodies it exceeds the budget
        allocator.release(block.offset);
        throw serviceError('memoryExhausted');
      }
      const end = block.offset + block.size;
      const have = memory.buffer.byteLength;
      if (end > have) {
        try {
          memory.grow(Math.ceil((end - have) / PAGE));
        } catch {
          // the system refused the pages: as full as the budget
          allocator.release(block.offset);
          throw serviceError('memoryExhausted');
        }
      }
      return { memory: memory.buffer as unknown as SharedArrayBuffer, offset: block.offset, size: block.size };
    },
    release(slab) {
      allocator.release(slab.offset);
    },
    hold(bytes) {
      if (!fits(bytes)) throw serviceError('memoryExhausted');
      held += bytes;
    },
    unhold(bytes) {
      held -= bytes;
    },
    limitBytes: limit,
    get reservedBytes() {
      return memory.buffer.byteLength;
    },
    get inUseBytes() {
      return allocator.inUseBytes;
    },
    get heldBytes() {
      return held;
    },
  };
}
