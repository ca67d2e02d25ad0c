// how a BatchNorm input, seen as [outer, C, inner] (C on channel_axis), is cut into tiles. The cut
// depends on the shape alone, so each tile's statistics, and their merge in tile order, are the
// same bits whatever the number of workers.
import type { TileGeometry } from '../pool/protocol.js';

/** about this many elements per tile: a few hundred KiB, so a tile's second pass reads from cache */
export const TILE_ELEMENTS = 1 << 16;

export function tileGeometry(outer: number, channels: number, inner: number): TileGeometry {
  // a channel's run of `inner` elements is never split; channels are split only when one outer
  // index holds more than a tile
  const channelsPerTile = channels * inner <= TILE_ELEMENTS ? channels : Math.max(1, Math.floor(TILE_ELEMENTS / Math.max(1, inner)));
  const outerPerTile = Math.max(1, Math.floor(TILE_ELEMENTS / Math.max(1, channelsPerTile * inner)));
  const channelTiles = channels === 0 ? 0 : Math.ceil(channels / channelsPerTile);
  const outerTiles = Math.ceil(outer / outerPerTile);
  return { outer, channels, inner, outerPerTile, channelsPerTile, channelTiles, tiles: outerTiles * channelTiles };
}

/** tile b's outer range [o0, o1) and channel range [c0, c1) */
export interface TileBounds { o0: number; o1: number; c0: number; c1: number }

export function tileBounds(g: TileGeometry, b: number, out: TileBounds): TileBounds {
  const ob = Math.floor(b / g.channelTiles);
  const cb = b - ob * g.channelTiles;
  out.o0 = ob * g.outerPerTile;
  out.o1 = Math.min(g.outer, out.o0 + g.outerPerTile);
  out.c0 = cb * g.channelsPerTile;
  out.c1 = Math.min(g.channels, out.c0 + g.channelsPerTile);
  return out;
}

/** where tile b's statistics start in the partials (two float64 per channel slot: mean, M2) */
export function partialsOffset(g: TileGeometry, b: number): number {
  return 2 * b * g.channelsPerTile;
}

export function partialsLength(g: TileGeometry): number {
  return 2 * g.tiles * g.channelsPerTile;
}
