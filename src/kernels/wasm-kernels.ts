// WebAssembly SIMD kernels (src/kernels/wasm/norm.wat, built to dist/kernels/norm.wasm)
// for float32 in and out, and bfloat16 ↔ float32 conversion, run in place on a shared
// WebAssembly.Memory. Every pointer is a byte offset into that memory, 4-byte aligned
// unless its function says otherwise; null (0) means absent, so offset 0 must never hold
// a buffer.
import { readFileSync } from 'node:fs';

export interface WasmKernels {
  /**
   * writes the float32 copies of scale and bias (n float64 each; bias may be null) and
   * their largest magnitudes to prepared (preparedBytes(n) bytes), once per request
   */
  prepareF32(scale: number, bias: number | null, n: number, prepared: number): void;
  /** rows [rowStart, rowEnd) of x (n float32 each, from row 0) into y (= x or apart); rstd: a float32 per row */
  rmsnormF32(
    x: number, y: number, scale: number, bias: number | null, prepared: number, rstd: number | null,
    n: number, rowStart: number, rowEnd: number, eps: number, epsOutside: boolean,
  ): void;
  layernormF32(
    x: number, y: number, scale: number, bias: number | null, prepared: number, mean: number | null, rstd: number | null,
    n: number, rowStart: number, rowEnd: number, eps: number, epsOutside: boolean,
  ): void;
  /** count bfloat16 patterns at src (any byte offset) → their float32 values at dst */
  widenBf16(src: number, dst: number, count: number): void;
  /** count float32 at src → bfloat16 bits at dst (2-byte aligned), to nearest, ties to even; NaN stays NaN */
  narrowBf16(src: number, dst: number, count: number): void;
}

/** bytes prepareF32 writes: two float64 maxima, then scale and bias as float32 */
export function preparedBytes(n: number): number {
  return 16 + 8 * n;
}

let compiled: WebAssembly.Module | null = null;

/** instantiates the kernels over memory (shared, at most 65536 pages); compiles once per thread */
export function loadWasmKernels(memory: WebAssembly.Memory): WasmKernels {
  compiled ??= new WebAssembly.Module(readFileSync(new URL('../../dist/kernels/norm.wasm', import.meta.url)));
  // wasm coerces the arguments itself (null -> 0, booleans -> 0/1), so the exports are the API
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as WasmKernels;
}
