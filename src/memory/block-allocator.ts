// hands out blocks of an address range [start, end): best fit from a free list sorted by address,
// splitting a larger free block and coalescing neighbours on release. A freed block serves any later
// request that fits, so no sequence of requests can leave free memory unusable by size (the size-class
// lists this replaced kept a burst's 64 MiB blocks for 64 MiB requests only). Bookkeeping lives here,
// outside the memory, so a worker writing tensor data can never corrupt it. Only the free runs are
// kept: a block's owner gives its size back with it (a map of the blocks handed out, set and deleted
// twice a small request, reallocated its table each time: ~0.6 µs a request, perf), and a block that
// is not between two free runs, a double release, is refused all the same.
//
// @thi.ng/malloc's MemPool was weighed: it keeps its block headers inside the buffer, next to the tensor
// data the workers write, and takes a fixed buffer, where ours grows a wasm memory as blocks reach it.

/** blocks start and end on this many bytes: a cache line, more than any SIMD load or Float64Array needs */
export const GRANULE = 64;

interface Free {
  offset: number;
  size: number;
}

export class BlockAllocator {
  /** free blocks, sorted by offset, never touching each other (they would have been merged) */
  private readonly free: Free[];
  private usedBytes = 0;
  private readonly start: number;
  private readonly end: number;

  constructor(start: number, end: number) {
    this.start = roundUp(start);
    this.end = this.start + roundDown(Math.max(0, end - this.start));
    this.free = this.end > this.start ? [{ offset: this.start, size: this.end - this.start }] : [];
  }

  /** the offset of a block of at least `bytes` (rounded up to the granule), or null when none fits */
  allocate(bytes: number): { offset: number; size: number } | null {
    const size = roundUp(Math.max(bytes, 1));
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const candidate = this.free[i].size;
      // best fit, the lower address on a tie: small requests fill holes and the top stays whole
      if (candidate >= size && (best < 0 || candidate < this.free[best].size)) best = i;
    }
    if (best < 0) return null;
    const block = this.free[best];
    const offset = block.offset;
    if (block.size === size) this.removeFree(best);
    else {
      block.offset += size;
      block.size -= size;
    }
    this.usedBytes += size;
    return { offset, size };
  }

  /**
   * grows the block at `offset` of `size` bytes in place to at least `bytes`, when the free run right
   * after it is long enough; its new size, or null (the caller then moves it)
   */
  extend(offset: number, size: number, bytes: number): number | null {
    const i = this.handedOut(offset, size);
    const want = roundUp(bytes);
    if (want <= size) return size;
    const next = i < this.free.length ? this.free[i] : null;
    if (next === null || next.offset !== offset + size || next.size < want - size) return null;
    if (next.size === want - size) this.removeFree(i);
    else {
      next.offset += want - size;
      next.size -= want - size;
    }
    this.usedBytes += want - size;
    return want;
  }

  /** gives back the block at `offset` of `size` bytes (as allocate or extend gave it) */
  release(offset: number, size: number): void {
    const lo = this.handedOut(offset, size);
    this.usedBytes -= size;
    const before = lo > 0 ? this.free[lo - 1] : null;
    const after = lo < this.free.length ? this.free[lo] : null;
    const joinsBefore = before !== null && before.offset + before.size === offset;
    const joinsAfter = after !== null && offset + size === after.offset;
    if (joinsBefore && joinsAfter) {
      before.size += size + after.size;
      this.removeFree(lo);
    } else if (joinsBefore) before.size += size;
    else if (joinsAfter) {
      after.offset = offset;
      after.size += size;
    } else this.insertFree(lo, { offset, size });
  }

  // the free list's edits, by hand: splice makes an array of what it removes on every call, and a
  // small request's two blocks cost two such edits each time
  private removeFree(i: number): void {
    const free = this.free;
    for (let j = i + 1; j < free.length; j++) free[j - 1] = free[j];
    free.pop();
  }

  private insertFree(i: number, block: Free): void {
    const free = this.free;
    free.push(block);
    for (let j = free.length - 1; j > i; j--) free[j] = free[j - 1];
    free[i] = block;
  }

  /** the index of the first free block at or above `offset`, once [offset, offset + size) is checked
   *  to be a block this could have handed out: in range, on the granule and overlapping no free run.
   *  Anything else, a double release above all, is a bug, not input: it throws */
  private handedOut(offset: number, size: number): number {
    const lo = this.firstFreeAt(offset);
    const before = lo > 0 ? this.free[lo - 1] : null;
    const after = lo < this.free.length ? this.free[lo] : null;
    const fits = offset >= this.start && offset + size <= this.end && size > 0 && offset % GRANULE === 0 && size % GRANULE === 0;
    if (!fits || (before !== null && before.offset + before.size > offset) || (after !== null && offset + size > after.offset)) {
      throw new Error(`block allocator: no block at ${offset} of ${size} bytes`);
    }
    return lo;
  }

  /** the index of the first free block at or above `offset` */
  private firstFreeAt(offset: number): number {
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.free[mid].offset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** bytes handed out and not yet given back */
  get inUseBytes(): number {
    return this.usedBytes;
  }

  /** the largest block allocate() could hand out now */
  get largestFree(): number {
    return this.free.reduce((largest, block) => Math.max(largest, block.size), 0);
  }
}

const roundUp = (bytes: number) => Math.ceil(bytes / GRANULE) * GRANULE;
const roundDown = (bytes: number) => Math.floor(bytes / GRANULE) * GRANULE;
