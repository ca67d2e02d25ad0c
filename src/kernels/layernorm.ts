// LayerNorm over rows: μ = (1/n)·Σx, s = (1/n)·Σ(x - μ)², r = 1/sqrt(s + eps) or
// 1/(sqrt(s) + eps), y = (x - μ)·r·g + β.
import { sumDeviations, sumRow } from './row-sums.js';
import { storeRow } from './store-row.js';
import type { NormBuffers, NormParams } from './types.js';

const sums = new Float64Array(2);

/** normalizes rows [rowStart, rowEnd) of buf.x into buf.y, and buf.mean / buf.rstd when asked */
export function layernormRows(buf: NormBuffers, p: NormParams, rowStart: number, rowEnd: number): void {
  const { x, mean, rstd } = buf;
  const { n, eps, epsOutside } = p;
  for (let row = rowStart; row < rowEnd; row++) {
    const off = row * n;
    // numerics: corrected two-pass (Chan, Golub & LeVeque). A first pass gives the mean
    // m; the second sums d = x - m and d², whose Σd corrects m to within about an ulp of
    // μ (a large mean costs nothing beyond the contract's 2^-46·|μ| allowance), and
    // s = (Σd² - (Σd)²/n)/n has no cancellation because Σd is tiny: never E[x²] - E[x]².
    // Rounding can leave s a hair below 0 for a constant row; max(0, ·) keeps NaN.
    const m = sumRow(x, off, n) / n;
    sumDeviations(x, off, n, m, sums);
    const mu = m + sums[0] / n;
    const s = Math.max(0, (sums[1] - sums[0] * (sums[0] / n)) / n);
    const r = epsOutside ? 1 / (Math.sqrt(s) + eps) : 1 / Math.sqrt(s + eps);
    storeRow(buf, p, off, mu, r);
    if (mean !== null) mean[row] = mu;
    if (rstd !== null) rstd[row] = r;
  }
}
