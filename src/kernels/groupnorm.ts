// GroupNorm over rows: a row is one group of one sample, C/G channels of `channelRun` elements each.
// Its μ and r are LayerNorm's (the same corrected two-pass), and each channel's run is written with
// that channel's γ and β: y = (x − μ)·(r·γ_c) + β_c.
import { meanAndVariance } from './row-sums.js';
import { storeRun } from './store-channels.js';
import type { NormBuffers, NormParams, RowKernelConfig } from './types.js';

export interface GroupnormParams {
  kernel: 'groupnorm';
  /** elements per channel in a row: scale and bias hold one value per channel */
  channelRun: number;
  /** G: row r starts at channel (r mod G)·n/channelRun */
  groups: number;
}

const sums = new Float64Array(2);

export function groupnormRows(buf: NormBuffers, p: NormParams, rowStart: number, rowEnd: number, params: GroupnormParams): void {
  const { x, y, outDtype, mean, rstd } = buf;
  const { n, eps, scale, bias } = p;
  const { channelRun, groups } = params;
  const channelsPerRow = n / channelRun;
  for (let row = rowStart; row < rowEnd; row++) {
    const off = row * n;
    meanAndVariance(x, off, n, sums);
    const mu = sums[0];
    const r = 1 / Math.sqrt(sums[1] + eps);
    const first = (row % groups) * channelsPerRow;
    for (let k = 0; k < channelsPerRow; k++) {
      const c = first + k;
      storeRun(x, y, outDtype, off + k * channelRun, channelRun, mu, r * scale[c], bias === null ? 0 : bias[c]);
    }
    if (mean !== null) mean[row] = mu;
    if (rstd !== null) rstd[row] = r;
  }
}

export const groupnormKernel: RowKernelConfig<GroupnormParams> = {
  rows: groupnormRows,
  simd: (wasm, task, x, y) => wasm.groupnormF32(
    x, y, task.scale.byteOffset, task.bias?.byteOffset ?? null, task.mean?.byteOffset ?? null, task.rstd?.byteOffset ?? null,
    task.n, task.params.channelRun, task.params.groups, task.rowStart, task.rowEnd, task.eps,
  ),
  simdApplies: () => true,
  // γ and β are per channel: C = (n / channelRun)·G
  paramLength: (params, n) => n / params.channelRun * params.groups,
};
