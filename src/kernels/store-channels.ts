// the output pass of the per-channel normalizations (BatchNorm, GroupNorm): y = (x − μ)·a + β, a = r·γ,
// in float64 and rounded once to the output dtype. One loop per dtype, chosen outside the loop.
import { bfloat16BitsFromNumber, float16BitsFromNumber } from '../codec/half.js';
import type { Dtype } from '../codec/dtype.js';
import type { OutputArray, ValueArray } from './types.js';

/** y[off … off + len) with one channel's μ, a and β */
export function storeRun(x: ValueArray, y: OutputArray, outDtype: Dtype, off: number, len: number, mu: number, a: number, b: number): void {
  const end = off + len;
  switch (outDtype) {
    case 'float32':
    case 'float64':
      for (let i = off; i < end; i++) y[i] = (x[i] - mu) * a + b;
      break;
    case 'float16':
      for (let i = off; i < end; i++) y[i] = float16BitsFromNumber((x[i] - mu) * a + b);
      break;
    case 'bfloat16':
      for (let i = off; i < end; i++) y[i] = bfloat16BitsFromNumber((x[i] - mu) * a + b);
      break;
  }
}

/** channels last: y[off + k] for channels c0 + k of [c0, c1), each with its own μ, a and β */
export function storeAcross(
  x: ValueArray, y: OutputArray, outDtype: Dtype, off: number, c0: number, c1: number,
  mu: Float64Array, a: Float64Array, b: Float64Array,
): void {
  const base = off - c0;
  switch (outDtype) {
    case 'float32':
    case 'float64':
      for (let c = c0; c < c1; c++) y[base + c] = (x[base + c] - mu[c]) * a[c] + b[c];
      break;
    case 'float16':
      for (let c = c0; c < c1; c++) y[base + c] = float16BitsFromNumber((x[base + c] - mu[c]) * a[c] + b[c]);
      break;
    case 'bfloat16':
      for (let c = c0; c < c1; c++) y[base + c] = bfloat16BitsFromNumber((x[base + c] - mu[c]) * a[c] + b[c]);
      break;
  }
}
