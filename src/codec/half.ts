// float16 and bfloat16 conversions, hand-written (Node 20 has no Float16Array).
// narrowing rounds the float64 value once, to nearest with ties to even, straight
// from float64: going through float32 first would round twice and break ties.

const scratch = new Float64Array(1);
const words = new Uint32Array(scratch.buffer);
// the high word of a float64 sits at index 1 on little-endian hosts, 0 on big-endian
const HI = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 1 : 0;
const TWO_POW_52 = 4503599627370496;

// narrowing, by the float64 exponent field e: |v|·SCALE[e] is exact and puts the last
// kept bit at 2^0, adding 2^52 rounds that to an integer m (ties to even), and BASE[e] + m
// is the pattern, with carries running into the exponent and at the top into infinity
// (65520 → 0x7c00, as numpy). Below the smallest normal the scale is fixed (subnormals).
// One table read replaces the bit surgery and is about twice as fast.
const F16_SCALE = new Float64Array(2048);
const F16_BASE = new Int32Array(2048);
const BF16_SCALE = new Float64Array(2048);
const BF16_BASE = new Int32Array(2048);
for (let e = 0; e < 2048; e++) {
  const exp = e - 1023;
  F16_SCALE[e] = exp < -14 ? 2 ** 24 : 2 ** (10 - exp);
  F16_BASE[e] = exp < -14 ? 0 : (exp + 14) << 10;
  BF16_SCALE[e] = exp < -126 ? 2 ** 133 : 2 ** (7 - exp);
  BF16_BASE[e] = exp < -126 ? 0 : (exp + 126) << 7;
}

// every half pattern widened exactly; 256 KiB each, cheaper than decoding bits per element
const FLOAT16_VALUES = new Float32Array(65536);
const BFLOAT16_VALUES = new Float32Array(65536);
{
  const f16 = new Uint32Array(FLOAT16_VALUES.buffer);
  const bf16 = new Uint32Array(BFLOAT16_VALUES.buffer);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    const exp = (h >>> 10) & 0x1f;
    const man = h & 0x3ff;
    if (exp === 0) FLOAT16_VALUES[h] = (sign === 0 ? man : -man) / 2 ** 24;
    else if (exp === 31) f16[h] = sign | 0x7f800000 | (man << 13);
    else f16[h] = sign | ((exp + 112) << 23) | (man << 13);
    bf16[h] = h << 16;
  }
}

/** float64 → binary16 bits, rounded once; NaN gives the quiet NaN 0x7e00 */
export function float16BitsFromNumber(v: number): number {
  scratch[0] = v;
  const hi = words[HI];
  const e = (hi >>> 20) & 0x7ff;
  const sign = (hi >>> 16) & 0x8000;
  if (e >= 1039) return v !== v ? 0x7e00 : sign | 0x7c00; // |v| >= 2^16
  return sign | (F16_BASE[e] + (Math.abs(v) * F16_SCALE[e] + TWO_POW_52 - TWO_POW_52));
}

/** float64 → bfloat16 bits, rounded once (not through float32); NaN gives 0x7fc0 */
export function bfloat16BitsFromNumber(v: number): number {
  scratch[0] = v;
  const hi = words[HI];
  const e = (hi >>> 20) & 0x7ff;
  const sign = (hi >>> 16) & 0x8000;
  if (e >= 1151) return v !== v ? 0x7fc0 : sign | 0x7f80; // |v| >= 2^128
  return sign | (BF16_BASE[e] + (Math.abs(v) * BF16_SCALE[e] + TWO_POW_52 - TWO_POW_52));
}

export function numberFromFloat16Bits(bits: number): number {
  return FLOAT16_VALUES[bits & 0xffff];
}

export function numberFromBfloat16Bits(bits: number): number {
  return BFLOAT16_VALUES[bits & 0xffff];
}

export function roundToFloat16(v: number): number {
  return FLOAT16_VALUES[float16BitsFromNumber(v)];
}

export function roundToBfloat16(v: number): number {
  return BFLOAT16_VALUES[bfloat16BitsFromNumber(v)];
}

/** dst[i] = the value of src[i], for i < src.length */
export function widenFloat16(src: Uint16Array, dst: Float32Array): void {
  const n = src.length;
  for (let i = 0; i < n; i++) dst[i] = FLOAT16_VALUES[src[i]];
}

export function widenBfloat16(src: Uint16Array, dst: Float32Array): void {
  const n = src.length;
  for (let i = 0; i < n; i++) dst[i] = BFLOAT16_VALUES[src[i]];
}

/** dst[i] = the float16 bits of src[i], for i < src.length */
export function narrowToFloat16(src: ArrayLike<number>, dst: Uint16Array): void {
  const n = src.length;
  for (let i = 0; i < n; i++) dst[i] = float16BitsFromNumber(src[i]);
}

export function narrowToBfloat16(src: ArrayLike<number>, dst: Uint16Array): void {
  const n = src.length;
  for (let i = 0; i < n; i++) dst[i] = bfloat16BitsFromNumber(src[i]);
}
