// the output pass shared by the kernels: y = (x - shift)·r·g + β, rounded once to the
// output dtype. One loop per dtype, chosen outside the loop, so each stays monomorphic.
import { bfloat16BitsFromNumber, float16BitsFromNumber } from '../codec/half.js';
import type { NormBuffers, NormParams, ValueArray } from './types.js';

/** writes row elements [off, off + p.n) of buf.y; shift is 0 for rmsnorm, μ for layernorm */
export function storeRow(buf: NormBuffers, p: NormParams, off: number, shift: number, r: number): void {
  switch (buf.outDtype) {
    case 'float32':
      storeFloat32(buf.x, buf.y as Float32Array, off, p.n, shift, r, p.scale, p.bias);
      break;
    case 'float64':
      storeFloat64(buf.x, buf.y as Float64Array, off, p.n, shift, r, p.scale, p.bias);
      break;
    case 'float16':
      storeFloat16(buf.x, buf.y as Uint16Array, off, p.n, shift, r, p.scale, p.bias);
      break;
    case 'bfloat16':
      storeBfloat16(buf.x, buf.y as Uint16Array, off, p.n, shift, r, p.scale, p.bias);
      break;
  }
}

// (x - shift)·r first keeps the product near 1, so float32 rows near 1e±30 cannot
// overflow or underflow on the way; the Float32Array store is the single rounding.
function storeFloat32(
  x: ValueArray, y: Float32Array, off: number, n: number, shift: number, r: number,
  g: Float64Array, b: Float64Array | null,
): void {
  const end = off + n;
  if (b === null) for (let i = off, j = 0; i < end; i++, j++) y[i] = (x[i] - shift) * r * g[j];
  else for (let i = off, j = 0; i < end; i++, j++) y[i] = (x[i] - shift) * r * g[j] + b[j];
}

function storeFloat64(
  x: ValueArray, y: Float64Array, off: number, n: number, shift: number, r: number,
  g: Float64Array, b: Float64Array | null,
): void {
  const end = off + n;
  if (b === null) for (let i = off, j = 0; i < end; i++, j++) y[i] = (x[i] - shift) * r * g[j];
  else for (let i = off, j = 0; i < end; i++, j++) y[i] = (x[i] - shift) * r * g[j] + b[j];
}

function storeFloat16(
  x: ValueArray, y: Uint16Array, off: number, n: number, shift: number, r: number,
  g: Float64Array, b: Float64Array | null,
): void {
  const end = off + n;
  if (b === null) {
    for (let i = off, j = 0; i < end; i++, j++) y[i] = float16BitsFromNumber((x[i] - shift) * r * g[j]);
  } else {
    for (let i = off, j = 0; i < end; i++, j++) y[i] = float16BitsFromNumber((x[i] - shift) * r * g[j] + b[j]);
  }
}

function storeBfloat16(
  x: ValueArray, y: Uint16Array, off: number, n: number, shift: number, r: number,
  g: Float64Array, b: Float64Array | null,
): void {
  const end = off + n;
  if (b === null) {
    for (let i = off, j = 0; i < end; i++, j++) y[i] = bfloat16BitsFromNumber((x[i] - shift) * r * g[j]);
  } else {
    for (let i = off, j = 0; i < end; i++, j++) y[i] = bfloat16BitsFromNumber((x[i] - shift) * r * g[j] + b[j]);
  }
}
