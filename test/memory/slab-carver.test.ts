// a batch's slab carver (src/memory/slab-carver.ts): its slabs never overlap, start on the granule and
// hold what was asked; a batch of equal items takes one chunk of exactly their size; an item too big
// to share a chunk gets a slab of its own; everything goes back with the lease, a 503 midway too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GRANULE } from '../../src/memory/block-allocator.js';
import { Lease } from '../../src/memory/lease.js';
import { CHUNK_BYTES, SlabCarver } from '../../src/memory/slab-carver.js';
import { createTensorMemory, type Slab } from '../../src/memory/tensor-memory.js';

const MiB = 1024 * 1024;
const roundUp = (bytes: number) => Math.ceil(Math.max(bytes, 1) / GRANULE) * GRANULE;

function disjoint(slabs: Slab[]): boolean {
  const sorted = [...slabs].sort((a, b) => a.offset - b.offset);
  return sorted.every((s, i) => i === 0 || sorted[i - 1].offset + sorted[i - 1].size <= s.offset);
}

describe('SlabCarver', () => {
  it('carves a batch of equal items out of one chunk of exactly their size, given back with the lease', () => {
    const memory = createTensorMemory(8 * MiB);
    const lease = new Lease(memory);
    const carver = new SlabCarver(memory, lease, 64);
    const slabs = Array.from({ length: 64 }, () => carver.acquire(3100));
    expect(memory.inUseBytes).toBe(64 * roundUp(3100));
    expect(disjoint(slabs)).toBe(true);
    expect(slabs.every((s) => s.size >= 3100 && s.offset % GRANULE === 0)).toBe(true);
    // one chunk: the slabs follow each other
    expect(slabs.every((s, i) => i === 0 || s.offset === slabs[i - 1].offset + slabs[i - 1].size)).toBe(true);
    lease.release();
    expect(memory.inUseBytes).toBe(0);
  });

  it('gives an item over a quarter of a chunk a slab of its own and keeps carving the small ones', () => {
    const memory = createTensorMemory(16 * MiB);
    const lease = new Lease(memory);
    const carver = new SlabCarver(memory, lease, 3);
    const small = carver.acquire(1000);
    const big = carver.acquire(CHUNK_BYTES / 4 + 1);
    const after = carver.acquire(1000);
    expect(big.size).toBe(roundUp(CHUNK_BYTES / 4 + 1));
    expect(after.offset).toBe(small.offset + small.size);
    expect(memory.inUseBytes).toBe(3 * roundUp(1000) + big.size);
    lease.release();
    expect(memory.inUseBytes).toBe(0);
  });

  it('throws the 503 when the memory is full, and what was carved before goes back with the lease', () => {
    const memory = createTensorMemory(2 * MiB);
    const lease = new Lease(memory);
    const carver = new SlabCarver(memory, lease, 4);
    carver.acquire(MiB);
    expect(() => carver.acquire(1.5 * MiB)).toThrow(expect.objectContaining({ code: 'NORM_ERR_OVERLOADED', statusCode: 503 }) as Error);
    lease.release();
    expect(memory.inUseBytes).toBe(0);
  });

  it('under any sequence of sizes: disjoint, aligned, big enough, inside the memory, all given back', () => {
    fc.assert(fc.property(
      fc.array(fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 600 * 1024 })), { minLength: 1, maxLength: 80 }),
      fc.integer({ min: 0, max: 100 }),
      (sizes, hint) => {
        const memory = createTensorMemory(256 * MiB);
        const lease = new Lease(memory);
        const carver = new SlabCarver(memory, lease, hint);
        const slabs = sizes.map((bytes) => {
          const slab = carver.acquire(bytes);
          expect(slab.size).toBeGreaterThanOrEqual(bytes);
          expect(slab.offset % GRANULE).toBe(0);
          expect(slab.offset + slab.size).toBeLessThanOrEqual(slab.memory.byteLength);
          return slab;
        });
        expect(disjoint(slabs)).toBe(true);
        lease.release();
        expect(memory.inUseBytes).toBe(0);
      },
    ), { numRuns: 200 });
  });
});
