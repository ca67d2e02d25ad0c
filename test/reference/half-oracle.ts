// an independent oracle for float16 / bfloat16 rounding, by search: list every finite
// non-negative value of the format in order, find the neighbours of |v| by bisection and
// take the nearer, the one with the even bit pattern on a tie. Infinity stands in as
// the next value after the largest finite one (2^16 resp. 2^128), which is how
// round-to-nearest-even overflows.

interface Format {
  values: number[];
  infBits: number;
  nanBits: number;
}

function build(count: number, valueOf: (bits: number) => number, infBits: number, nanBits: number): Format {
  const values: number[] = [];
  for (let bits = 0; bits < count; bits++) values.push(valueOf(bits));
  return { values, infBits, nanBits };
}

/** exact value of a non-negative float16 pattern below 0x7c00 */
export function float16Value(bits: number): number {
  const exp = bits >> 10;
  const man = bits & 0x3ff;
  return exp === 0 ? man * 2 ** -24 : (1024 + man) * 2 ** (exp - 25);
}

/** exact value of a non-negative bfloat16 pattern below 0x7f80 */
export function bfloat16Value(bits: number): number {
  const exp = bits >> 7;
  const man = bits & 0x7f;
  return exp === 0 ? man * 2 ** -133 : (128 + man) * 2 ** (exp - 134);
}

const FLOAT16 = build(0x7c01, (b) => (b === 0x7c00 ? 2 ** 16 : float16Value(b)), 0x7c00, 0x7e00);
const BFLOAT16 = build(0x7f81, (b) => (b === 0x7f80 ? 2 ** 128 : bfloat16Value(b)), 0x7f80, 0x7fc0);

function roundBits(f: Format, v: number, signBit: number): number {
  if (Number.isNaN(v)) return f.nanBits;
  const sign = v < 0 || Object.is(v, -0) ? signBit : 0;
  const a = Math.abs(v);
  const top = f.values[f.values.length - 1];
  if (a >= top) return sign | f.infBits;
  let lo = 0;
  let hi = f.values.length - 1;
  // invariant: values[lo] <= a < values[hi]
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (f.values[mid] <= a) lo = mid;
    else hi = mid;
  }
  // 2a and the sum of two neighbours are exact in float64
  const twice = 2 * a;
  const sum = f.values[lo] + f.values[hi];
  if (twice < sum) return sign | lo;
  if (twice > sum) return sign | hi;
  return sign | (lo % 2 === 0 ? lo : hi);
}

export function oracleFloat16Bits(v: number): number {
  return roundBits(FLOAT16, v, 0x8000);
}

export function oracleBfloat16Bits(v: number): number {
  return roundBits(BFLOAT16, v, 0x8000);
}

/** the value of a rounded float16 / bfloat16 result, signed, infinities included */
export function oracleRoundFloat16(v: number): number {
  return valueOfBits(oracleFloat16Bits(v), 10, 5);
}

export function oracleRoundBfloat16(v: number): number {
  return valueOfBits(oracleBfloat16Bits(v), 7, 8);
}

function valueOfBits(bits: number, manBits: number, expBits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const mag = bits & 0x7fff;
  const inf = ((1 << expBits) - 1) << manBits;
  if (mag === inf) return sign * Infinity;
  if (mag > inf) return NaN;
  return sign * (manBits === 10 ? float16Value(mag) : bfloat16Value(mag));
}
