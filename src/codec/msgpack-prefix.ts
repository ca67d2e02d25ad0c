// the msgpack bytes of `{output: {dtype, shape, data: bin32}}` up to the data itself, so the
// workers' output can sit right after them in shared memory and go out without being packed.
import { Packr } from 'msgpackr/pack';
import type { Dtype } from './dtype.js';
import { KeptHeaders } from './kept-headers.js';

const packr = new Packr({ useRecords: false });
const EMPTY = Buffer.alloc(0);
const BIN32 = 0xc6;

// the header up to the bin32 length is kept per dtype and shape; the length is written per request
const heads = new KeptHeaders();

export function outputPrefix(dtype: Dtype, shape: number[], byteLength: number): Buffer {
  const head = heads.get(`${dtype}:${shape.join(',')}`, () => headOf(dtype, shape));
  const prefix = Buffer.allocUnsafe(head.length + 4);
  head.copy(prefix);
  prefix.writeUInt32BE(byteLength, head.length);
  return prefix;
}

/** the body packed with empty data ends in that data's bin8 header `c4 00`: a bin32 type byte instead */
function headOf(dtype: Dtype, shape: number[]): Buffer {
  const packed = packr.pack({ output: { dtype, shape, data: EMPTY } });
  const head = Buffer.alloc(packed.length - 1);
  packed.copy(head, 0, 0, packed.length - 2);
  head[head.length - 1] = BIN32;
  return head;
}
