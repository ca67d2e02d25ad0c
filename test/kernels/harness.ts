// runs a kernel on a described case and checks it against test/reference within the
// contract's tolerances (API.md §2, Accuracy), declared once here.
import { addResidualRows } from '../../src/kernels/add-residual.js';
import { layernormRows } from '../../src/kernels/layernorm.js';
import { rmsnormRows } from '../../src/kernels/rmsnorm.js';
import type { Dtype } from '../../src/codec/dtype.js';
import type { NormBuffers, NormParams, OutputArray, ValueArray } from '../../src/kernels/types.js';
import {
  narrowToBfloat16, narrowToFloat16, numberFromBfloat16Bits, numberFromFloat16Bits,
  widenBfloat16, widenFloat16,
} from '../../src/codec/half.js';
import { referenceLayernorm, referenceRmsnorm, type ReferenceRow } from '../reference/norm-reference.js';
import { oracleRoundBfloat16, oracleRoundFloat16 } from '../reference/half-oracle.js';
import { mulberry32 as seeded } from '../reference/contract.mjs';

export { FLOAT32_ABS, FLOAT32_REL, FLOAT64_ABS, FLOAT64_REL, LARGE_MEAN_WIDENING, tolerance } from '../reference/contract.mjs';
import { tolerance, ulp } from '../reference/contract.mjs';

export const DTYPES: readonly Dtype[] = ['float32', 'float64', 'float16', 'bfloat16'];
export type Op = 'rmsnorm' | 'layernorm';

/** '' when actual is within tol of ref; NaN must meet NaN, an infinity its own sign */
export function mismatch(actual: number, ref: number, tol: number, allowNaN = false): string {
  if (Number.isNaN(actual) && (allowNaN || Number.isNaN(ref))) return '';
  if (Number.isNaN(ref) || !Number.isFinite(ref) || !Number.isFinite(actual)) {
    return Object.is(actual, ref) || actual === ref ? '' : `${actual} vs ${ref}`;
  }
  const err = Math.abs(actual - ref);
  return err <= tol ? '' : `${actual} vs ${ref} (err ${err.toExponential(2)} > ${tol.toExponential(2)})`;
}

export function roundTo(dtype: Dtype, v: number): number {
  switch (dtype) {
    case 'float64': return v;
    case 'float32': return Math.fround(v);
    case 'float16': return oracleRoundFloat16(v);
    case 'bfloat16': return oracleRoundBfloat16(v);
  }
}

/** values as the kernels read them: float16/bfloat16 go through the codec's narrow + widen */
export function storeValues(dtype: Dtype, data: readonly number[]): ValueArray {
  if (dtype === 'float64') return Float64Array.from(data);
  if (dtype === 'float32') return Float32Array.from(data);
  const bits = new Uint16Array(data.length);
  const out = new Float32Array(data.length);
  if (dtype === 'float16') {
    narrowToFloat16(data, bits);
    widenFloat16(bits, out);
  } else {
    narrowToBfloat16(data, bits);
    widenBfloat16(bits, out);
  }
  return out;
}

export function outputArray(dtype: Dtype, length: number): OutputArray {
  if (dtype === 'float64') return new Float64Array(length);
  if (dtype === 'float32') return new Float32Array(length);
  return new Uint16Array(length);
}

export function readOutput(dtype: Dtype, y: OutputArray): number[] {
  if (dtype === 'float16') return Array.from(y, numberFromFloat16Bits);
  if (dtype === 'bfloat16') return Array.from(y, numberFromBfloat16Bits);
  return Array.from(y);
}

export interface NormCase {
  op: Op;
  rows: number;
  n: number;
  /** rows·n float64 values, rounded to inDtype on the way in */
  data: readonly number[];
  inDtype: Dtype;
  outDtype: Dtype;
  weight?: readonly number[];
  weightOffset?: number;
  bias?: readonly number[];
  eps: number;
  epsOutside?: boolean;
  /** rows·n float64 values, rounded to inDtype; added to data first */
  residual?: readonly number[];
  stats?: boolean;
}

export interface NormRun {
  /** the values normalized (h when a residual was given) */
  input: number[];
  y: number[];
  mean: number[] | null;
  rstd: number[] | null;
  buffers: NormBuffers;
}

export function paramsOf(c: NormCase): NormParams {
  const scale = new Float64Array(c.n);
  for (let j = 0; j < c.n; j++) scale[j] = (c.weightOffset ?? 0) + (c.weight ? c.weight[j] : 1);
  return { n: c.n, eps: c.eps, epsOutside: c.epsOutside ?? false, scale, bias: c.bias ? Float64Array.from(c.bias) : null };
}

export function runKernel(op: Op, buf: NormBuffers, p: NormParams, rowStart: number, rowEnd: number): void {
  if (op === 'rmsnorm') rmsnormRows(buf, p, rowStart, rowEnd);
  else layernormRows(buf, p, rowStart, rowEnd);
}

export function runCase(c: NormCase): NormRun {
  let x = storeValues(c.inDtype, c.data);
  if (c.residual) {
    const res = storeValues(c.inDtype, c.residual);
    addResidualRows(x, res, c.inDtype, c.n, 0, c.rows);
    x = res;
  }
  const stats = c.stats ?? false;
  const buffers: NormBuffers = {
    x,
    y: outputArray(c.outDtype, c.rows * c.n),
    outDtype: c.outDtype,
    mean: stats && c.op === 'layernorm' ? new Float32Array(c.rows) : null,
    rstd: stats ? new Float32Array(c.rows) : null,
  };
  runKernel(c.op, buffers, paramsOf(c), 0, c.rows);
  return {
    input: Array.from(x),
    y: readOutput(c.outDtype, buffers.y),
    mean: buffers.mean && Array.from(buffers.mean),
    rstd: buffers.rstd && Array.from(buffers.rstd),
    buffers,
  };
}

/** the reference's input: data (+ residual) rounded to inDtype exactly as the contract says */
export function referenceInput(c: NormCase): number[] {
  const x = c.data.map((v) => roundTo(c.inDtype, v));
  if (!c.residual) return x;
  return x.map((v, i) => roundTo(c.inDtype, v + roundTo(c.inDtype, c.residual![i])));
}

export function referenceRows(c: NormCase, input: readonly number[]): ReferenceRow[] {
  const p = paramsOf(c);
  const o = { eps: c.eps, epsOutside: p.epsOutside, scale: Array.from(p.scale), bias: p.bias && Array.from(p.bias) };
  const out: ReferenceRow[] = [];
  for (let row = 0; row < c.rows; row++) {
    const values = input.slice(row * c.n, (row + 1) * c.n);
    out.push(c.op === 'rmsnorm' ? referenceRmsnorm(values, o) : referenceLayernorm(values, o));
  }
  return out;
}

/**
 * every element, mean and rstd outside its tolerance, as readable lines (at most `limit`);
 * allowNaN: rows holding NaN/Inf may give NaN where the formula gives a number
 */
export function checkCase(c: NormCase, limit = 5, allowNaN = false): string[] {
  const run = runCase(c);
  const input = referenceInput(c);
  const problems: string[] = [];
  const note = (s: string): void => void (problems.length < limit && problems.push(s));
  for (let i = 0; i < input.length; i++) {
    if (!Object.is(run.input[i], input[i])) note(`h[${i}] = ${run.input[i]}, expected ${input[i]}`);
  }
  const scale = paramsOf(c).scale;
  referenceRows(c, input).forEach((ref, row) => {
    for (let j = 0; j < c.n; j++) {
      const i = row * c.n + j;
      const largeMean = c.op === 'layernorm' ? Math.abs(ref.mean) * ref.rstd * Math.abs(scale[j]) : 0;
      const bad = mismatch(run.y[i], ref.y[j], tolerance(c.outDtype, ref.y[j], largeMean), allowNaN);
      if (bad) note(`y[${row}][${j}]: ${bad}`);
    }
    if (run.mean) {
      const bad = mismatch(run.mean[row], ref.mean, tolerance('float32', ref.mean), allowNaN);
      if (bad) note(`mean[${row}]: ${bad}`);
    }
    if (run.rstd) {
      const bad = mismatch(run.rstd[row], ref.rstd, tolerance('float32', ref.rstd), allowNaN);
      if (bad) note(`rstd[${row}]: ${bad}`);
    }
  });
  return problems;
}

/** a small seeded generator (mulberry32), so failures reproduce */
export const random = seeded;

/** count values ~ N(center, spread²) */
export function normals(seed: number, count: number, center = 0, spread = 1): number[] {
  const rand = random(seed);
  const out: number[] = [];
  while (out.length < count) {
    const u = 1 - rand();
    const v = rand();
    const m = Math.sqrt(-2 * Math.log(u));
    out.push(center + spread * m * Math.cos(2 * Math.PI * v));
    if (out.length < count) out.push(center + spread * m * Math.sin(2 * Math.PI * v));
  }
  return out;
}
