// what a §2 request should answer, computed in float64 by test/reference (never by src/), and the
// contract's tolerances (API.md §2, Accuracy) to compare a response with it.
import { expect } from 'vitest';
import { oracleRoundBfloat16, oracleRoundFloat16 } from '../reference/half-oracle.js';
import { partialCount } from '../reference/channel-norm-reference.js';
import { referenceLayernorm, referenceRmsnorm } from '../reference/norm-reference.js';
import type { Dtype } from './tensors.js';

export type Op = 'rmsnorm' | 'layernorm';

/** one value rounded once to `dtype` (round to nearest, ties to even), as list data is read */
export function roundTo(dtype: Dtype, v: number): number {
  switch (dtype) {
    case 'float32': return Math.fround(v);
    case 'float64': return v;
    case 'float16': return oracleRoundFloat16(v);
    default: return oracleRoundBfloat16(v);
  }
}

export interface Param {
  dtype: Dtype;
  values: readonly number[];
}

/** a request as the reference sees it; values are those sent, before rounding to their dtype */
export interface NormCase {
  op: Op;
  dtype: Dtype;
  shape: readonly number[];
  values: readonly number[];
  axis?: number;
  weight?: Param;
  bias?: Param;
  eps?: number;
  epsPlacement?: 'inside' | 'outside';
  weightOffset?: number;
  residual?: readonly number[];
  outputDtype?: Dtype;
  /** rmsnorm only: s over the first ⌊n·partial⌋ elements of each row */
  partial?: number;
}

export interface Expected {
  /** unrounded float64 results: the tolerance is measured against these */
  output: number[];
  /** h = input + residual, rounded to the input dtype (exact: one rounding of an exact sum) */
  residual: number[] | null;
  /** per row */
  mean: number[];
  rstd: number[];
  /** per element |μ|·r·|g| (LayerNorm's float64 widening) */
  largeMean: number[];
  rowShape: number[];
}

export const DEFAULT_EPS: Readonly<Record<Op, number>> = { rmsnorm: 1e-6, layernorm: 1e-5 };

export function reference(c: NormCase): Expected {
  const rank = c.shape.length;
  const axis = (c.axis ?? -1) < 0 ? (c.axis ?? -1) + rank : (c.axis ?? -1);
  const rowShape = c.shape.slice(0, axis);
  const n = c.shape.slice(axis).reduce((p, d) => p * d, 1);
  const rows = rowShape.reduce((p, d) => p * d, 1);
  let x = c.values.map((v) => roundTo(c.dtype, v));
  let residual: number[] | null = null;
  if (c.residual !== undefined) {
    const r = c.residual.map((v) => roundTo(c.dtype, v));
    residual = x.map((v, i) => roundTo(c.dtype, v + r[i]));
    x = residual;
  }
  const offset = c.weightOffset ?? 0;
  const gamma = c.weight === undefined ? new Array<number>(n).fill(1) : c.weight.values.map((v) => roundTo(c.weight!.dtype, v));
  const scale = gamma.map((g) => offset + g);
  const bias = c.bias === undefined ? null : c.bias.values.map((v) => roundTo(c.bias!.dtype, v));
  const options = { eps: c.eps ?? DEFAULT_EPS[c.op], epsOutside: c.epsPlacement === 'outside', scale, bias };
  const expected: Expected = { output: [], residual, mean: [], rstd: [], largeMean: [], rowShape };
  for (let r = 0; r < rows; r++) {
    const row = x.slice(r * n, (r + 1) * n);
    const result = c.op === 'rmsnorm' ? referenceRmsnorm(row, options, partialCount(n, c.partial ?? 1)) : referenceLayernorm(row, options);
    expected.output.push(...result.y);
    expected.mean.push(result.mean);
    expected.rstd.push(result.rstd);
    for (let j = 0; j < n; j++) expected.largeMean.push(Math.abs(result.mean) * result.rstd * Math.abs(scale[j]));
  }
  return expected;
}

export { tolerance, ulp } from '../reference/contract.mjs';
import { tolerance } from '../reference/contract.mjs';

interface Mismatch { index: number; actual: number; ref: number; allowed: number }

/**
 * every element within tolerance of the float64 reference. A reference that leaves a half
 * format's range must come back as that infinity; a NaN reference must come back NaN.
 */
export function expectClose(actual: readonly number[], ref: readonly number[], dtype: Dtype, largeMean: readonly number[] = []): void {
  expect(actual.length).toBe(ref.length);
  const bad: Mismatch[] = [];
  for (let i = 0; i < ref.length; i++) {
    const a = actual[i];
    const r = ref[i];
    const allowed = tolerance(dtype, r, largeMean[i] ?? 0);
    const rounded = dtype === 'float16' || dtype === 'bfloat16' ? roundTo(dtype, r) : r;
    let ok: boolean;
    if (Number.isNaN(r)) ok = Number.isNaN(a);
    else if (!Number.isFinite(rounded)) ok = a === rounded;
    else ok = Math.abs(a - r) <= allowed;
    if (!ok) bad.push({ index: i, actual: a, ref: r, allowed });
  }
  expect(bad.slice(0, 5), `${bad.length} of ${ref.length} elements outside the ${dtype} tolerance`).toEqual([]);
}
