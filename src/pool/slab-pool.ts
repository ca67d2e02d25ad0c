// reusable SharedArrayBuffers by size class: a fresh 16 MiB one costs milliseconds to
// allocate and zero, a reused one nothing. Slabs hold stale bytes; every user writes before it reads.

const MIN_CLASS = 1 << 12; // 4 KiB

export interface SlabPool {
  /** a slab of at least `bytes` bytes (its byteLength may be larger) */
  acquire(bytes: number): SharedArrayBuffer;
  /** give a slab back once nothing (no worker, no socket write) can touch it again */
  release(slab: SharedArrayBuffer): void;
  readonly cachedBytes: number;
}

function sizeClass(bytes: number): number {
  let size = MIN_CLASS;
  while (size < bytes) size *= 2;
  return size;
}

export function createSlabPool(maxCachedBytes: number): SlabPool {
  const free = new Map<number, SharedArrayBuffer[]>();
  let cachedBytes = 0;
  return {
    acquire(bytes) {
      const size = sizeClass(bytes);
      const slab = free.get(size)?.pop();
      if (slab !== undefined) {
        cachedBytes -= size;
        return slab;
      }
      return new SharedArrayBuffer(size);
    },
    release(slab) {
      const size = slab.byteLength;
      // only our own sizes come back; beyond the cap the garbage collector takes it
      if (size !== sizeClass(size) || cachedBytes + size > maxCachedBytes) return;
      let list = free.get(size);
      if (list === undefined) free.set(size, (list = []));
      list.push(slab);
      cachedBytes += size;
    },
    get cachedBytes() {
      return cachedBytes;
    },
  };
}
