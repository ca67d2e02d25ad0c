// LayerNorm over rows: μ = (1/n)·Σx, s = (1/n)·Σ(x - μ)², r = 1/sqrt(s + eps) or
// 1/(sqrt(s) + eps), y = (x - μ)·r·g + β.
import { meanAndVariance } from './row-sums.js';
import { storeRow } from './store-row.js';
import type { NormBuffers, NormParams, RowKernelConfig } from './types.js';

export interface LayernormParams {
  kernel: 'layernorm';
}

const sums = new Float64Array(2);

/** normalizes rows [rowStart, rowEnd) of buf.x into buf.y, and buf.mean / buf.rstd when asked */
export function layernormRows(buf: NormBuffers, p: NormParams, rowStart: number, rowEnd: number): void {
  const { x, mean, rstd } = buf;
  const { n, eps, epsOutside } = p;
  for (let row = rowStart; row < rowEnd; row++) {
    const off = row * n;
    meanAndVariance(x, off, n, sums); // numerics: see row-sums.ts
    const mu = sums[0];
    const s = sums[1];
    const r = epsOutside ? 1 / (Math.sqrt(s) + eps) : 1 / Math.sqrt(s + eps);
    storeRow(buf, p, off, mu, r);
    if (mean !== null) mean[row] = mu;
    if (rstd !== null) rstd[row] = r;
  }
}

export const layernormKernel: RowKernelConfig<LayernormParams> = {
  rows: layernormRows,
  simd: (wasm, task, x, y) => wasm.layernormF32(
    x, y, task.scale.byteOffset, task.bias?.byteOffset ?? null, task.prepared!, task.mean?.byteOffset ?? null,
    task.rstd?.byteOffset ?? null, task.n, task.rowStart, task.rowEnd, task.eps, task.epsOutside,
  ),
  simdApplies: () => true,
  paramLength: (_, n) => n,
};
