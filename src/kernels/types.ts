// shared by the main thread and the workers: the shapes a kernel reads and writes.
import type { Dtype } from '../codec/dtype.js';

/** values as the kernels read them: float16/bfloat16 inputs are widened to float32 on the way in */
export type ValueArray = Float32Array | Float64Array;

/** output storage: float16/bfloat16 are their raw bit patterns */
export type OutputArray = Float32Array | Float64Array | Uint16Array;

export interface NormParams {
  /** elements per row (product of the normalized dimensions), > 0 */
  n: number;
  eps: number;
  /** false: r = 1/sqrt(s + eps); true: r = 1/(sqrt(s) + eps) */
  epsOutside: boolean;
  /** g = weight_offset + weight, length n (filled with weight_offset + 1 when no weight was sent) */
  scale: Float64Array;
  /** beta, length n, or null for zeros */
  bias: Float64Array | null;
}

export interface NormBuffers {
  /** rows to normalize, row r at [r*n, (r+1)*n) */
  x: ValueArray;
  y: OutputArray;
  outDtype: Dtype;
  /** per-row mean (layernorm only) and r, or null when not asked for */
  mean: Float32Array | null;
  rstd: Float32Array | null;
}
