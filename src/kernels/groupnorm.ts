// GroupNorm over rows: a row is one group of one sample, C/G channels of `channelRun` elements each.
// Its μ and r are LayerNorm's (the same corrected two-pass), and each channel's run is written with
// that channel's γ and β: y = (x − μ)·(r·γ_c) + β_c.
import { meanAndVariance } from './row-sums.js';
import { storeRun } from './store-channels.js';
import type { NormBuffers, NormParams } from './types.js';

const sums = new Float64Array(2);

/** `channelRun`: elements per channel; `groups`: G, so row r's first channel is (r mod G)·n/channelRun */
export function groupnormRows(buf: NormBuffers, p: NormParams, channelRun: number, groups: number, rowStart: number, rowEnd: number): void {
  const { x, y, outDtype, mean, rstd } = buf;
  const { n, eps, scale, bias } = p;
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
