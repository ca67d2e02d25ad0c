export type Dtype = 'float32' | 'float64' | 'float16' | 'bfloat16';
export type Op = 'rmsnorm' | 'layernorm';
export const FLOAT32_ABS: number;
export const FLOAT32_REL: number;
export const FLOAT64_ABS: number;
export const FLOAT64_REL: number;
export const LARGE_MEAN_WIDENING: number;
export const DEFAULT_EPS: Readonly<Record<Op, number>>;
export function ulp(dtype: 'float16' | 'bfloat16', ref: number): number;
export function tolerance(dtype: Dtype, ref: number, largeMean?: number): number;
export function firstMismatch(actual: ArrayLike<number>, expected: ArrayLike<number>, dtype?: Dtype): number;
export function mulberry32(seed: number): () => number;
export function referenceRows(
  op: Op, x: ArrayLike<number>, n: number,
  options?: { eps?: number; weight?: ArrayLike<number>; bias?: ArrayLike<number> },
): Float64Array;
