// the msgpack bytes around tensor data, so tensors never pass through a packer: a one-output answer's
// prefix sits right before its output in shared memory; a packed answer is these small pieces with
// the tensors' bytes between them, laid out in one slab (jobs/answer-bytes.ts).
import { Packr } from 'msgpackr/pack';
import type { Dtype } from './dtype.js';
import { KeptHeaders } from './kept-headers.js';
import { msgpackTensor } from './write-tensor.js';

const packr = new Packr({ useRecords: false });
const EMPTY = Buffer.alloc(0);
const BIN8_EMPTY = [0xc4, 0x00];
const BIN32 = 0xc6;

// a tensor's map up to the bin32 length is kept per form, dtype and shape; the length is written per answer
const heads = new KeptHeaders();
const keys = new KeptHeaders();

// the last output prefix made: a batch's items, and a client's requests, mostly share one shape
let lastOutput: { dtype: Dtype; shape: number[]; byteLength: number; prefix: Buffer } | null = null;

/** `{output: {dtype, shape, data: bin32}}` up to the data itself (read only: it may be handed out again) */
export function outputPrefix(dtype: Dtype, shape: number[], byteLength: number): Buffer {
  const last = lastOutput;
  if (last !== null && last.dtype === dtype && last.byteLength === byteLength && sameShape(last.shape, shape)) return last.prefix;
  const prefix = withLength(heads.getShaped('output', dtype, shape, () => headOf({ output: msgpackTensor(dtype, shape, false, EMPTY) })), byteLength);
  lastOutput = { dtype, shape: [...shape], byteLength, prefix };
  return prefix;
}

function sameShape(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** a tensor's map, plain or msgpack-numpy's, up to its data (a bin32 of byteLength) */
export function tensorPrefix(dtype: Dtype, shape: number[], numpyForm: boolean, byteLength: number): Buffer {
  const form = numpyForm ? 'numpy' : 'plain';
  return withLength(heads.getShaped(form, dtype, shape, () => headOf(msgpackTensor(dtype, shape, numpyForm, EMPTY))), byteLength);
}

/** a string as a map key */
export function keyBytes(name: string): Buffer {
  return keys.get(name, () => packr.pack(name));
}

/** the header of a map of `count` entries (fixmap, map16, map32) */
export function mapHeader(count: number): Buffer {
  return containerHeader(count, 0x80, 0xde);
}

/** the header of an array of `count` items (fixarray, array16, array32) */
export function arrayHeader(count: number): Buffer {
  return containerHeader(count, 0x90, 0xdc);
}

function containerHeader(count: number, fix: number, wide16: number): Buffer {
  if (count < 16) return Buffer.of(fix | count);
  if (count < 0x10000) return Buffer.of(wide16, count >> 8, count & 0xff);
  const header = Buffer.allocUnsafe(5);
  header[0] = wide16 + 1; // map32 / array32
  header.writeUInt32BE(count, 1);
  return header;
}

function withLength(head: Buffer, byteLength: number): Buffer {
  const prefix = Buffer.allocUnsafe(head.length + 4);
  head.copy(prefix);
  prefix.writeUInt32BE(byteLength, head.length);
  return prefix;
}

/** the value packed with empty data ends in that data's bin8 header `c4 00`: a bin32 type byte instead */
function headOf(value: unknown): Buffer {
  const packed = packr.pack(value);
  if (packed[packed.length - 2] !== BIN8_EMPTY[0] || packed[packed.length - 1] !== BIN8_EMPTY[1]) {
    throw new Error('msgpack prefix: the data is not the last field');
  }
  const head = Buffer.alloc(packed.length - 1);
  packed.copy(head, 0, 0, packed.length - 2);
  head[head.length - 1] = BIN32;
  return head;
}
