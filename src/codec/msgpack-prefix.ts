// the msgpack bytes of `{output: {dtype, shape, data: bin32}}` up to the data itself, so the
// workers' output can sit right after them in shared memory and go out without being packed.
import { Packr } from 'msgpackr/pack';
import type { Dtype } from './dtype.js';

const packr = new Packr({ useRecords: false });
const EMPTY = Buffer.alloc(0);
const BIN32 = 0xc6;

export function outputPrefix(dtype: Dtype, shape: number[], byteLength: number): Buffer {
  // packed with empty data, the body ends in that data's bin8 header `c4 00`: swap in a bin32 header
  const head = packr.pack({ output: { dtype, shape, data: EMPTY } });
  const cut = head.length - 2;
  const prefix = Buffer.allocUnsafe(cut + 5);
  head.copy(prefix, 0, 0, cut);
  prefix[cut] = BIN32;
  prefix.writeUInt32BE(byteLength, cut + 1);
  return prefix;
}
