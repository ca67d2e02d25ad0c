import { describe, expect, it } from 'vitest';
import { addResidualRows } from '../../src/kernels/add-residual.js';
import { DTYPES, normals, random, roundTo, storeValues } from './harness.js';

describe('addResidualRows', () => {
  for (const dtype of DTYPES) {
    it(`${dtype} 4x33: residual becomes round(x + residual) once, x untouched`, () => {
      const rand = random(50);
      // magnitudes over many binades, so that sums round and sometimes tie
      const data = normals(51, 132).map((v) => v * 2 ** Math.floor(20 * rand() - 10));
      const res = normals(52, 132).map((v) => v * 2 ** Math.floor(20 * rand() - 10));
      const x = storeValues(dtype, data);
      const r = storeValues(dtype, res);
      const xBefore = Array.from(x);
      const expected = Array.from(r, (v, i) => roundTo(dtype, xBefore[i] + v));
      addResidualRows(x, r, dtype, 33, 0, 4);
      expect(Array.from(r)).toEqual(expected);
      expect(Array.from(x)).toEqual(xBefore);
    });

    it(`${dtype} 4x3, rows [1, 3) only`, () => {
      const x = storeValues(dtype, Array(12).fill(1));
      const r = storeValues(dtype, Array.from({ length: 12 }, (_, i) => i));
      addResidualRows(x, r, dtype, 3, 1, 3);
      expect(Array.from(r)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9, 9, 10, 11]);
    });
  }

  it('float16 ties to even and overflow: 1 + 2^-11 → 1, 1 + 3·2^-11 → 1 + 2^-9, 60000 + 10000 → Inf', () => {
    const x = storeValues('float16', [1, 1, 60000, -60000]);
    const r = storeValues('float16', [2 ** -11, 3 * 2 ** -11, 10000, -10000]);
    // 2^-11 and 3·2^-11 are exact float16 values; the sums sit exactly between neighbours
    addResidualRows(x, r, 'float16', 4, 0, 1);
    expect(Array.from(r)).toEqual([1, 1 + 2 ** -9, Infinity, -Infinity]);
  });

  it('bfloat16 ties to even: 1 + 2^-8 → 1, 1 + 3·2^-8 → 1 + 2^-6', () => {
    const x = storeValues('bfloat16', [1, 1]);
    const r = storeValues('bfloat16', [2 ** -8, 3 * 2 ** -8]);
    addResidualRows(x, r, 'bfloat16', 2, 0, 1);
    expect(Array.from(r)).toEqual([1, 1 + 2 ** -6]);
  });

  it('float32 1x2: 1 + 2^-24 → 1 (tie to even), 1e38·3 + 1e38·3 → Inf', () => {
    const x = Float32Array.from([1, 3e38]);
    const r = Float32Array.from([2 ** -24, 3e38]);
    addResidualRows(x, r, 'float32', 2, 0, 1);
    expect(Array.from(r)).toEqual([1, Infinity]);
  });

  it('float64 1x2: the sum as IEEE gives it, NaN propagates', () => {
    const x = Float64Array.from([0.1, NaN]);
    const r = Float64Array.from([0.2, 1]);
    addResidualRows(x, r, 'float64', 2, 0, 1);
    expect(r[0]).toBe(0.1 + 0.2);
    expect(r[1]).toBeNaN();
  });
});
