// the container checks' helpers over the project's one test reference (test/reference/contract.mjs):
// the float64 reference, the contract's float32 tolerance and the seeded generator.
import { firstMismatch, mulberry32, referenceRows } from '../test/reference/contract.mjs';

export { firstMismatch };

/** normalizes each row of `cols` values of `x` (any array-like) in float64 */
export const reference = referenceRows;

/** throws naming the first element out of tolerance */
export function assertClose(what, actual, expected) {
  const i = firstMismatch(actual, expected);
  if (i >= 0) throw new Error(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (length ${actual.length} vs ${expected.length})`);
}

/** a deterministic pseudo-random float32 tensor, so failures reproduce */
export function sampleTensor(length, seed = 1) {
  const next = mulberry32(seed);
  const data = new Float32Array(length);
  for (let i = 0; i < length; i++) data[i] = (next() - 0.5) * 8 + 1;
  return data;
}

/** the contract's worked example (API.md, README): RMSNorm, eps 0 */
export const workedExample = {
  body: { input: { shape: [2, 4], data: [1, 2, 3, 4, -1, -2, -3, -4] }, eps: 0 },
  rounded: [0.3651, 0.7303, 1.0954, 1.4606, -0.3651, -0.7303, -1.0954, -1.4606],
};
