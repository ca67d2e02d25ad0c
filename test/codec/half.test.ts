import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bfloat16BitsFromNumber, float16BitsFromNumber, narrowToBfloat16, narrowToFloat16, numberFromBfloat16Bits,
  numberFromFloat16Bits, roundToBfloat16, roundToFloat16, widenBfloat16, widenFloat16,
} from '../../src/codec/half.js';
import { bfloat16Value, float16Value, oracleBfloat16Bits, oracleFloat16Bits } from '../reference/half-oracle.js';

/** the float64 neighbours of v */
function nextUp(v: number): number {
  const f = new Float64Array([v]);
  const u = new BigInt64Array(f.buffer);
  if (v === 0) return Number.MIN_VALUE;
  u[0] += v > 0 ? 1n : -1n;
  return f[0];
}
const nextDown = (v: number): number => -nextUp(-v);

/** v, its float64 neighbours, and all three negated */
function around(v: number): number[] {
  return [v, nextUp(v), nextDown(v)].flatMap((w) => [w, -w]);
}

/** the first 'limit' values where convert and oracle disagree */
function disagreements(values: Iterable<number>, convert: (v: number) => number, oracle: (v: number) => number, limit = 5): string[] {
  const bad: string[] = [];
  for (const v of values) {
    const got = convert(v);
    const want = oracle(v);
    if (got !== want && bad.length < limit) bad.push(`${v}: 0x${got.toString(16)} vs 0x${want.toString(16)}`);
  }
  return bad;
}

function* midpoints(count: number, valueOf: (bits: number) => number): Generator<number> {
  for (let bits = 0; bits + 1 < count; bits++) {
    const mid = (valueOf(bits) + valueOf(bits + 1)) / 2; // exact: both have few significant bits
    yield* around(mid);
    yield* around(valueOf(bits));
  }
}

describe('float16', () => {
  it('all 65,536 bit patterns: bits → number → bits round-trips, NaNs stay NaN', () => {
    const bad: number[] = [];
    for (let bits = 0; bits < 65536; bits++) {
      const v = numberFromFloat16Bits(bits);
      const isNaNPattern = (bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0;
      if (isNaNPattern ? !Number.isNaN(v) || float16BitsFromNumber(v) !== 0x7e00 : float16BitsFromNumber(v) !== bits) bad.push(bits);
    }
    expect(bad).toEqual([]);
  });

  it('all finite float16 patterns widen to their exact value, ±0 and ±Inf included', () => {
    const bad: number[] = [];
    for (let bits = 0; bits < 0x7c00; bits += 1) {
      if (!Object.is(numberFromFloat16Bits(bits), float16Value(bits))) bad.push(bits);
      if (!Object.is(numberFromFloat16Bits(bits | 0x8000), -float16Value(bits))) bad.push(bits | 0x8000);
    }
    expect(bad).toEqual([]);
    expect(numberFromFloat16Bits(0x7c00)).toBe(Infinity);
    expect(numberFromFloat16Bits(0xfc00)).toBe(-Infinity);
  });

  it('every midpoint between adjacent float16 values, the values themselves and their float64 neighbours match the oracle', () => {
    expect(disagreements(midpoints(0x7c01, (b) => (b === 0x7c00 ? 65536 : float16Value(b))), float16BitsFromNumber, oracleFloat16Bits)).toEqual([]);
  });

  it('random float64 values over the whole float16 range, subnormals and beyond match the oracle', () => {
    fc.assert(fc.property(fc.double({ min: -1e5, max: 1e5, noNaN: true }), fc.integer({ min: -40, max: 0 }), (v, k) => {
      const w = v * 2 ** k;
      expect(float16BitsFromNumber(w)).toBe(oracleFloat16Bits(w));
    }), { numRuns: 20000 });
  });

  it('edges: ties to even, subnormals, overflow at 65520, max finite, zeros, infinities, NaN', () => {
    const cases: [number, number][] = [
      [1, 0x3c00], [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [nextUp(1 + 2 ** -11), 0x3c01],
      [2048 + 1, 0x6800], [2048 + 3, 0x6802], // ulp 2 at 2048: ties go to even
      [2 - 2 ** -11, 0x4000], // carry into the exponent
      [65504, 0x7bff], [65519.99, 0x7bff], [nextDown(65520), 0x7bff], [65520, 0x7c00], [1e6, 0x7c00], [-65520, 0xfc00],
      [2 ** -24, 0x0001], [2 ** -25, 0x0000], [nextUp(2 ** -25), 0x0001], [3 * 2 ** -25, 0x0002], [1.5 * 2 ** -24, 0x0002],
      [2 ** -14, 0x0400], [2 ** -14 - 2 ** -25, 0x0400], [2 ** -14 - 2 ** -24, 0x03ff], // subnormal ↔ normal
      [Number.MIN_VALUE, 0x0000], [-Number.MIN_VALUE, 0x8000],
      [0, 0x0000], [-0, 0x8000], [Infinity, 0x7c00], [-Infinity, 0xfc00], [NaN, 0x7e00], [-NaN, 0x7e00],
      [0.1, 0x2e66], [-2, 0xc000], [1 / 3, 0x3555],
    ];
    for (const [v, bits] of cases) expect([v, float16BitsFromNumber(v)]).toEqual([v, bits]);
    expect(roundToFloat16(65519.99)).toBe(65504);
    expect(roundToFloat16(0.1)).toBe(0.0999755859375);
    expect(roundToFloat16(NaN)).toBeNaN();
  });
});

describe('bfloat16', () => {
  it('all 65,536 bit patterns: bits → number → bits round-trips, NaNs stay NaN, values exact', () => {
    const bad: number[] = [];
    for (let bits = 0; bits < 65536; bits++) {
      const v = numberFromBfloat16Bits(bits);
      const isNaNPattern = (bits & 0x7f80) === 0x7f80 && (bits & 0x7f) !== 0;
      if (isNaNPattern ? !Number.isNaN(v) || bfloat16BitsFromNumber(v) !== 0x7fc0 : bfloat16BitsFromNumber(v) !== bits) bad.push(bits);
    }
    expect(bad).toEqual([]);
    const inexact: number[] = [];
    for (let bits = 0; bits < 0x7f80; bits++) {
      if (!Object.is(numberFromBfloat16Bits(bits), bfloat16Value(bits))) inexact.push(bits);
      if (!Object.is(numberFromBfloat16Bits(bits | 0x8000), -bfloat16Value(bits))) inexact.push(bits | 0x8000);
    }
    expect(inexact).toEqual([]);
  });

  it('every midpoint between adjacent bfloat16 values, the values themselves and their float64 neighbours match the oracle', () => {
    expect(disagreements(midpoints(0x7f81, (b) => (b === 0x7f80 ? 2 ** 128 : bfloat16Value(b))), bfloat16BitsFromNumber, oracleBfloat16Bits)).toEqual([]);
  });

  it('random float64 values from 1e-45 to 1e39 match the oracle', () => {
    fc.assert(fc.property(fc.double({ min: -1, max: 1, noNaN: true }), fc.integer({ min: -140, max: 130 }), (v, k) => {
      const w = v * 2 ** k;
      expect(bfloat16BitsFromNumber(w)).toBe(oracleBfloat16Bits(w));
    }), { numRuns: 20000 });
  });

  it('edges: ties to even, carries, subnormals, overflow, NaN', () => {
    const max = (2 - 2 ** -7) * 2 ** 127;
    const cases: [number, number][] = [
      [1, 0x3f80], [1 + 2 ** -8, 0x3f80], [1 + 3 * 2 ** -8, 0x3f82], [nextUp(1 + 2 ** -8), 0x3f81],
      [2 - 2 ** -8, 0x4000], // tie between 0x3fff and 2: even is 2, a carry into the exponent
      [2 - 2 ** -9, 0x4000], [2 - 3 * 2 ** -9, 0x3fff],
      [max, 0x7f7f], [nextDown((2 - 2 ** -8) * 2 ** 127), 0x7f7f], [(2 - 2 ** -8) * 2 ** 127, 0x7f80], [1e39, 0x7f80], [-1e39, 0xff80],
      [2 ** -133, 0x0001], [2 ** -134, 0x0000], [nextUp(2 ** -134), 0x0001], [3 * 2 ** -134, 0x0002],
      [2 ** -126, 0x0080], [2 ** -126 - 2 ** -134, 0x0080], [2 ** -126 - 2 ** -133, 0x007f],
      [0, 0], [-0, 0x8000], [Infinity, 0x7f80], [-Infinity, 0xff80], [NaN, 0x7fc0],
    ];
    for (const [v, bits] of cases) expect([v, bfloat16BitsFromNumber(v)]).toEqual([v, bits]);
  });

  it('rounds directly from float64: 1 + 2^-8 + 2^-30 goes up, though float32 would make it a tie that goes down', () => {
    const v = 1 + 2 ** -8 + 2 ** -30;
    expect(Math.fround(v)).toBe(1 + 2 ** -8); // the false tie
    expect(bfloat16BitsFromNumber(v)).toBe(0x3f81);
    expect(roundToBfloat16(v)).toBe(1 + 2 ** -7);
    expect(bfloat16BitsFromNumber(-(1 + 2 ** -7 + 2 ** -8 - 2 ** -30))).toBe(0xbf81); // below a tie, float32 rounds it onto the tie
  });
});

describe('bulk conversions', () => {
  const values = [0, -0, 1, -2.5, 0.1, 65519.99, 65520, 1e-7, 3e-8, 1e39, NaN, Infinity, -Infinity, 1 + 2 ** -8 + 2 ** -30];

  it('narrowToFloat16 / narrowToBfloat16 of a number list and a Float32Array match the scalar conversions', () => {
    for (const src of [values, Float32Array.from(values), Float64Array.from(values)]) {
      const h = new Uint16Array(src.length);
      const b = new Uint16Array(src.length);
      narrowToFloat16(src, h);
      narrowToBfloat16(src, b);
      expect(Array.from(h)).toEqual(Array.from(src, float16BitsFromNumber));
      expect(Array.from(b)).toEqual(Array.from(src, bfloat16BitsFromNumber));
    }
  });

  it('widenFloat16 / widenBfloat16 of all 65,536 patterns match numberFrom…Bits', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const h = new Float32Array(65536);
    const b = new Float32Array(65536);
    widenFloat16(all, h);
    widenBfloat16(all, b);
    expect(Array.from(h)).toEqual(Array.from(all, numberFromFloat16Bits));
    expect(Array.from(b)).toEqual(Array.from(all, numberFromBfloat16Bits));
  });
});
