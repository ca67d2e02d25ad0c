// hands out blocks of an address range [start, end): best fit from a free list sorted by address,
// splitting a larger free block and coalescing neighbours on release. A freed block serves any later
// request that fits, so no sequence of requests can leave free memory unusable by size (the size-class
// lists this replaced kept a burst's 64 MiB blocks for 64 MiB requests only). Bookkeeping lives here,
// outside the memory, so a worker writing tensor data can never corrupt it. Only the free runs are
// kept: a block's owner gives its size back with it (a map of the blocks handed out, set and deleted
// twice a small request, reallocated its table each time: ~0.6 µs a request, perf), and a block that
// is not between two free runs, a double release, is refused all the same.
//
// The free runs count granules, not bytes: a 4 GiB range's top run in bytes is past V8's small
// integers (2^31), so its field held a double, and object literals of the same keys share V8's maps:
// the `{ offset, size }` handed out inherited the double field, then slabs, job offsets and the free
// runs' offsets did too, each read boxing a number and the code optimized for small integers
// deoptimizing (`--trace-generalization` and `--trace-deopt` after one 16 MiB request). In granules
// every count is a small integer, and the runs' keys are their own.
//
// @thi.ng/malloc's MemPool was weighed: it keeps its block headers inside the buffer, next to the tensor
// data the workers write, and takes a fixed buffer, where ours grows a wasm memory as blocks reach it.

/** blocks start and end on this many bytes: a cache line, more than any SIMD load or Float64Array needs */
export const GRANULE = 64;

/** a free run: granules from `first`, `count` of them */
interface Free {
  first: number;
  count: number;
}

export class BlockAllocator {
  /** free runs, sorted by address, never touching each other (they would have been merged) */
  private readonly free: Free[];
  private usedBytes = 0;
  /** the range in granules: [first, last) */
  private readonly first: number;
  private readonly last: number;

  constructor(start: number, end: number) {
    this.first = Math.ceil(start / GRANULE);
    this.last = Math.max(this.first, Math.floor(end / GRANULE));
    this.free = this.last > this.first ? [{ first: this.first, count: this.last - this.first }] : [];
  }

  /** the offset of a block of at least `bytes` (rounded up to the granule), or null when none fits */
  allocate(bytes: number): { offset: number; size: number } | null {
    const count = granules(Math.max(bytes, 1));
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const candidate = this.free[i].count;
      // best fit, the lower address on a tie: small requests fill holes and the top stays whole
      if (candidate >= count && (best < 0 || candidate < this.free[best].count)) best = i;
    }
    if (best < 0) return null;
    const run = this.free[best];
    const first = run.first;
    if (run.count === count) this.removeFree(best);
    else {
      run.first += count;
      run.count -= count;
    }
    this.usedBytes += count * GRANULE;
    return { offset: first * GRANULE, size: count * GRANULE };
  }

  /**
   * grows the block at `offset` of `size` bytes in place to at least `bytes`, when the free run right
   * after it is long enough; its new size, or null (the caller then moves it)
   */
  extend(offset: number, size: number, bytes: number): number | null {
    const i = this.handedOut(offset, size);
    const first = offset / GRANULE;
    const count = size / GRANULE;
    const more = granules(bytes) - count;
    if (more <= 0) return size;
    const next = i < this.free.length ? this.free[i] : null;
    if (next === null || next.first !== first + count || next.count < more) return null;
    if (next.count === more) this.removeFree(i);
    else {
      next.first += more;
      next.count -= more;
    }
    this.usedBytes += more * GRANULE;
    return (count + more) * GRANULE;
  }

  /** gives back the block at `offset` of `size` bytes (as allocate or extend gave it) */
  release(offset: number, size: number): void {
    const lo = this.handedOut(offset, size);
    this.usedBytes -= size;
    const first = offset / GRANULE;
    const count = size / GRANULE;
    const before = lo > 0 ? this.free[lo - 1] : null;
    const after = lo < this.free.length ? this.free[lo] : null;
    const joinsBefore = before !== null && before.first + before.count === first;
    const joinsAfter = after !== null && first + count === after.first;
    if (joinsBefore && joinsAfter) {
      before.count += count + after.count;
      this.removeFree(lo);
    } else if (joinsBefore) before.count += count;
    else if (joinsAfter) {
      after.first = first;
      after.count += count;
    } else this.insertFree(lo, { first, count });
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
    const first = offset / GRANULE;
    const end = first + size / GRANULE;
    const fits = Number.isInteger(first) && Number.isInteger(end) && end > first && first >= this.first && end <= this.last;
    const lo = fits ? this.firstFreeAt(first) : 0;
    const before = lo > 0 ? this.free[lo - 1] : null;
    const after = lo < this.free.length ? this.free[lo] : null;
    if (!fits || (before !== null && before.first + before.count > first) || (after !== null && end > after.first)) {
      throw new Error(`block allocator: no block at ${offset} of ${size} bytes`);
    }
    return lo;
  }

  /** the index of the first free run at or above granule `first` */
  private firstFreeAt(first: number): number {
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.free[mid].first < first) lo = mid + 1;
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
    return this.free.reduce((largest, run) => Math.max(largest, run.count), 0) * GRANULE;
  }
}

/** the granules that hold `bytes` */
const granules = (bytes: number) => Math.ceil(bytes / GRANULE);
