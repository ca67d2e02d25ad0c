// WebAssembly SIMD kernels, one module per family built to dist/kernels/*.wasm: the row ops
// and bfloat16 ↔ float32 conversion (wasm/norm.wat), BatchNorm and GroupNorm (wasm/channels.wat),
// for float32 values, run in place on a shared WebAssembly.Memory. Every pointer is a byte offset into that memory, 4-byte aligned
// unless its function says otherwise; null (0) means absent, so offset 0 must never hold
// a buffer.
import { readFileSync } from 'node:fs';

export interface WasmKernels {
  /**
   * writes the float32 copies of scale and bias (n float64 each; bias may be null) and
   * their largest magnitudes to prepared (preparedBytes(n) bytes), once per request
   */
  prepareF32(scale: number, bias: number | null, n: number, prepared: number): void;
  /** prepareF32 for n copies of g, writing those to scale (n float64) too */
  prepareConstF32(g: number, scale: number, bias: number | null, n: number, prepared: number): void;
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
  /** n bytes from src to dst (any byte offsets, not overlapping): a memmove, unlike JS copies out of shared memory */
  copyBytes(dst: number, src: number, n: number): void;
  /**
   * one BatchNorm tile of x ([outer, C, inner] float32, at any alignment): outer [o0, o1) × channels
   * [c0, c1); each channel's mean and M2 as two float64 at out + 16·(c − c0)
   */
  tileStatsF32(x: number, out: number, C: number, inner: number, o0: number, o1: number, c0: number, c1: number): void;
  /**
   * that tile's float32 y = (x − shift)·factor + bias, the three a float64 per channel (from channel 0),
   * and as float32 groups at prepared (kernels/channel-params.ts)
   */
  batchnormF32(
    x: number, y: number, shift: number, factor: number, bias: number, prepared: number,
    C: number, inner: number, o0: number, o1: number, c0: number, c1: number,
  ): void;
  /** GroupNorm rows [rowStart, rowEnd) of x into float32 y; scale and bias a float64 per channel */
  groupnormF32(
    x: number, y: number, scale: number, bias: number | null, mean: number | null, rstd: number | null,
    n: number, channelRun: number, groups: number, rowStart: number, rowEnd: number, eps: number,
  ): void;
}

/** bytes prepareF32 writes: two float64 maxima, then scale and bias as float32 */
export function preparedBytes(n: number): number {
  return 16 + 8 * n;
}

const FAMILIES = ['norm', 'channels'];
let compiled: WebAssembly.Module[] | null = null;

/** instantiates the kernels over memory (shared, at most 65536 pages); compiles once per thread */
export function loadWasmKernels(memory: WebAssembly.Memory): WasmKernels {
  compiled ??= FAMILIES.map((name) => new WebAssembly.Module(readFileSync(new URL(`../../dist/kernels/${name}.wasm`, import.meta.url))));
  // wasm coerces the arguments itself (null -> 0, booleans -> 0/1), so the exports are the API
  return Object.assign({}, ...compiled.map((m) => new WebAssembly.Instance(m, { env: { memory } }).exports)) as WasmKernels;
}
