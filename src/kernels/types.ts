// shared by the main thread and the workers: the shapes a kernel reads and writes.
import type { Dtype } from '../codec/dtype.js';
import type { RowTask } from '../pool/protocol.js';
import type { RowParams } from './row-kernels.js';
import type { WasmKernels } from './wasm-kernels.js';

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

/** what the SIMD kernels read of a row task: its parameters and their places, and its rows (a RowTask is one) */
export type SimdRows<P extends RowParams = RowParams> = Pick<RowTask<P>, 'params' | 'scale' | 'bias' | 'prepared' | 'mean' | 'rstd' | 'n' | 'rowStart' | 'rowEnd' | 'eps' | 'epsOutside'>;

/**
 * one row-wise kernel, as the registry (row-kernels.ts) lists it; P is its own parameter record,
 * `{ kernel: <its name>, … }`, carried by the request and its tasks
 */
export interface RowKernelConfig<P extends RowParams> {
  /** the JS kernel: rows [rowStart, rowEnd) of buf.x into buf.y (and buf.mean / buf.rstd when set) */
  rows(buf: NormBuffers, norm: NormParams, rowStart: number, rowEnd: number, params: P): void;
  /** the SIMD kernel on float32 rows: x and y are byte offsets in the wasm memory, y takes float32
   *  results; null: JS only */
  simd: ((wasm: WasmKernels, task: SimdRows<P>, x: number, y: number) => void) | null;
  /** whether simd computes a request of these params and rows of n (never when simd is null);
   *  decided from the request alone, so every thread computes it the same way */
  simdApplies(params: P, n: number): boolean;
  /** how many scale (and bias) values rows of n elements read */
  paramLength(params: P, n: number): number;
}
