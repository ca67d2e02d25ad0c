// turns a decoded msgpack value into the plain objects the schemas validate:
// maps become objects (msgpack-numpy sends bin keys), msgpack-numpy ndarrays become
// ordinary tensors remembered as numpy-form, numpy scalars become numbers.
import * as msgpackrUnpack from 'msgpackr/unpack';
import { serviceError } from '../errors.js';
import { dtypeFromNumpy } from './dtype.js';
import { numberFromFloat16Bits } from './half.js';

// what msgpackr decodes the reserved byte 0xc1 to (exported at run time, missing from the subpath's types)
const C1 = (msgpackrUnpack as unknown as { C1: object }).C1;

/** marks a tensor that arrived as a msgpack-numpy ndarray (a symbol: the schemas never see it) */
export const NUMPY_FORM = Symbol('numpyForm');

const MAX_DEPTH = 32; // deeper than any valid body; keeps hostile nesting cheap

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function normalizeMsgpackBody(value: unknown): unknown {
  try {
    return normalize(value, 0);
  } catch (err) {
    if (err instanceof FieldError) throw serviceError(err.kind, pathText(err.where));
    throw err;
  }
}

/** an error about one field: its path (`requests[1].input.dtype`) is gathered as the error goes up,
 *  each level adding its key or index, so a body that is fine makes no path strings at all */
class FieldError {
  readonly where: (string | number)[];
  /** `key`: the field at fault, in the map where it was found */
  constructor(readonly kind: 'fieldUndefined' | 'fieldUnknown', key: string) {
    this.where = [key];
  }
}

const pathText = (where: (string | number)[]) =>
  where.reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`), '');

/** `value` at `key` of its parent: a FieldError from below gets the key in its path */
function normalizeAt(value: object, depth: number, key: string | number): unknown {
  try {
    return normalize(value, depth);
  } catch (err) {
    if (err instanceof FieldError) err.where.unshift(key);
    throw err;
  }
}

function normalize(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw serviceError('bodyTooDeep', MAX_DEPTH);
  // msgpackr decodes the never-used byte 0xc1 to a marker object instead of failing
  if (value === C1) throw serviceError('bodyC1');
  if (value instanceof Map) return normalizeMap(value, depth);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item === 'object' && item !== null) value[i] = normalizeAt(item, depth + 1, i);
    }
    return value;
  }
  if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
    // msgpackr records decode to plain objects already; still walk their values
    return normalizeMap(new Map(Object.entries(value)), depth);
  }
  return value;
}

function normalizeMap(map: Map<unknown, unknown>, depth: number): unknown {
  const object: Record<string, unknown> = {};
  for (const [rawKey, rawValue] of map) {
    const key = keyString(rawKey);
    // msgpackr reads extension type 0 as undefined: a field sent that way must not count as absent
    if (rawValue === undefined) throw new FieldError('fieldUndefined', key);
    const value = typeof rawValue === 'object' && rawValue !== null && !ArrayBuffer.isView(rawValue)
      ? normalizeAt(rawValue, depth + 1, key)
      : rawValue;
    // a "__proto__" key must stay a plain (and then unknown) field, not set the prototype
    if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
    else object[key] = value;
  }
  if (object.nd === true) return numpyArray(object);
  if (object.nd === false && 'data' in object && 'type' in object) return numpyScalar(object);
  return object;
}

/** each key as V8's own (internalized) string for it: msgpackr makes a fresh string for every key, and
 *  V8 looks a fresh string up in its string table before it stores a property under it. Learns the
 *  first MAX_KEPT_KEYS keys it sees (the API's field names; beyond them, keys pass as they came) */
const keptKeys = new Map<string, string>();
const MAX_KEPT_KEYS = 256;

function keptKey(key: string): string {
  const kept = keptKeys.get(key);
  if (kept !== undefined) return kept;
  if (keptKeys.size >= MAX_KEPT_KEYS || key.length > 64) return key;
  const own = Object.keys({ [key]: 0 })[0]; // a property's name: V8's internalized copy
  keptKeys.set(own, own);
  return own;
}

function keyString(key: unknown): string {
  if (typeof key === 'string') return keptKey(key);
  if (key instanceof Uint8Array) {
    try {
      return utf8.decode(key);
    } catch {
      throw serviceError('bodyKeyNotUtf8');
    }
  }
  throw serviceError('bodyKeyType', typeof key);
}

function text(value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value;
}

const NDARRAY_KEYS = new Set(['nd', 'type', 'kind', 'shape', 'data']);

function numpyArray(object: Record<string, unknown>): unknown {
  // a key the form does not have (strides, say) would otherwise be dropped unseen
  for (const key of Object.keys(object)) {
    if (!NDARRAY_KEYS.has(key)) throw new FieldError('fieldUnknown', key);
  }
  const type = text(object.type);
  const kind = text(object.kind);
  // an unknown descriptor stays visible to the dtype check, which names it
  const dtype = typeof type === 'string' && (kind === undefined || kind === '') ? dtypeFromNumpy(type) ?? type : type;
  const tensor = { dtype, shape: object.shape, data: object.data };
  Object.defineProperty(tensor, NUMPY_FORM, { value: true, enumerable: false });
  return tensor;
}

const SCALAR_READERS: Readonly<Record<string, (view: DataView) => number>> = {
  '<f8': (v) => v.getFloat64(0, true),
  '<f4': (v) => v.getFloat32(0, true),
  '<f2': (v) => numberFromFloat16Bits(v.getUint16(0, true)),
  '<i8': (v) => Number(v.getBigInt64(0, true)),
  '<i4': (v) => v.getInt32(0, true),
  '<i2': (v) => v.getInt16(0, true),
  '|i1': (v) => v.getInt8(0),
  '<u8': (v) => Number(v.getBigUint64(0, true)),
  '<u4': (v) => v.getUint32(0, true),
  '<u2': (v) => v.getUint16(0, true),
  '|u1': (v) => v.getUint8(0),
};

const SCALAR_SIZES: Readonly<Record<string, number>> = {
  '<f8': 8, '<f4': 4, '<f2': 2, '<i8': 8, '<i4': 4, '<i2': 2, '|i1': 1, '<u8': 8, '<u4': 4, '<u2': 2, '|u1': 1,
};

/** a numpy scalar counts as the number it holds; anything else is left for the schema to reject */
function numpyScalar(object: Record<string, unknown>): unknown {
  const type = text(object.type);
  const data = object.data;
  if (typeof type !== 'string' || !(data instanceof Uint8Array)) return object;
  const read = SCALAR_READERS[type];
  if (read === undefined || data.byteLength !== SCALAR_SIZES[type]) return object;
  return read(new DataView(data.buffer, data.byteOffset, data.byteLength));
}
