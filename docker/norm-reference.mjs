// float64 references for the container checks, and the contract's float32 tolerance
// (API.md §2 Accuracy: |y − ref| ≤ 1e-5 + 1e-5·|ref|).

/** normalizes each row of `cols` values of `x` (any array-like) in float64 */
export function reference(op, x, cols, { eps = op === 'rmsnorm' ? 1e-6 : 1e-5, weight, bias } = {}) {
  const out = new Float64Array(x.length);
  for (let start = 0; start < x.length; start += cols) {
    let mean = 0;
    if (op === 'layernorm') {
      for (let i = 0; i < cols; i++) mean += x[start + i];
      mean /= cols;
    }
    let s = 0;
    for (let i = 0; i < cols; i++) s += (x[start + i] - mean) ** 2;
    const r = 1 / Math.sqrt(s / cols + eps);
    for (let i = 0; i < cols; i++) {
      out[start + i] = (x[start + i] - mean) * r * (weight?.[i] ?? 1) + (bias?.[i] ?? 0);
    }
  }
  return out;
}

/** the index of the first element outside the float32 tolerance, or -1 */
export function firstMismatch(actual, expected) {
  if (actual.length !== expected.length) return 0;
  for (let i = 0; i < expected.length; i++) {
    if (!(Math.abs(actual[i] - expected[i]) <= 1e-5 + 1e-5 * Math.abs(expected[i]))) return i;
  }
  return -1;
}

/** throws naming the first element out of tolerance */
export function assertClose(what, actual, expected) {
  const i = firstMismatch(actual, expected);
  if (i >= 0) throw new Error(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (length ${actual.length} vs ${expected.length})`);
}

/** a deterministic pseudo-random float32 tensor (xorshift), so failures reproduce */
export function sampleTensor(length, seed = 1) {
  const data = new Float32Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    data[i] = ((state >>> 0) / 2 ** 32 - 0.5) * 8 + 1;
  }
  return data;
}

/** the contract's worked example (API.md, README): RMSNorm, eps 0 */
export const workedExample = {
  body: { input: { shape: [2, 4], data: [1, 2, 3, 4, -1, -2, -3, -4] }, eps: 0 },
  rounded: [0.3651, 0.7303, 1.0954, 1.4606, -0.3651, -0.7303, -1.0954, -1.4606],
};
