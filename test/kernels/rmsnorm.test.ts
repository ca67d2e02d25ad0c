import { describe, expect, it } from 'vitest';
import { rmsnormRows } from '../../src/kernels/rmsnorm.js';
import type { NormBuffers } from '../../src/kernels/types.js';
import { checkCase, normals, paramsOf, random } from './harness.js';

function rms(data: number[], rows: number, eps: number): { y: Float64Array; rstd: Float32Array } {
  const n = data.length / rows;
  const buf: NormBuffers = {
    x: Float64Array.from(data), y: new Float64Array(data.length), outDtype: 'float64', mean: null, rstd: new Float32Array(rows),
  };
  rmsnormRows(buf, paramsOf({ op: 'rmsnorm', rows, n, data, inDtype: 'float64', outDtype: 'float64', eps }), 0, rows);
  return { y: buf.y as Float64Array, rstd: buf.rstd! };
}

describe('rmsnorm worked examples (API.md)', () => {
  it('rmsnorm 2x4, eps 0, weight ones: rows ±[0.3651, 0.7303, 1.0954, 1.4606]', () => {
    const { y } = rms([1, 2, 3, 4, -1, -2, -3, -4], 2, 0);
    const expected = [0.3651, 0.7303, 1.0954, 1.4606];
    for (let j = 0; j < 4; j++) {
      expect(y[j]).toBeCloseTo(expected[j], 4);
      expect(y[4 + j]).toBeCloseTo(-expected[j], 4);
    }
  });

  it('rmsnorm 1x4 [0.1, 0.1, 0.2, 0.3], eps 0', () => {
    // Σx² = 0.01 + 0.01 + 0.04 + 0.09 = 0.15, s = 0.15/4 = 0.0375 = 3/80,
    // r = sqrt(80/3) = 4·sqrt(5/3) ≈ 5.163978, y = x·r = [0.4, 0.4, 0.8, 1.2]·sqrt(5/3)
    const { y, rstd } = rms([0.1, 0.1, 0.2, 0.3], 1, 0);
    expect(rstd[0]).toBeCloseTo(5.163978, 5);
    const expected = [0.516398, 0.516398, 1.032796, 1.549193];
    for (let j = 0; j < 4; j++) expect(y[j]).toBeCloseTo(expected[j], 6);
  });

  it('rmsnorm 1x4 [0.1, 0.1, 0.2, 0.3], eps 0.01 inside vs outside', () => {
    // inside: r = 1/sqrt(0.0375 + 0.01) = 1/sqrt(0.0475) ≈ 4.588315
    // outside: r = 1/(sqrt(0.0375) + 0.01) = 1/(0.193649 + 0.01) ≈ 4.910406
    const data = [0.1, 0.1, 0.2, 0.3];
    for (const [epsOutside, r] of [[false, 4.588315], [true, 4.910406]] as const) {
      const buf: NormBuffers = { x: Float64Array.from(data), y: new Float64Array(4), outDtype: 'float64', mean: null, rstd: new Float32Array(1) };
      const p = paramsOf({ op: 'rmsnorm', rows: 1, n: 4, data, inDtype: 'float64', outDtype: 'float64', eps: 0.01, epsOutside });
      rmsnormRows(buf, p, 0, 1);
      expect(buf.rstd![0]).toBeCloseTo(r, 5);
      expect(buf.y[3]).toBeCloseTo(0.3 * r, 5);
    }
  });
});

describe('rmsnorm against the reference', () => {
  it('rmsnorm 1x65536 float64, eps 1e-6, weight and bias', () => {
    const n = 65536;
    const rand = random(7);
    const weight = Array.from({ length: n }, () => 0.5 + rand());
    const bias = Array.from({ length: n }, () => rand() - 0.5);
    const data = normals(1, n);
    expect(checkCase({ op: 'rmsnorm', rows: 1, n, data, inDtype: 'float64', outDtype: 'float64', weight, bias, eps: 1e-6, stats: true })).toEqual([]);
  });

  it('rmsnorm 2x65536 float64, eps 0, magnitudes spread over 1e-3…1e3', () => {
    const n = 65536;
    const rand = random(11);
    const data = normals(2, 2 * n).map((v) => v * 10 ** (6 * rand() - 3));
    expect(checkCase({ op: 'rmsnorm', rows: 2, n, data, inDtype: 'float64', outDtype: 'float64', eps: 0, stats: true })).toEqual([]);
  });

  it('rmsnorm 1x65536 float64, eps 0, adversarial for a running sum: [256, then 65,535 × (1 + 2^-38 - 2^-51)]', () => {
    // x² = 1 + 2^-37 - 2^-50 exactly; added to a running sum in [2^16, 2^17), whose ulp is
    // 2^-36, every one loses just under half an ulp in the same direction, so a plain
    // loop is off by about n·ulp/2 (≈ 3.6e-12 relative, y[0] ≈ 181 off by ≈ 3e-10)
    const n = 65536;
    const data = Array(n).fill(1 + 2 ** -38 - 2 ** -51);
    data[0] = 256;
    expect(checkCase({ op: 'rmsnorm', rows: 1, n, data, inDtype: 'float64', outDtype: 'float64', eps: 0, stats: true })).toEqual([]);
  });

  it('rmsnorm 2x65536 float32, eps 1e-6', () => {
    const n = 65536;
    expect(checkCase({ op: 'rmsnorm', rows: 2, n, data: normals(3, 2 * n, 0.3), inDtype: 'float32', outDtype: 'float32', eps: 1e-6, stats: true })).toEqual([]);
  });

  for (const magnitude of [1e30, 1e-30]) {
    for (const eps of [0, 1e-6]) {
      for (const outDtype of ['float32', 'float64'] as const) {
        it(`rmsnorm 4x1000 float32 values near ${magnitude}, eps ${eps}, ${outDtype} out`, () => {
          const data = normals(5, 4000).map((v) => v * magnitude);
          expect(checkCase({ op: 'rmsnorm', rows: 4, n: 1000, data, inDtype: 'float32', outDtype, eps, stats: true })).toEqual([]);
        });
      }
    }
  }
});
