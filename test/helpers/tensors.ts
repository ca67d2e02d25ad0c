// wire tensors in and out of tests, written apart from src/codec: bytes are read and written
// with DataView, half formats through the search oracle in test/reference.
import { oracleBfloat16Bits, oracleFloat16Bits } from '../reference/half-oracle.js';

export type Dtype = 'float32' | 'float64' | 'float16' | 'bfloat16';
export const DTYPES: readonly Dtype[] = ['float32', 'float64', 'float16', 'bfloat16'];
export const ITEMSIZE: Readonly<Record<Dtype, number>> = { float32: 4, float64: 8, float16: 2, bfloat16: 2 };

/** float16 bit pattern → its value, from the IEEE layout (1 sign, 5 exponent, 10 mantissa bits) */
export function float16FromBits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const man = bits & 0x3ff;
  if (exp === 0x1f) return man === 0 ? sign * Infinity : NaN;
  if (exp === 0) return sign * man * 2 ** -24;
  return sign * (1024 + man) * 2 ** (exp - 25);
}

/** bfloat16 is the high half of a float32 */
export function bfloat16FromBits(bits: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, bits << 16);
  return view.getFloat32(0);
}

/** little-endian bytes of `values` rounded once to `dtype` */
export function bytesOf(dtype: Dtype, values: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * ITEMSIZE[dtype]);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => {
    if (dtype === 'float32') view.setFloat32(i * 4, v, true);
    else if (dtype === 'float64') view.setFloat64(i * 8, v, true);
    else view.setUint16(i * 2, dtype === 'float16' ? oracleFloat16Bits(v) : oracleBfloat16Bits(v), true);
  });
  return bytes;
}

/** the values held in little-endian `bytes` of `dtype`, at any byte offset */
export function valuesFromBytes(dtype: Dtype, bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = bytes.byteLength / ITEMSIZE[dtype];
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    if (dtype === 'float32') out.push(view.getFloat32(i * 4, true));
    else if (dtype === 'float64') out.push(view.getFloat64(i * 8, true));
    else if (dtype === 'float16') out.push(float16FromBits(view.getUint16(i * 2, true)));
    else out.push(bfloat16FromBits(view.getUint16(i * 2, true)));
  }
  return out;
}

const NON_FINITE: Readonly<Record<string, number>> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };

/** JSON data: non-finite values travel as "NaN", "Infinity", "-Infinity" */
export function jsonData(values: readonly number[]): (number | string)[] {
  return values.map((v) => (Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity'));
}

export interface WireTensor {
  dtype?: string;
  shape: number[];
  data: unknown;
}

/** the numbers a response tensor holds, whichever way it came: JSON list or msgpack bin */
export function valuesOf(tensor: WireTensor): number[] {
  const { data } = tensor;
  if (Array.isArray(data)) {
    return data.map((v) => {
      if (typeof v === 'number') return v;
      if (typeof v === 'string' && v in NON_FINITE) return NON_FINITE[v];
      throw new Error(`unexpected element ${JSON.stringify(v)}`);
    });
  }
  if (data instanceof Uint8Array) return valuesFromBytes(tensor.dtype as Dtype, data);
  throw new Error(`unexpected data ${Object.prototype.toString.call(data)}`);
}

import { mulberry32 } from '../reference/contract.mjs';

/** the one seeded generator, so every run sends the same tensors */
export const seeded = mulberry32;

/** `count` values uniform in [offset - scale, offset + scale) */
export function randomValues(seed: number, count: number, scale = 1, offset = 0): number[] {
  const next = seeded(seed);
  return Array.from({ length: count }, () => offset + scale * (2 * next() - 1));
}

export function product(shape: readonly number[]): number {
  return shape.reduce((p, d) => p * d, 1);
}
