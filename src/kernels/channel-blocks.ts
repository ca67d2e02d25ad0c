// how a BatchNorm input, seen as [outer, C, inner] (C on channel_axis), is cut into blocks. The cut
// depends on the shape alone, so each block's statistics, and their merge in block order, are the
// same bits whatever the number of workers.
import type { BlockGeometry } from '../pool/protocol.js';

/** about this many elements per block: a few hundred KiB, so a block's second pass reads from cache */
export const BLOCK_ELEMENTS = 1 << 16;

export function blockGeometry(outer: number, channels: number, inner: number): BlockGeometry {
  // a channel's run of `inner` elements is never split; channels are split only when one outer
  // index holds more than a block
  const channelsPerBlock = channels * inner <= BLOCK_ELEMENTS ? channels : Math.max(1, Math.floor(BLOCK_ELEMENTS / Math.max(1, inner)));
  const outerPerBlock = Math.max(1, Math.floor(BLOCK_ELEMENTS / Math.max(1, channelsPerBlock * inner)));
  const channelBlocks = channels === 0 ? 0 : Math.ceil(channels / channelsPerBlock);
  const outerBlocks = Math.ceil(outer / outerPerBlock);
  return { outer, channels, inner, outerPerBlock, channelsPerBlock, channelBlocks, blocks: outerBlocks * channelBlocks };
}

/** block b's outer range [o0, o1) and channel range [c0, c1) */
export interface BlockBounds { o0: number; o1: number; c0: number; c1: number }

export function blockBounds(g: BlockGeometry, b: number, out: BlockBounds): BlockBounds {
  const ob = Math.floor(b / g.channelBlocks);
  const cb = b - ob * g.channelBlocks;
  out.o0 = ob * g.outerPerBlock;
  out.o1 = Math.min(g.outer, out.o0 + g.outerPerBlock);
  out.c0 = cb * g.channelsPerBlock;
  out.c1 = Math.min(g.channels, out.c0 + g.channelsPerBlock);
  return out;
}

/** where block b's statistics start in the partials (two float64 per channel slot: mean, M2) */
export function partialsOffset(g: BlockGeometry, b: number): number {
  return 2 * b * g.channelsPerBlock;
}

export function partialsLength(g: BlockGeometry): number {
  return 2 * g.blocks * g.channelsPerBlock;
}
