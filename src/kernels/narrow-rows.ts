// float32 results of the SIMD kernels → float16/bfloat16 bits, for a row range.
import { float16BitsFromNumber } from '../codec/half.js';
import type { Dtype } from './types.js';

/**
 * elements [start, end) of src into dst, rounded to nearest, ties to even. The float32 value is
 * exact in float64, so float16 reuses the float64 rounding; bfloat16 is the top half of the
 * float32 bits, rounded with integer arithmetic (NaN kept quiet, overflow carries into ±Inf).
 */
export function narrowRows(src: Float32Array, dst: Uint16Array, dtype: Dtype, start: number, end: number): void {
  if (dtype === 'float16') {
    for (let i = start; i < end; i++) dst[i] = float16BitsFromNumber(src[i]);
    return;
  }
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = start; i < end; i++) {
    const b = bits[i];
    dst[i] = (b & 0x7fffffff) > 0x7f800000 ? ((b >>> 16) | 0x0040) : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
}
