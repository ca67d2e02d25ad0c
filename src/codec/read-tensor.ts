// a wire tensor (already schema-checked) → its dtype, shape and a source of values,
// checked against the contract; and the one copy of those values into shared memory.
import { serviceError } from '../errors.js';
import { DTYPES, type Dtype } from './dtype.js';
import { ParsedNumbers } from './json-body.js';
import { roundToBfloat16, roundToFloat16, widenBfloat16, widenFloat16 } from './half.js';

export type WireTensor = { dtype?: unknown; shape: number[]; data: unknown };

export type TensorSource =
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'typed'; values: Float32Array | Float64Array }
  /** numbers, or NaN / Infinity / -Infinity as strings; a list parsed on a worker as float64 */
  | { kind: 'list'; list: ArrayLike<unknown> };

export interface TensorIn {
  dtype: Dtype;
  shape: number[];
  size: number;
  source: TensorSource;
}

const NON_FINITE: Readonly<Record<string, number>> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };

/** checks a tensor's data against its dtype and shape; `path` names it in errors (e.g. `requests[2].weight`) */
export function readTensor(wire: WireTensor, path: string, fromJson: boolean): TensorIn {
  const shape = wire.shape;
  let size = 1;
  for (const dim of shape) size *= dim;
  const data = wire.data;
  if (data instanceof Float32Array || data instanceof Float64Array) {
    const typedDtype: Dtype = data instanceof Float32Array ? 'float32' : 'float64';
    if (wire.dtype !== undefined && wire.dtype !== typedDtype) {
      throw serviceError('dataExtensionDtype', path, data.constructor.name, String(wire.dtype));
    }
    checkLength(data.length, size, shape, path, 'elements');
    return { dtype: typedDtype, shape, size, source: { kind: 'typed', values: data } };
  }
  if (ArrayBuffer.isView(data) && !(data instanceof Uint8Array)) {
    throw serviceError('dataTypedArray', path, data.constructor.name);
  }
  if (data instanceof Uint8Array) {
    if (wire.dtype === undefined) throw serviceError('dtypeRequired', path);
    const dtype = wire.dtype as Dtype;
    const itemsize = DTYPES[dtype].itemsize;
    if (data.byteLength !== size * itemsize) {
      throw serviceError('dataBytes', path, data.byteLength, shape.join(', '), dtype, size * itemsize);
    }
    return { dtype, shape, size, source: { kind: 'bytes', bytes: data } };
  }
  if (data instanceof ParsedNumbers) {
    // every item already read as a number on the worker (codec/json-lists.ts)
    checkLength(data.numbers.length, size, shape, path, 'numbers');
    return { dtype: (wire.dtype as Dtype | undefined) ?? 'float32', shape, size, source: { kind: 'list', list: data.numbers } };
  }
  if (Array.isArray(data)) {
    checkLength(data.length, size, shape, path, 'numbers');
    checkList(data, path, fromJson);
    return { dtype: (wire.dtype as Dtype | undefined) ?? 'float32', shape, size, source: { kind: 'list', list: data } };
  }
  throw serviceError('dataKind', path);
}

function checkLength(length: number, size: number, shape: number[], path: string, unit: string): void {
  if (length !== size) {
    throw serviceError('dataCount', path, length, unit, shape.join(', '), size);
  }
}

function checkList(list: unknown[], path: string, fromJson: boolean): void {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v === 'number') {
      // JSON can only produce a non-finite number by overflow (1e400); msgpack floats may be any IEEE value
      if (fromJson && !Number.isFinite(v)) throw serviceError('dataOverflow', `${path}.data[${i}]`);
    } else if (typeof v !== 'string' || !(v in NON_FINITE)) {
      throw serviceError('dataNotNumber', `${path}.data[${i}]`);
    }
  }
}

/**
 * writes a tensor's values into `dst`: the single copy from the request body into shared memory.
 * float32/float64 bytes into their own type are a byte copy; float16/bfloat16 widen exactly to float32;
 * list values are rounded once, from their float64 value, to the tensor's dtype.
 */
export function writeValues(tensor: TensorIn, dst: Float32Array | Float64Array): void {
  const { source, dtype } = tensor;
  if (source.kind === 'typed') {
    dst.set(source.values);
  } else if (source.kind === 'list') {
    writeList(source.list, dtype, dst);
  } else if ((dtype === 'float32' && dst instanceof Float32Array) || (dtype === 'float64' && dst instanceof Float64Array)) {
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(source.bytes);
  } else if ((dtype === 'float16' || dtype === 'bfloat16') && dst instanceof Float32Array) {
    const bits = uint16View(source.bytes);
    if (dtype === 'float16') widenFloat16(bits, dst);
    else widenBfloat16(bits, dst);
  } else {
    writeBytesSlow(source.bytes, dtype, dst);
  }
}

function writeList(list: ArrayLike<unknown>, dtype: Dtype, dst: Float32Array | Float64Array): void {
  const round = dtype === 'float16' ? roundToFloat16 : dtype === 'bfloat16' ? roundToBfloat16 : null;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const v = typeof item === 'number' ? item : NON_FINITE[item as string];
    // a Float32Array store rounds float64 → float32 once; float64 stores exactly
    dst[i] = round === null ? (dtype === 'float32' ? Math.fround(v) : v) : round(v);
  }
}

/** msgpack bin data sits at any byte offset; a Uint16Array view needs an even one */
function uint16View(bytes: Uint8Array): Uint16Array {
  if (bytes.byteOffset % 2 === 0) return new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  return new Uint16Array(new Uint8Array(bytes).buffer);
}

/** small tensors (weights, biases) read into float64: per-element DataView, any alignment */
function writeBytesSlow(bytes: Uint8Array, dtype: Dtype, dst: Float32Array | Float64Array): void {
  if (dtype === 'float16' || dtype === 'bfloat16') {
    const widened = new Float32Array(dst.length);
    if (dtype === 'float16') widenFloat16(uint16View(bytes), widened);
    else widenBfloat16(uint16View(bytes), widened);
    dst.set(widened);
    return;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === 'float32') for (let i = 0; i < dst.length; i++) dst[i] = view.getFloat32(i * 4, true);
  else for (let i = 0; i < dst.length; i++) dst[i] = view.getFloat64(i * 8, true);
}
