// WebAssembly SIMD kernels (src/kernels/wasm/norm.wat, built to dist/kernels/norm.wasm)
// for float32 in and out, run in place on a shared WebAssembly.Memory.
import { readFileSync } from 'node:fs';

/**
 * byte offsets into the memory, 4-byte aligned: x and y point at row 0 (y may equal x),
 * scale and bias at n float64, mean and rstd at one float32 per row. 0 (or null) means
 * absent for bias, mean and rstd, so offset 0 must never hold a buffer.
 */
export interface WasmKernels {
  rmsnormF32(
    x: number, y: number, scale: number, bias: number | null, rstd: number | null,
    n: number, rowStart: number, rowEnd: number, eps: number, epsOutside: boolean,
  ): void;
  layernormF32(
    x: number, y: number, scale: number, bias: number | null, mean: number | null, rstd: number | null,
    n: number, rowStart: number, rowEnd: number, eps: number, epsOutside: boolean,
  ): void;
}

let compiled: WebAssembly.Module | null = null;

/** instantiates the kernels over memory (shared, maximum 65536 pages or less); compiles once per thread */
export function loadWasmKernels(memory: WebAssembly.Memory): WasmKernels {
  compiled ??= new WebAssembly.Module(readFileSync(new URL('../../dist/kernels/norm.wasm', import.meta.url)));
  // wasm coerces the arguments itself: null -> 0, booleans -> 0/1
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as WasmKernels;
}
