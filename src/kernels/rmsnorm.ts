// RMSNorm over rows: s = (1/n)·Σx², r = 1/sqrt(s + eps) or 1/(sqrt(s) + eps), y = x·r·g + β.
import { sumSquares } from './row-sums.js';
import { storeRow } from './store-row.js';
import type { NormBuffers, NormParams, RowKernelConfig } from './types.js';

export interface RmsnormParams {
  kernel: 'rmsnorm';
  /** the first sumLength elements of a row give its s: ⌊n·partial⌋ for pRMSNorm, else n */
  sumLength: number;
}

/**
 * normalizes rows [rowStart, rowEnd) of buf.x into buf.y, and buf.rstd when asked; s is taken over
 * the first `sumLength` elements of each row (pRMSNorm; n for RMSNorm)
 */
export function rmsnormRows(buf: NormBuffers, p: NormParams, rowStart: number, rowEnd: number, sumLength = p.n): void {
  const { x, rstd } = buf;
  const { n, eps, epsOutside } = p;
  for (let row = rowStart; row < rowEnd; row++) {
    const off = row * n;
    // squares in float64: float32 rows near 1e±30 stay in range, and the blocked,
    // compensated sum keeps float64 rows accurate (see row-sums.ts). With eps = 0 an
    // all-zero row gives r = Inf and y = 0·Inf = NaN, as the contract asks.
    const s = sumSquares(x, off, sumLength) / sumLength;
    const r = epsOutside ? 1 / (Math.sqrt(s) + eps) : 1 / Math.sqrt(s + eps);
    storeRow(buf, p, off, 0, r);
    if (rstd !== null) rstd[row] = r;
  }
}

export const rmsnormKernel: RowKernelConfig<RmsnormParams> = {
  rows: (buf, norm, rowStart, rowEnd, params) => rmsnormRows(buf, norm, rowStart, rowEnd, params.sumLength),
  simd: (wasm, task, x, y) => wasm.rmsnormF32(
    x, y, task.scale.byteOffset, task.bias?.byteOffset ?? null, task.prepared!, task.rstd?.byteOffset ?? null,
    task.n, task.rowStart, task.rowEnd, task.eps, task.epsOutside,
  ),
  // no SIMD kernel for pRMSNorm yet
  simdApplies: (params, n) => params.sumLength === n,
  paramLength: (_, n) => n,
};
