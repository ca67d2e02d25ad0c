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

/** a result tensor as msgpack carries it (JSON answers are written as text: codec/number-text.ts) */
export function encodeTensor(t: TensorOut, numpyForm: boolean): unknown {
  const data = tensorBytes(t);
  const numpyType = DTYPES[t.dtype].numpyType;
  if (numpyForm && numpyType !== null) {
    return new Map<Buffer, unknown>([
      [KEY.nd, true], [KEY.type, numpyType], [KEY.kind, EMPTY_KIND], [KEY.shape, t.shape], [KEY.data, data],
    ]);
  }
  return { dtype: t.dtype, shape: t.shape, data };
}

/** the tensor's little-endian bytes: a view of shared memory, except float16/bfloat16 held widened */
export function tensorBytes(t: TensorOut): Buffer {
  const itemsize = DTYPES[t.dtype].itemsize;
  if (t.storage === 'bits' || itemsize === (t.storage === 'float64' ? 8 : 4)) {
    return Buffer.from(t.memory, t.byteOffset, t.length * itemsize);
  }
  const values = new Float32Array(t.memory, t.byteOffset, t.length);
  const bits = new Uint16Array(t.length);
  if (t.dtype === 'float16') narrowToFloat16(values, bits);
  else narrowToBfloat16(values, bits);
  return Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength);
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
