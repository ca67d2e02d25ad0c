// the allocator under random acquire/release sequences (fast-check): blocks never overlap, stay in
// range and on the granule, and once everything is given back the largest request that fits is served.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockAllocator, GRANULE } from '../../src/memory/block-allocator.js';

const START = GRANULE;
const END = GRANULE + 1024 * GRANULE; // 64 KiB of room

type Step = { acquire: number } | { release: number } | { extend: number; by: number };

const steps = fc.array(
  fc.oneof(
    fc.record({ acquire: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 40 * 1024 })) }),
    fc.record({ release: fc.nat() }),
    fc.record({ extend: fc.nat(), by: fc.integer({ min: 1, max: 8 * 1024 }) }),
  ),
  { maxLength: 300 },
);

function disjoint(blocks: { offset: number; size: number }[]): boolean {
  const sorted = [...blocks].sort((a, b) => a.offset - b.offset);
  return sorted.every((b, i) => i === 0 || sorted[i - 1].offset + sorted[i - 1].size <= b.offset);
}

describe('BlockAllocator', () => {
  it('never hands out overlapping blocks, and serves the whole range again once all is released', () => {
    fc.assert(fc.property(steps, (sequence: Step[]) => {
      const allocator = new BlockAllocator(START, END);
      const live: { offset: number; size: number }[] = [];
      for (const step of sequence) {
        if ('acquire' in step) {
          const block = allocator.allocate(step.acquire);
          if (block === null) {
            // refused only when no free run of that size exists
            expect(allocator.largestFree).toBeLessThan(Math.ceil(step.acquire / GRANULE) * GRANULE);
            continue;
          }
          expect(block.size).toBeGreaterThanOrEqual(step.acquire);
          expect(block.offset % GRANULE).toBe(0);
          expect(block.offset).toBeGreaterThanOrEqual(START);
          expect(block.offset + block.size).toBeLessThanOrEqual(END);
          live.push(block);
          expect(disjoint(live)).toBe(true);
        } else if ('extend' in step) {
          if (live.length === 0) continue;
          const block = live[step.extend % live.length];
          const size = allocator.extend(block.offset, block.size, block.size + step.by);
          if (size !== null) {
            expect(size).toBeGreaterThanOrEqual(block.size + step.by);
            expect(block.offset + size).toBeLessThanOrEqual(END);
            block.size = size;
            expect(disjoint(live)).toBe(true);
          }
        } else if (live.length > 0) {
          const [block] = live.splice(step.release % live.length, 1);
          allocator.release(block.offset, block.size);
        }
        expect(allocator.inUseBytes).toBe(live.reduce((sum, b) => sum + b.size, 0));
      }
      for (const block of live) allocator.release(block.offset, block.size);
      expect(allocator.inUseBytes).toBe(0);
      expect(allocator.largestFree).toBe(END - START);
      expect(allocator.allocate(END - START)).toEqual({ offset: START, size: END - START });
    }), { numRuns: 300 });
  });

  it('a burst of one size, given back, serves a larger size (the size-class wedge of issue 11)', () => {
    const allocator = new BlockAllocator(START, END);
    const burst = Array.from({ length: 16 }, () => allocator.allocate(4 * 1024));
    expect(allocator.allocate(4 * 1024)).toBeNull(); // full
    for (const block of burst) allocator.release(block!.offset, block!.size);
    expect(allocator.allocate(48 * 1024)).toEqual({ offset: START, size: 48 * 1024 });
  });

  it('throws on a release of a block it did not hand out, and changes nothing', () => {
    const allocator = new BlockAllocator(START, END);
    const a = allocator.allocate(100)!;
    const b = allocator.allocate(100)!;
    const c = allocator.allocate(100)!;
    allocator.release(b.offset, b.size);
    expect(() => allocator.release(b.offset, b.size)).toThrow(/no block at/); // twice, between used blocks
    allocator.release(a.offset, a.size);
    expect(() => allocator.release(a.offset, a.size)).toThrow(/no block at/); // twice, merged into a free run
    expect(() => allocator.release(c.offset, c.size + GRANULE)).toThrow(/no block at/); // reaching into the free top
    expect(() => allocator.release(c.offset + 1, c.size)).toThrow(/no block at/); // off the granule
    expect(() => allocator.release(END, GRANULE)).toThrow(/no block at/); // out of range
    expect(() => allocator.extend(a.offset, a.size, a.size * 2)).toThrow(/no block at/); // a freed block
    expect(allocator.inUseBytes).toBe(c.size);
    allocator.release(c.offset, c.size);
    expect(allocator.largestFree).toBe(END - START);
  });
});
