// BatchNorm statistics: each tile's per-channel mean and M2 (sum of squared deviations), then the
// tiles of each channel merged in a fixed pairwise order (Chan, Golub & LeVeque).
//
// numerics: within a tile, a corrected two-pass in float64 (as LayerNorm's rows): a first pass
// gives m, the second sums d = x − m and d², and μ = m + Σd/M, M2 = Σd² − (Σd)²/M has no
// cancellation because Σd is tiny; never E[x²] − E[x]². Tiles hold at most TILE_ELEMENTS values,
// and the pairwise merge adds only log₂(tiles) roundings, so M up to 2²⁴ stays accurate.
import { tileBounds, partialsOffset, type TileBounds } from './channel-tiles.js';
import type { ValueArray } from './types.js';
import type { TileGeometry } from '../pool/protocol.js';

// per channel of a tile: Σx (then m), Σd, Σd²
let sums = new Float64Array(0);
let deviations = new Float64Array(0);
let squares = new Float64Array(0);
const bounds: TileBounds = { o0: 0, o1: 0, c0: 0, c1: 0 };

function scratch(length: number): void {
  if (sums.length < length) {
    sums = new Float64Array(length);
    deviations = new Float64Array(length);
    squares = new Float64Array(length);
  }
  sums.fill(0, 0, length);
  deviations.fill(0, 0, length);
  squares.fill(0, 0, length);
}

/** writes tile b's mean and M2 for each of its channels into partials */
export function tileStats(x: ValueArray, g: TileGeometry, b: number, partials: Float64Array): void {
  const { o0, o1, c0, c1 } = tileBounds(g, b, bounds);
  const { channels: C, inner: I } = g;
  const width = c1 - c0;
  const count = (o1 - o0) * I;
  scratch(width);
  for (let o = o0; o < o1; o++) {
    for (let c = c0; c < c1; c++) {
      const off = (o * C + c) * I;
      let s = 0;
      for (let i = off, end = off + I; i < end; i++) s += x[i];
      sums[c - c0] += s;
    }
  }
  for (let k = 0; k < width; k++) sums[k] /= count; // the first pass's m, per channel
  for (let o = o0; o < o1; o++) {
    for (let c = c0; c < c1; c++) {
      const off = (o * C + c) * I;
      const m = sums[c - c0];
      let d1 = 0;
      let d2 = 0;
      for (let i = off, end = off + I; i < end; i++) {
        const d = x[i] - m;
        d1 += d;
        d2 += d * d;
      }
      deviations[c - c0] += d1;
      squares[c - c0] += d2;
    }
  }
  const at = partialsOffset(g, b);
  for (let k = 0; k < width; k++) {
    const d1 = deviations[k];
    const d2 = squares[k];
    partials[at + 2 * k] = sums[k] + d1 / count;
    partials[at + 2 * k + 1] = Math.max(0, d2 - d1 * (d1 / count));
  }
}

let means = new Float64Array(0);
let m2s = new Float64Array(0);
let counts = new Float64Array(0);

/**
 * channel c's mean and M2 over all its tiles, into out[0], out[1]: pairs of neighbours merged level
 * by level, so the order is fixed by the tile layout alone
 */
export function mergeChannel(g: TileGeometry, partials: Float64Array, c: number, out: Float64Array): void {
  const outerTiles = g.tiles / g.channelTiles;
  if (means.length < outerTiles) {
    means = new Float64Array(outerTiles);
    m2s = new Float64Array(outerTiles);
    counts = new Float64Array(outerTiles);
  }
  const cb = Math.floor(c / g.channelsPerTile);
  const slot = c - cb * g.channelsPerTile;
  for (let ob = 0; ob < outerTiles; ob++) {
    const at = partialsOffset(g, ob * g.channelTiles + cb) + 2 * slot;
    means[ob] = partials[at];
    m2s[ob] = partials[at + 1];
    counts[ob] = (Math.min(g.outer, (ob + 1) * g.outerPerTile) - ob * g.outerPerTile) * g.inner;
  }
  for (let width = outerTiles; width > 1; width = Math.ceil(width / 2)) {
    for (let i = 0; 2 * i < width; i++) {
      const a = 2 * i;
      const b = a + 1;
      if (b === width) {
        means[i] = means[a];
        m2s[i] = m2s[a];
        counts[i] = counts[a];
        continue;
      }
      const n = counts[a] + counts[b];
      const delta = means[b] - means[a];
      means[i] = means[a] + delta * (counts[b] / n);
      m2s[i] = m2s[a] + m2s[b] + delta * delta * (counts[a] * (counts[b] / n));
      counts[i] = n;
    }
  }
  out[0] = means[0];
  out[1] = m2s[0];
}
