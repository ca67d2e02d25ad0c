// float64 row sums shared by the kernels.
//
// numerics: each sum runs over blocks of BLOCK elements with two or four accumulators,
// and the block totals are added with Neumaier compensation. The rounding error then
// grows like (BLOCK/2 + 4)·ulp at most rather than n·ulp, which keeps float64 rows of 65,536
// elements well inside the 1e-12 contract at the speed of a plain loop (the four
// independent chains also hide the add latency). A compensation term made NaN by an
// infinite total (Inf - Inf) is dropped, so an infinite row sums to ±Inf as IEEE would.
import type { ValueArray } from './types.js';

const BLOCK = 256;

/** Σ x[i] over [off, off + n) */
export function sumRow(x: ValueArray, off: number, n: number): number {
  const end = off + n;
  let sum = 0;
  let comp = 0;
  for (let b = off; b < end; b += BLOCK) {
    const stop = Math.min(b + BLOCK, end);
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    let i = b;
    for (; i + 3 < stop; i += 4) {
      a0 += x[i];
      a1 += x[i + 1];
      a2 += x[i + 2];
      a3 += x[i + 3];
    }
    for (; i < stop; i++) a0 += x[i];
    const block = (a0 + a1) + (a2 + a3);
    const t = sum + block;
    comp += Math.abs(sum) >= Math.abs(block) ? (sum - t) + block : (block - t) + sum;
    sum = t;
  }
  return comp === comp ? sum + comp : sum;
}

/** Σ x[i]² over [off, off + n) */
export function sumSquares(x: ValueArray, off: number, n: number): number {
  const end = off + n;
  let sum = 0;
  let comp = 0;
  for (let b = off; b < end; b += BLOCK) {
    const stop = Math.min(b + BLOCK, end);
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    let i = b;
    for (; i + 3 < stop; i += 4) {
      const v0 = x[i], v1 = x[i + 1], v2 = x[i + 2], v3 = x[i + 3];
      a0 += v0 * v0;
      a1 += v1 * v1;
      a2 += v2 * v2;
      a3 += v3 * v3;
    }
    for (; i < stop; i++) a0 += x[i] * x[i];
    const block = (a0 + a1) + (a2 + a3);
    const t = sum + block;
    comp += sum >= block ? (sum - t) + block : (block - t) + sum;
    sum = t;
  }
  return comp === comp ? sum + comp : sum;
}

/** out[0] = Σ d, out[1] = Σ d², with d = x[i] - shift over [off, off + n) */
export function sumDeviations(x: ValueArray, off: number, n: number, shift: number, out: Float64Array): void {
  const end = off + n;
  let sum = 0, comp = 0, sq = 0, sqComp = 0;
  for (let b = off; b < end; b += BLOCK) {
    const stop = Math.min(b + BLOCK, end);
    let a0 = 0, a1 = 0, q0 = 0, q1 = 0;
    let i = b;
    for (; i + 1 < stop; i += 2) {
      const d0 = x[i] - shift, d1 = x[i + 1] - shift;
      a0 += d0;
      a1 += d1;
      q0 += d0 * d0;
      q1 += d1 * d1;
    }
    if (i < stop) {
      const d = x[i] - shift;
      a0 += d;
      q0 += d * d;
    }
    const block = a0 + a1;
    const t = sum + block;
    comp += Math.abs(sum) >= Math.abs(block) ? (sum - t) + block : (block - t) + sum;
    sum = t;
    const sqBlock = q0 + q1;
    const u = sq + sqBlock;
    sqComp += sq >= sqBlock ? (sq - u) + sqBlock : (sqBlock - u) + sq;
    sq = u;
  }
  out[0] = comp === comp ? sum + comp : sum;
  out[1] = sqComp === sqComp ? sq + sqComp : sq;
}

/**
 * out[0] = μ, out[1] = s, the biased variance, of x[off, off + n): the corrected two-pass (Chan,
 * Golub & LeVeque). A first pass gives the mean m; the second sums d = x − m and d², whose Σd
 * corrects m to within about an ulp of μ (a large mean costs nothing beyond the contract's
 * 2^-46·|μ| allowance), and s = (Σd² − (Σd)²/n)/n has no cancellation because Σd is tiny: never
 * E[x²] − E[x]². Rounding can leave s a hair below 0 for a constant row; max(0, ·) keeps NaN.
 */
export function meanAndVariance(x: ValueArray, off: number, n: number, out: Float64Array): void {
  const m = sumRow(x, off, n) / n;
  sumDeviations(x, off, n, m, out);
  const d = out[0];
  out[0] = m + d / n;
  out[1] = Math.max(0, (out[1] - d * (d / n)) / n);
}
