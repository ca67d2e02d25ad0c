// the load suite's own float64 reference and tolerance, independent of src/: a spot check
// must not trust the code it checks.

export type Op = 'rmsnorm' | 'layernorm';

/** the contract's default eps per operation */
export const DEFAULT_EPS: Readonly<Record<Op, number>> = { rmsnorm: 1e-6, layernorm: 1e-5 };

/** mulberry32: small, seeded, good enough for test data */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** rows of uniform values of unit variance, each row with its own offset and scale so layernorm has a mean to remove */
export function randomRows(rows: number, n: number, seed: number): Float32Array {
  const next = rng(seed);
  const x = new Float32Array(rows * n);
  let state = (seed * 0x9e3779b1 + 1) >>> 0 || 1;
  for (let r = 0; r < rows; r++) {
    const offset = 4 * next() - 2;
    const scale = (0.5 + 2.5 * next()) * 2 * Math.sqrt(3) / 4294967296;
    const base = offset - scale * 2147483648;
    for (let i = r * n, end = i + n; i < end; i++) {
      // xorshift32 inline: megabytes of test data in milliseconds
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      x[i] = base + scale * (state >>> 0);
    }
  }
  return x;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** bfloat16 bits of a finite float32 value, round to nearest, ties to even */
export function bfloat16Bits(v: number): number {
  f32[0] = v;
  const bits = u32[0];
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

export function bfloat16Value(bits: number): number {
  u32[0] = bits << 16;
  return f32[0];
}

/** one unit in the last place of bfloat16 at v (8 significant bits) */
export function bfloat16Ulp(v: number): number {
  const a = Math.abs(v);
  if (a === 0) return 2 ** -133;
  return 2 ** (Math.max(Math.floor(Math.log2(a)), -126) - 7);
}

/** y = normalized rows of x, in float64, weight ones, bias zeros, eps inside */
export function referenceRows(op: Op, x: ArrayLike<number>, rows: number, n: number, eps = DEFAULT_EPS[op]): Float64Array {
  const y = new Float64Array(rows * n);
  for (let r = 0; r < rows; r++) {
    const off = r * n;
    let mu = 0;
    if (op === 'layernorm') {
      for (let i = 0; i < n; i++) mu += x[off + i];
      mu /= n;
    }
    let s = 0;
    for (let i = 0; i < n; i++) {
      const d = x[off + i] - mu;
      s += d * d;
    }
    const rs = 1 / Math.sqrt(s / n + eps);
    for (let i = 0; i < n; i++) y[off + i] = (x[off + i] - mu) * rs;
  }
  return y;
}

/**
 * the contract's float32 bound, |y - ref| ≤ 1e-5 + 1e-5·|ref|, plus one bfloat16 ulp for
 * bfloat16 output; null when every value is within it, else what the first miss was
 */
export function compareValues(got: ArrayLike<number>, ref: Float64Array, bf16: boolean): string | null {
  if (got.length !== ref.length) return `output has ${got.length} values, expected ${ref.length}`;
  for (let i = 0; i < ref.length; i++) {
    const want = ref[i];
    const bound = 1e-5 + 1e-5 * Math.abs(want) + (bf16 ? bfloat16Ulp(want) : 0);
    const diff = Math.abs(got[i] - want);
    if (!(diff <= bound)) return `output[${i}] = ${got[i]}, reference ${want} (|diff| ${diff.toExponential(2)} > ${bound.toExponential(2)})`;
  }
  return null;
}
