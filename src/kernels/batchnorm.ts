// BatchNorm over tiles of [outer, C, inner]: the statistics pass (per tile, see channel-stats.ts)
// and the output pass y = (x − μ_c)·(r_c·γ_c) + β_c, with μ, r·γ and β per channel worked out
// between the two passes on the main thread.
import { tileBounds, type TileBounds } from './channel-tiles.js';
import { storeAcross, storeRun } from './store-channels.js';
import type { OutputArray, ValueArray } from './types.js';
import type { Dtype } from '../codec/dtype.js';
import type { TileGeometry } from '../pool/protocol.js';

const bounds: TileBounds = { o0: 0, o1: 0, c0: 0, c1: 0 };

export interface ChannelParams {
  shift: Float64Array;
  factor: Float64Array;
  bias: Float64Array;
}

/** writes y for tiles [tileStart, tileEnd) */
export function batchnormTiles(
  x: ValueArray, y: OutputArray, outDtype: Dtype, g: TileGeometry, p: ChannelParams, tileStart: number, tileEnd: number,
): void {
  const { channels: C, inner: I } = g;
  for (let b = tileStart; b < tileEnd; b++) {
    const { o0, o1, c0, c1 } = tileBounds(g, b, bounds);
    for (let o = o0; o < o1; o++) {
      if (I === 1) {
        storeAcross(x, y, outDtype, o * C + c0, c0, c1, p.shift, p.factor, p.bias);
        continue;
      }
      for (let c = c0; c < c1; c++) storeRun(x, y, outDtype, (o * C + c) * I, I, p.shift[c], p.factor[c], p.bias[c]);
    }
  }
}
