// a tensor's numbers as JSON text: the same characters JSON.stringify (quoted non-finite values, /v1)
// or Array.join (bare tokens, the OIP) writes for the same values, however the blocks are cut.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NUMBER_CHARS, numberText, writeNumberText } from '../../src/codec/number-text.js';
import type { NonFinite, NumberSource, TextTask } from '../../src/pool/protocol.js';
import { bfloat16FromBits, float16FromBits } from '../helpers/tensors.js';

type Storage = NumberSource['storage'];

/** the values in shared memory as the kernels leave them, and the numbers they stand for */
function sourceOf(storage: Storage, dtype: NumberSource['dtype'], raw: number[]): { source: NumberSource; numbers: number[] } {
  const itemsize = storage === 'float64' ? 8 : storage === 'float32' ? 4 : 2;
  const memory = new SharedArrayBuffer(Math.max(8, raw.length * itemsize));
  const Type = storage === 'float64' ? Float64Array : storage === 'float32' ? Float32Array : Uint16Array;
  const view = new Type(memory, 0, raw.length);
  view.set(raw);
  const numbers = storage === 'bits'
    ? Array.from(view, (bits) => (dtype === 'float16' ? float16FromBits(bits) : bfloat16FromBits(bits)))
    : Array.from(view);
  return { source: { memory, byteOffset: 0, length: raw.length, dtype, storage }, numbers };
}

/** the text another encoder writes: JSON.stringify with non-finite values as strings, or join */
function expected(numbers: number[], nonFinite: NonFinite): string {
  if (nonFinite === 'bare') return numbers.join(',');
  const json = numbers.map((v) => (Number.isFinite(v) ? v : String(v)));
  return JSON.stringify(json).slice(1, -1);
}

const special = fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 1e21, 1e-7, 123456789012345680000);
const float64 = fc.oneof(fc.double(), special);
const float32 = fc.oneof(fc.float(), special);
const bits = fc.integer({ min: 0, max: 0xffff });

const cases = [
  { storage: 'float64' as const, dtype: 'float64' as const, values: float64 },
  { storage: 'float32' as const, dtype: 'float32' as const, values: float32 },
  { storage: 'bits' as const, dtype: 'float16' as const, values: bits },
  { storage: 'bits' as const, dtype: 'bfloat16' as const, values: bits },
];

describe('numberText', () => {
  it.each(cases)('$dtype: the characters JSON.stringify and join write, within MAX_NUMBER_CHARS per value', ({ storage, dtype, values }) => {
    fc.assert(fc.property(fc.array(values as fc.Arbitrary<number>, { maxLength: 200 }), fc.constantFrom<NonFinite>('quoted', 'bare'), (raw, nonFinite) => {
      const { source, numbers } = sourceOf(storage, dtype, raw);
      const text = numberText(source, 0, raw.length, nonFinite);
      expect(text).toBe(expected(numbers, nonFinite));
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(raw.length * MAX_NUMBER_CHARS);
    }));
  });
});

describe('numberText of a range', () => {
  it.each(cases)('$dtype: values [start, end), after a comma when asked, as the whole list\'s text cut there', ({ storage, dtype, values }) => {
    fc.assert(fc.property(
      fc.array(values as fc.Arbitrary<number>, { maxLength: 60 }), fc.nat(), fc.nat(), fc.constantFrom<NonFinite>('quoted', 'bare'), fc.boolean(),
      (raw, a, b, nonFinite, leadingComma) => {
        const start = raw.length === 0 ? 0 : a % (raw.length + 1);
        const end = start + (raw.length === 0 ? 0 : b % (raw.length - start + 1));
        const { source, numbers } = sourceOf(storage, dtype, raw);
        const part = expected(numbers.slice(start, end), nonFinite);
        expect(numberText(source, start, end, nonFinite, leadingComma)).toBe(leadingComma && end > start ? `,${part}` : part);
      },
    ));
  });
});

describe('writeNumberText', () => {
  it('tasks that cut the blocks anywhere leave spans whose runs, in order, are the whole text', () => {
    fc.assert(fc.property(
      fc.array(float64, { minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 40 }), fc.array(fc.nat(), { maxLength: 4 }),
      (raw, blockValues, cutSeeds) => {
        const { source, numbers } = sourceOf('float64', 'float64', raw);
        const blocks = Math.ceil(raw.length / blockValues);
        const cuts = [...new Set([0, ...cutSeeds.map((c) => c % blocks), blocks])].sort((a, b) => a - b);
        const text = new SharedArrayBuffer(raw.length * MAX_NUMBER_CHARS);
        const spans = new SharedArrayBuffer(8 * blocks);
        const base = { kind: 'text' as const, blockValues, values: source, nonFinite: 'quoted' as const, cancel: { memory: spans, byteOffset: 0, length: 0 }, slot: 0, fault: null };
        for (let c = 0; c + 1 < cuts.length; c++) {
          const task: TextTask = {
            ...base, blockStart: cuts[c], blockEnd: cuts[c + 1],
            text: { memory: text, byteOffset: 0, length: text.byteLength }, spans: { memory: spans, byteOffset: 0, length: 2 * blocks },
          };
          writeNumberText(task);
        }
        const span = new Uint32Array(spans);
        const whole = Array.from({ length: blocks }, (_, b) => Buffer.from(text, span[2 * b], span[2 * b + 1] - span[2 * b]).toString('latin1')).join('');
        expect(whole).toBe(expected(numbers, 'quoted'));
      },
    ));
  });
});
