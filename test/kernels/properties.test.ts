import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Dtype } from '../../src/codec/dtype.js';
import type { NormBuffers } from '../../src/kernels/types.js';
import { DTYPES, outputArray, paramsOf, runCase, runKernel, type Op } from './harness.js';

// rows of 0 or moderate values, not all tiny: squares (even scaled by 2^±60) stay far
// from float64's limits, so the properties hold up to rounding
const valueArb = fc.double({ min: -1e3, max: 1e3, noNaN: true }).map((v) => (Math.abs(v) < 1e-6 ? 0 : v));
const rowArb = fc.array(valueArb, { minLength: 1, maxLength: 80 })
  .filter((row) => row.some((v) => Math.abs(v) > 1e-3));

// rows whose spread is not negligible against their mean, so that (x - μ)·r is well conditioned
const spreadRowArb = fc.array(valueArb, { minLength: 2, maxLength: 80 })
  .filter((row) => Math.max(...row) - Math.min(...row) > 1e-3 * Math.max(1e-3, ...row.map(Math.abs)));

function normalize(op: Op, data: number[], eps = 0): number[] {
  return runCase({ op, rows: 1, n: data.length, data, inDtype: 'float64', outDtype: 'float64', eps }).y;
}

const meanOf = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;

describe('kernel properties', () => {
  it('rmsnorm 1xn float64, eps 0, weight ones: output RMS is 1', () => {
    fc.assert(fc.property(rowArb, (row) => {
      const y = normalize('rmsnorm', row);
      expect(Math.abs(Math.sqrt(meanOf(y.map((v) => v * v))) - 1)).toBeLessThanOrEqual(1e-12);
    }), { numRuns: 300 });
  });

  it('layernorm 1xn float64, eps 0: output mean 0 and variance 1', () => {
    fc.assert(fc.property(spreadRowArb, (row) => {
      const y = normalize('layernorm', row);
      const m = meanOf(y);
      expect(Math.abs(m)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(meanOf(y.map((v) => (v - m) ** 2)) - 1)).toBeLessThanOrEqual(1e-9);
    }), { numRuns: 300 });
  });

  for (const op of ['rmsnorm', 'layernorm'] as const) {
    const arb = op === 'rmsnorm' ? rowArb : spreadRowArb;
    it(`${op} 1xn float64, eps 0: scaling a row by c > 0 leaves the output unchanged`, () => {
      fc.assert(fc.property(arb, fc.double({ min: 1e-3, max: 1e3, noNaN: true }), (row, c) => {
        const y = normalize(op, row);
        const scaled = normalize(op, row.map((v) => v * c));
        y.forEach((v, i) => expect(Math.abs(scaled[i] - v)).toBeLessThanOrEqual(1e-9 * (1 + Math.abs(v))));
      }), { numRuns: 200 });
    });

    it(`${op} 1xn float64, eps 0: scaling by a power of two leaves the output bitwise unchanged`, () => {
      fc.assert(fc.property(arb, fc.integer({ min: -60, max: 60 }), (row, k) => {
        expect(normalize(op, row.map((v) => v * 2 ** k))).toEqual(normalize(op, row));
      }), { numRuns: 200 });
    });
  }

  const splitArb = fc.record({
    rows: fc.integer({ min: 1, max: 12 }),
    n: fc.integer({ min: 1, max: 300 }),
    seed: fc.integer(),
    cuts: fc.array(fc.nat(), { maxLength: 6 }),
    inDtype: fc.constantFrom<Dtype>('float32', 'float64'),
    outDtype: fc.constantFrom(...DTYPES),
    op: fc.constantFrom<Op>('rmsnorm', 'layernorm'),
  });

  it('any op and dtypes, rows×n: splitting rows into [rowStart, rowEnd) ranges gives bitwise the same output', () => {
    fc.assert(fc.property(splitArb, ({ rows, n, seed, cuts, inDtype, outDtype, op }) => {
      const rand = fc.sample(fc.double({ min: -100, max: 100, noNaN: true }), { numRuns: rows * n, seed });
      const c = { op, rows, n, data: rand, inDtype, outDtype, eps: 1e-5, bias: rand.slice(0, n), stats: true };
      const whole = runCase(c).buffers;
      const parts: NormBuffers = {
        x: whole.x, y: outputArray(outDtype, rows * n), outDtype,
        mean: op === 'layernorm' ? new Float32Array(rows) : null, rstd: new Float32Array(rows),
      };
      const bounds = [0, ...cuts.map((k) => k % (rows + 1)).sort((a, b) => a - b), rows];
      for (let k = 0; k + 1 < bounds.length; k++) runKernel(op, parts, paramsOf(c), bounds[k], bounds[k + 1]);
      const bytes = (a: ArrayBufferView | null): number[] => (a ? Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)) : []);
      expect(bytes(parts.y)).toEqual(bytes(whole.y));
      expect(bytes(parts.mean)).toEqual(bytes(whole.mean));
      expect(bytes(parts.rstd)).toEqual(bytes(whole.rstd));
    }), { numRuns: 150 });
  });
});
