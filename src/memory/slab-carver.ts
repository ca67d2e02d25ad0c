// a batch's job slabs, carved one after another out of a few larger slabs that the request's lease
// holds: a batch of 64 small items took 64 slabs from the best-fit allocator and gave back 64, ~0.8 µs
// apiece with its bookkeeping (a profile of /v1/batch), where carving costs an addition. A chunk is
// sized for the rest of the batch if its items are alike (capped), so a batch of equal items takes
// one; an item too big to share a chunk gets a slab of its own, as it would alone.
import { GRANULE } from './block-allocator.js';
import type { Lease } from './lease.js';
import type { Slab, TensorMemory } from './tensor-memory.js';

/** what a job's slab comes from: the tensor memory itself (one slab a job), or a SlabCarver */
export type SlabSource = Pick<TensorMemory, 'acquire'>;

/** the largest chunk carved up; an item over a quarter of it gets its own slab, so a chunk left
 *  behind for a larger item wastes less than a quarter of a chunk */
export const CHUNK_BYTES = 1024 * 1024;

export class SlabCarver implements SlabSource {
  private chunk: Slab | null = null;
  private used = 0;

  /** `items`: how many slabs the batch will ask for (a hint for the chunk's size) */
  constructor(private readonly slabs: TensorMemory, private readonly lease: Lease, private items: number) {}

  /** a slab of at least `bytes`, starting on a granule; throws as TensorMemory.acquire does (what was
   *  carved before stays held by the lease) */
  acquire(bytes: number): Slab {
    const size = Math.ceil(Math.max(bytes, 1) / GRANULE) * GRANULE;
    const left = Math.max(1, this.items--); // this item and those after it
    if (size > CHUNK_BYTES / 4) return this.held(this.slabs.acquire(size));
    if (this.chunk === null || this.used + size > this.chunk.size) {
      this.chunk = this.held(this.slabs.acquire(Math.min(size * left, CHUNK_BYTES)));
      this.used = 0;
    }
    const slab = { memory: this.chunk.memory, offset: this.chunk.offset + this.used, size };
    this.used += size;
    return slab;
  }

  private held(slab: Slab): Slab {
    this.lease.add(slab);
    return slab;
  }
}
