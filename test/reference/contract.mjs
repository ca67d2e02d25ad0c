// the contract's numbers, for every check of a result in test/, load/ and docker/ alike: the accuracy
// bound of API.md §2, one unit in the last place of the half formats, a float64 reference of the
// row-wise operations for ordinary inputs, and the one seeded generator. Plain JavaScript, so the
// container checks (node docker/*.mjs) import it as they are.

/** API.md §2, Accuracy */
export const FLOAT32_ABS = 1e-5;
export const FLOAT32_REL = 1e-5;
export const FLOAT64_ABS = 1e-12;
export const FLOAT64_REL = 1e-12;
/** LayerNorm's float64 bound is widened by this · |μ|·r·|g| */
export const LARGE_MEAN_WIDENING = 2 ** -46;

export const DEFAULT_EPS = Object.freeze({ rmsnorm: 1e-6, layernorm: 1e-5 });

function exponentOf(a) {
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  return e;
}

/** one unit in the last place of a float16 / bfloat16 at |ref| (subnormal spacing below the normals) */
export function ulp(dtype, ref) {
  const [minExp, mantissaBits] = dtype === 'float16' ? [-14, 10] : [-126, 7];
  const a = Math.abs(ref);
  return 2 ** (Math.max(a === 0 ? minExp : exponentOf(a), minExp) - mantissaBits);
}

/** the allowed |y − ref| for one element of `dtype`; largeMean = |μ|·r·|g| for LayerNorm, else 0 */
export function tolerance(dtype, ref, largeMean = 0) {
  const f32 = FLOAT32_ABS + FLOAT32_REL * Math.abs(ref);
  if (dtype === 'float32') return f32;
  if (dtype === 'float64') return FLOAT64_ABS + FLOAT64_REL * Math.abs(ref) + LARGE_MEAN_WIDENING * largeMean;
  return f32 + ulp(dtype, ref);
}

/** the index of the first element of `actual` outside the `dtype` bound around `expected`, or -1 */
export function firstMismatch(actual, expected, dtype = 'float32') {
  if (actual.length !== expected.length) return 0;
  for (let i = 0; i < expected.length; i++) {
    if (!(Math.abs(actual[i] - expected[i]) <= tolerance(dtype, expected[i]))) return i;
  }
  return -1;
}

/** mulberry32: a seeded generator of uniform values in [0, 1), so every run sends the same tensors */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * every row of `n` values of `x` (any array-like) normalized in float64, two-pass, eps inside; for
 * ordinary inputs (test/reference/norm-reference.ts is the exact one for the hard cases)
 */
export function referenceRows(op, x, n, { eps = DEFAULT_EPS[op], weight, bias } = {}) {
  const y = new Float64Array(x.length);
  for (let off = 0; off < x.length; off += n) {
    let mu = 0;
    if (op === 'layernorm') {
      for (let i = 0; i < n; i++) mu += x[off + i];
      mu /= n;
    }
    let s = 0;
    for (let i = 0; i < n; i++) s += (x[off + i] - mu) ** 2;
    const r = 1 / Math.sqrt(s / n + eps);
    for (let i = 0; i < n; i++) y[off + i] = (x[off + i] - mu) * r * (weight?.[i] ?? 1) + (bias?.[i] ?? 0);
  }
  return y;
}
