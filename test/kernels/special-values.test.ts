import { describe, expect, it } from 'vitest';
import { layernormRows } from '../../src/kernels/layernorm.js';
import { rmsnormRows } from '../../src/kernels/rmsnorm.js';
import type { NormBuffers } from '../../src/kernels/types.js';
import { checkCase, DTYPES, normals, outputArray, paramsOf, readOutput, runCase, runKernel, type Op } from './harness.js';

const OPS: Op[] = ['rmsnorm', 'layernorm'];

describe.each(OPS)('%s special values', (op) => {
  const specials: [string, number[]][] = [
    ['NaN', [NaN]],
    ['+Inf', [Infinity]],
    ['-Inf', [-Infinity]],
    ['+Inf and -Inf', [Infinity, -Infinity]],
    ['NaN and Inf', [NaN, Infinity]],
  ];
  for (const [name, values] of specials) {
    for (const outDtype of DTYPES) {
      it(`${op} 3x8 ${outDtype} out, ${name} in row 1: NaN or the IEEE formula there, other rows unaffected`, () => {
        const data = normals(31, 24, 0.5);
        values.forEach((v, k) => { data[8 + 2 * k + 1] = v; });
        const c = { op, rows: 3, n: 8, data, inDtype: 'float64' as const, outDtype, eps: 1e-5, stats: true };
        // the reference follows IEEE arithmetic too; NaN is allowed wherever it has a number
        expect(checkCase(c, 5, true)).toEqual([]);
        const run = runCase(c);
        expect(checkCase({ ...c, rows: 2, data: [...data.slice(0, 8), ...data.slice(16)] })).toEqual([]);
        for (const i of [...Array(8).keys(), ...Array.from({ length: 8 }, (_, j) => 16 + j)]) {
          expect(Number.isFinite(run.y[i])).toBe(true);
        }
      });
    }
  }

  it(`${op} 3x8 float64, +Inf in row 1, eps 1e-5: gives what the formula gives`, () => {
    const data = normals(32, 24, 0.5);
    data[10] = Infinity;
    const run = runCase({ op, rows: 3, n: 8, data, inDtype: 'float64', outDtype: 'float64', eps: 1e-5 });
    const row = run.y.slice(8, 16);
    // rmsnorm: s = Inf, r = 0, so finite x give x·0 = ±0 and Inf gives Inf·0 = NaN;
    // layernorm: μ = Inf makes every x - μ NaN or -Inf, s NaN, so the row is NaN
    if (op === 'rmsnorm') row.forEach((v, j) => (j === 2 ? expect(v).toBeNaN() : expect(Math.abs(v)).toBe(0)));
    else row.forEach((v) => expect(v).toBeNaN());
  });

  for (const epsOutside of [false, true]) {
    for (const outDtype of DTYPES) {
      it(`${op} 2x5 ${outDtype} out, eps 0 ${epsOutside ? 'outside' : 'inside'}: an all-zero row gives NaN, rstd Inf`, () => {
        const data = [0, 0, 0, 0, 0, 1, 2, 3, 4, 6];
        const run = runCase({ op, rows: 2, n: 5, data, inDtype: 'float32', outDtype, eps: 0, epsOutside, stats: true });
        run.y.slice(0, 5).forEach((v) => expect(v).toBeNaN());
        run.y.slice(5).forEach((v) => expect(Number.isFinite(v)).toBe(true));
        expect(run.rstd![0]).toBe(Infinity);
      });
    }
  }
});

describe('row ranges', () => {
  for (const op of OPS) {
    for (const outDtype of DTYPES) {
      it(`${op} 4x6 ${outDtype} out, rowStart = rowEnd writes nothing`, () => {
        const c = { op, rows: 4, n: 6, data: normals(40, 24), inDtype: 'float32' as const, outDtype, eps: 1e-5 };
        const y = outputArray(outDtype, 24);
        y.fill(7);
        const buf: NormBuffers = { x: Float32Array.from(c.data), y, outDtype, mean: new Float32Array(4).fill(7), rstd: new Float32Array(4).fill(7) };
        for (const at of [0, 2, 4]) runKernel(op, buf, paramsOf(c), at, at);
        expect(Array.from(y).every((v) => v === 7)).toBe(true);
        expect(Array.from(buf.mean!)).toEqual([7, 7, 7, 7]);
        expect(Array.from(buf.rstd!)).toEqual([7, 7, 7, 7]);
      });
    }

    it(`${op} 0x8 (no rows): an empty call on empty arrays`, () => {
      const buf: NormBuffers = { x: new Float32Array(0), y: new Float32Array(0), outDtype: 'float32', mean: new Float32Array(0), rstd: new Float32Array(0) };
      const p = paramsOf({ op, rows: 0, n: 8, data: [], inDtype: 'float32', outDtype: 'float32', eps: 1e-5 });
      expect(() => (op === 'rmsnorm' ? rmsnormRows : layernormRows)(buf, p, 0, 0)).not.toThrow();
    });

    it(`${op} 5x4, rows [1, 3) touches only rows 1 and 2`, () => {
      const c = { op, rows: 5, n: 4, data: normals(41, 20), inDtype: 'float64' as const, outDtype: 'float64' as const, eps: 1e-5 };
      const buf: NormBuffers = { x: Float64Array.from(c.data), y: new Float64Array(20).fill(7), outDtype: 'float64', mean: new Float32Array(5).fill(7), rstd: new Float32Array(5).fill(7) };
      runKernel(op, buf, paramsOf(c), 1, 3);
      const full = runCase({ ...c, stats: true });
      const y = readOutput('float64', buf.y);
      expect(y.slice(0, 4)).toEqual([7, 7, 7, 7]);
      expect(y.slice(4, 12)).toEqual(full.y.slice(4, 12));
      expect(y.slice(12)).toEqual(Array(8).fill(7));
      expect(Array.from(buf.rstd!)).toEqual([7, ...full.rstd!.slice(1, 3), 7, 7]);
      if (op === 'layernorm') expect(Array.from(buf.mean!)).toEqual([7, ...full.mean!.slice(1, 3), 7, 7]);
      else expect(Array.from(buf.mean!)).toEqual([7, 7, 7, 7, 7]);
    });
  }
});
