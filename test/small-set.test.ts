// SmallSet (src/small-set.ts) against the built-in Set under random adds and deletes (fast-check):
// the same members, the same size, the same answer from delete.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { SmallSet } from '../src/small-set.js';

it('holds what a Set holds, whatever the order of adds and deletes', () => {
  const ops = fc.array(fc.record({ add: fc.boolean(), item: fc.integer({ min: 0, max: 7 }) }), { maxLength: 200 });
  fc.assert(fc.property(ops, (sequence) => {
    const items = Array.from({ length: 8 }, (_, i) => ({ i }));
    const small = new SmallSet<{ i: number }>();
    const reference = new Set<{ i: number }>();
    for (const { add, item } of sequence) {
      if (add) {
        small.add(items[item]);
        reference.add(items[item]);
      } else {
        expect(small.delete(items[item])).toBe(reference.delete(items[item]));
      }
      expect(small.size).toBe(reference.size);
      expect(new Set(small.values())).toEqual(reference);
    }
  }), { numRuns: 300 });
});

it('gives its items in a copy that deleting does not disturb', () => {
  const small = new SmallSet<number>();
  for (let i = 0; i < 5; i++) small.add(i);
  const seen: number[] = [];
  for (const item of small.values()) {
    seen.push(item);
    small.delete(item);
  }
  expect(seen.sort()).toEqual([0, 1, 2, 3, 4]);
  expect(small.size).toBe(0);
});
