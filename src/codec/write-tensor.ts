// a job's results in shared memory → the response body's tensors, msgpack or JSON.
import { DTYPES, type Dtype } from './dtype.js';
import { narrowToBfloat16, narrowToFloat16, numberFromBfloat16Bits, numberFromFloat16Bits } from './half.js';

export type Encoding = 'msgpack' | 'json';

/** a result tensor as it sits in memory: `storage` is how its elements are held there */
export interface TensorOut {
  dtype: Dtype;
  shape: number[];
  memory: SharedArrayBuffer;
  byteOffset: number;
  length: number;
  /** 'bits': float16/bfloat16 bit patterns; 'float32'/'float64': values of that type */
  storage: 'bits' | 'float32' | 'float64';
}

// msgpack-numpy keys are bin; built once
const KEY = {
  nd: Buffer.from('nd'), type: Buffer.from('type'), kind: Buffer.from('kind'),
  shape: Buffer.from('shape'), data: Buffer.from('data'),
};
const EMPTY_KIND = Buffer.alloc(0);

/** a tensor as msgpack carries it, `data` its bytes (JSON answers are written as text:
 *  codec/number-text.ts); `data` comes last in both forms, so a prefix can end right before it */
export function msgpackTensor(dtype: Dtype, shape: number[], numpyForm: boolean, data: Uint8Array): unknown {
  const numpyType = DTYPES[dtype].numpyType;
  if (numpyForm && numpyType !== null) {
    return new Map<Buffer, unknown>([
      [KEY.nd, true], [KEY.type, numpyType], [KEY.kind, EMPTY_KIND], [KEY.shape, shape], [KEY.data, data],
    ]);
  }
  return { dtype, shape, data };
}

/** bytes where they lie in the shared memory */
export interface HeldBytes { byteOffset: number; length: number }

/** the tensor's little-endian bytes: where they lie in shared memory, except float16/bfloat16 held
 *  widened, which are narrowed into ordinary memory */
export function tensorPiece(t: TensorOut): HeldBytes | Buffer {
  const itemsize = DTYPES[t.dtype].itemsize;
  if (t.storage === 'bits' || itemsize === (t.storage === 'float64' ? 8 : 4)) return { byteOffset: t.byteOffset, length: t.length * itemsize };
  const values = new Float32Array(t.memory, t.byteOffset, t.length);
  const bits = new Uint16Array(t.length);
  if (t.dtype === 'float16') narrowToFloat16(values, bits);
  else narrowToBfloat16(values, bits);
  return Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength);
}

/** the same bytes as one Buffer: a view of shared memory, or the narrowed copy */
export function tensorBytes(t: TensorOut): Buffer {
  const piece = tensorPiece(t);
  return Buffer.isBuffer(piece) ? piece : Buffer.from(t.memory, piece.byteOffset, piece.length);
}

/** the tensor's values as numbers (float16/bfloat16 bits widened) */
export function tensorValues(t: TensorOut): ArrayLike<number> {
  if (t.storage === 'float64') return new Float64Array(t.memory, t.byteOffset, t.length);
  if (t.storage === 'float32') return new Float32Array(t.memory, t.byteOffset, t.length);
  const bits = new Uint16Array(t.memory, t.byteOffset, t.length);
  const widen = t.dtype === 'float16' ? numberFromFloat16Bits : numberFromBfloat16Bits;
  const values = new Float64Array(t.length);
  for (let i = 0; i < t.length; i++) values[i] = widen(bits[i]);
  return values;
}
