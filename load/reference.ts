// the load suite's test data and checks, over the project's one test reference
// (test/reference/contract.mjs), independent of src/: a spot check must not trust the code it checks.

import { DEFAULT_EPS, mulberry32, referenceRows as sharedReferenceRows, tolerance, type Op } from '../test/reference/contract.mjs';

export type { Op };

/** rows of uniform values of unit variance, each row with its own offset and scale so layernorm has a mean to remove */
export function randomRows(rows: number, n: number, seed: number): Float32Array {
  const next = mulberry32(seed);
  const x = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    const offset = 4 * next() - 2;
    const scale = (0.5 + 2.5 * next()) * 2 * Math.sqrt(3);
    for (let i = r * n, end = i + n; i < end; i++) x[i] = offset + scale * (next() - 0.5);
  }
  return x;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** bfloat16 bits of a finite float32 value, round to nearest, ties to even */
export function bfloat16Bits(v: number): number {
  f32[0] = v;
  const bits = u32[0];
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

export function bfloat16Value(bits: number): number {
  u32[0] = bits << 16;
  return f32[0];
}

/** y = normalized rows of x, in float64, weight ones, bias zeros, eps inside */
export function referenceRows(op: Op, x: ArrayLike<number>, n: number, eps = DEFAULT_EPS[op]): Float64Array {
  return sharedReferenceRows(op, x, n, { eps });
}

/**
 * the contract's float32 bound, |y - ref| ≤ 1e-5 + 1e-5·|ref|, plus one bfloat16 ulp for
 * bfloat16 output; null when every value is within it, else what the first miss was
 */
export function compareValues(got: ArrayLike<number>, ref: Float64Array, bf16: boolean): string | null {
  if (got.length !== ref.length) return `output has ${got.length} values, expected ${ref.length}`;
  for (let i = 0; i < ref.length; i++) {
    const want = ref[i];
    const bound = tolerance(bf16 ? 'bfloat16' : 'float32', want);
    const diff = Math.abs(got[i] - want);
    if (!(diff <= bound)) return `output[${i}] = ${got[i]}, reference ${want} (|diff| ${diff.toExponential(2)} > ${bound.toExponential(2)})`;
  }
  return null;
}
