import { describe, expect, it } from 'vitest';
import { layernormRows } from '../../src/kernels/layernorm.js';
import type { NormBuffers } from '../../src/kernels/types.js';
import { checkCase, normals, paramsOf, random } from './harness.js';

describe('layernorm worked example', () => {
  it('layernorm 1x4 [0.1, 0.1, 0.2, 0.3], eps 0', () => {
    // μ = 0.7/4 = 0.175, x - μ = [-0.075, -0.075, 0.025, 0.125],
    // Σ(x - μ)² = 0.005625 + 0.005625 + 0.000625 + 0.015625 = 0.0275, s = 0.006875 = 11/1600,
    // r = 40/sqrt(11) ≈ 12.060454, y = (x - μ)·r = [-3, -3, 1, 5]/sqrt(11)
    const data = [0.1, 0.1, 0.2, 0.3];
    const buf: NormBuffers = {
      x: Float64Array.from(data), y: new Float64Array(4), outDtype: 'float64', mean: new Float32Array(1), rstd: new Float32Array(1),
    };
    layernormRows(buf, paramsOf({ op: 'layernorm', rows: 1, n: 4, data, inDtype: 'float64', outDtype: 'float64', eps: 0 }), 0, 1);
    expect(buf.mean![0]).toBeCloseTo(0.175, 7);
    expect(buf.rstd![0]).toBeCloseTo(12.060454, 5);
    const expected = [-0.904534, -0.904534, 0.301511, 1.507557];
    for (let j = 0; j < 4; j++) expect(buf.y[j]).toBeCloseTo(expected[j], 6);
  });
});

describe('layernorm against the reference', () => {
  it('layernorm 1x65536 float64, eps 1e-5, weight and bias', () => {
    const n = 65536;
    const rand = random(8);
    const weight = Array.from({ length: n }, () => 0.5 + rand());
    const bias = Array.from({ length: n }, () => rand() - 0.5);
    expect(checkCase({
      op: 'layernorm', rows: 1, n, data: normals(1, n, 3, 2), inDtype: 'float64', outDtype: 'float64', weight, bias, eps: 1e-5, stats: true,
    })).toEqual([]);
  });

  it('layernorm 2x65536 float32, eps 1e-5', () => {
    const n = 65536;
    expect(checkCase({ op: 'layernorm', rows: 2, n, data: normals(2, 2 * n, -1, 5), inDtype: 'float32', outDtype: 'float32', eps: 1e-5, stats: true })).toEqual([]);
  });

  for (const [inDtype, outDtype] of [['float64', 'float64'], ['float32', 'float32'], ['float32', 'float64'], ['float64', 'float32']] as const) {
    it(`layernorm 2x65536 ${inDtype}→${outDtype}, mean = 1e6 × std, eps 0`, () => {
      const n = 65536;
      // row 0: μ = 1e6, std 1; row 1: μ = -3.7, std 3.7e-6
      const data = [...normals(3, n, 1e6, 1), ...normals(4, n, -3.7, 3.7e-6)];
      expect(checkCase({ op: 'layernorm', rows: 2, n, data, inDtype, outDtype, eps: 0, stats: true })).toEqual([]);
    });
  }

  it('layernorm 1x65536 float64, eps 0, adversarial for a running sum: 2^20 + 2^-18 - 2^-32 + small integers', () => {
    // the fraction sits just under half an ulp of a running sum in [2^35, 2^36), so a
    // plain loop drops ≈ 2^-18 per element over the last half of the row: μ off by ≈ 2e-6
    // with std ≈ 1.4, far beyond the 2^-46·|μ|·r ≈ 1e-8 allowance
    const n = 65536;
    const rand = random(12);
    const data = Array.from({ length: n }, () => 2 ** 20 + 2 ** -18 - 2 ** -32 + Math.floor(5 * rand()) - 2);
    expect(checkCase({ op: 'layernorm', rows: 1, n, data, inDtype: 'float64', outDtype: 'float64', eps: 0, stats: true })).toEqual([]);
  });

  it('layernorm 1x65536 float64, mean = 1e6 × std, weight offset 1 and bias, eps outside', () => {
    const n = 65536;
    const rand = random(9);
    const weight = Array.from({ length: n }, () => rand() - 0.5);
    const bias = Array.from({ length: n }, () => rand());
    expect(checkCase({
      op: 'layernorm', rows: 1, n, data: normals(5, n, 2.5e7, 25), inDtype: 'float64', outDtype: 'float64',
      weight, weightOffset: 1, bias, eps: 1e-5, epsOutside: true, stats: true,
    })).toEqual([]);
  });

  for (const magnitude of [1e30, 1e-30]) {
    for (const eps of [0, 1e-5]) {
      for (const outDtype of ['float32', 'float64'] as const) {
        it(`layernorm 4x1000 float32 values near ${magnitude}, eps ${eps}, ${outDtype} out`, () => {
          const data = normals(6, 4000, 0.5).map((v) => v * magnitude);
          expect(checkCase({ op: 'layernorm', rows: 4, n: 1000, data, inDtype: 'float32', outDtype, eps, stats: true })).toEqual([]);
        });
      }
    }
  }
});
