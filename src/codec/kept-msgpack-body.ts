// the last msgpack body decoded, kept as a template of its value. A client sends the same body with
// new tensor data on every request of one shape, and msgpack never looks inside a bin's bytes: a body
// of the same length whose bytes outside its tensors' data are the kept body's, byte for byte,
// decodes to the kept value with each tensor's view moved onto the new body. So a repeat is found by
// comparing those few bytes, not decoded and normalized again: at 4,000 small /v1 req/s, 0.931 of the
// CPU an answer and, builds swapped, 1.079 (`npm run ab`, 40 pairs each, 2026-11-29). The compare is a
// loop (Buffer#compare's checks cost ~2 %) and the copy spreads each object whole (with both built
// key by key, the lookup saved nothing measurable). Only a value made of plain objects, arrays, primitives
// and Buffers over the body itself is kept; each lookup hands out a fresh copy, so a reader that
// changes it (fastify's validation may) changes nothing the next request gets. A template is made
// only for a body whose length repeats the last decoded one's: making it costs 4-5 times the decode
// (1.4 against 0.35 µs a small body, 60 against 26 µs a batch of 64, in a loop), which bodies that do
// not repeat (shapes that alternate, lengths that vary) would pay on every request for nothing.
import { NUMPY_FORM } from './wire-body.js';

/** the most bytes outside the tensors' data a kept body has, and at most half of it: a body that is
 *  not mostly tensor bytes is decoded every time */
const MAX_COMPARED_BYTES = 4096;
/** a longer array of numbers is data sent as a list, which differs every time: such a body is not kept */
const MAX_ARRAY = 64;

interface Kept {
  length: number;
  /** the body's bytes outside its tensors' data, each piece with its start in the body */
  pieces: { at: number; bytes: Buffer }[];
  /** a fresh copy of the kept value with its tensors' views on the body at `offset` */
  build: Build;
}

type Build = (memory: Buffer, offset: number) => unknown;

export class KeptMsgpackBody {
  private kept: Kept | null = null;
  /** the length of the last body decoded (kept or not) */
  private lastLength = -1;

  /** the value of the body at [offset, offset + length) of `memory` when it repeats the kept one's
   *  shape, each tensor a view of its own bytes; undefined when it does not */
  lookup(memory: Buffer, offset: number, length: number): unknown {
    const kept = this.kept;
    if (kept === null || kept.length !== length) return undefined;
    // byte by byte: Buffer#compare's argument checks cost more than the few bytes (2 % of a small request)
    for (const { at, bytes } of kept.pieces) {
      const from = offset + at;
      for (let i = 0; i < bytes.length; i++) if (memory[from + i] !== bytes[i]) return undefined;
    }
    return kept.build(memory, offset);
  }

  /** keeps `value`, just decoded from [offset, offset + length) of `memory`, when its length repeats
   *  the last decoded body's and it can be a template (else the last one stays); returns the value to
   *  hand out, a copy when kept */
  keep(value: unknown, memory: Buffer, offset: number, length: number): unknown {
    const repeated = length === this.lastLength;
    this.lastLength = length;
    if (!repeated) return value;
    const viewAt = new Map<Buffer, number>();
    if (length === 0 || !collect(value, memory, offset, length, viewAt)) return value;
    const ranges = [...viewAt].map(([view, at]) => [at, at + view.length]).sort((a, b) => a[0] - b[0]);
    const pieces: Kept['pieces'] = [];
    let from = 0;
    let compared = 0;
    for (const [start, end] of [...ranges, [length, length]]) {
      if (start < from) return value; // views that overlap: not what a decode makes
      if (start > from) pieces.push({ at: from, bytes: Buffer.from(memory.subarray(offset + from, offset + start)) });
      compared += start - from;
      from = end;
    }
    if (compared > MAX_COMPARED_BYTES || compared > length / 2) return value;
    const build = builderOf(value, viewAt);
    this.kept = { length, pieces, build };
    return build(memory, offset);
  }
}

/** whether `value` is made only of what a template can hold, its Buffers (over this body) noted */
function collect(value: unknown, memory: Buffer, offset: number, length: number, viewAt: Map<Buffer, number>): boolean {
  if (value === null) return true;
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'bigint') return true;
  if (type !== 'object') return false;
  if (ArrayBuffer.isView(value)) {
    const view = value as Buffer;
    // msgpackr's bins: Buffers over the body it read (not a copy, not another type)
    if (Object.getPrototypeOf(view) !== Buffer.prototype || view.buffer !== memory.buffer || viewAt.has(view)) return false;
    if (view.byteOffset < offset || view.byteOffset + view.length > offset + length) return false;
    viewAt.set(view, view.byteOffset - offset);
    return true;
  }
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    const long = value.length > MAX_ARRAY;
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || (long && !isObject(value[i])) || !collect(value[i], memory, offset, length, viewAt)) return false;
    }
    return true;
  }
  const object = value as Record<string, unknown>;
  if (Object.getPrototypeOf(object) !== Object.prototype) return false;
  const keys = Object.keys(object);
  // a "__proto__" field is an own property defined by hand (wire-body.ts): not copied by assignment
  if (keys.includes('__proto__') || Object.getOwnPropertyNames(object).length !== keys.length) return false;
  if (Object.getOwnPropertySymbols(object).some((s) => s !== NUMPY_FORM)) return false;
  for (const key of keys) if (!collect(object[key], memory, offset, length, viewAt)) return false;
  return true;
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** what makes a fresh copy of a collected value, each Buffer a view of the new body at its place:
 *  objects copied by spread (their own map, no property added one by one), arrays of numbers sliced */
function builderOf(value: unknown, viewAt: Map<Buffer, number>): Build {
  if (!isObject(value)) return () => value;
  if (ArrayBuffer.isView(value)) {
    const at = viewAt.get(value as Buffer)!;
    const end = at + (value as Buffer).length;
    return (memory, offset) => memory.subarray(offset + at, offset + end);
  }
  if (Array.isArray(value)) {
    if (!value.some(isObject)) {
      const items = [...value];
      return () => items.slice();
    }
    const items = value.map((item) => builderOf(item, viewAt));
    return (memory, offset) => items.map((build) => build(memory, offset));
  }
  const object = value as Record<string | symbol, unknown>;
  // the fields that are not objects, copied as they are
  const flat = { ...object };
  const inner = Object.keys(object).filter((key) => isObject(object[key])).map((key) => ({ key, build: builderOf(object[key], viewAt) }));
  // each set anew by its builder; null here, so that no view of the kept body's memory stays reachable
  for (const { key } of inner) flat[key] = null;
  const numpyForm = object[NUMPY_FORM] === true;
  return (memory, offset) => {
    const copy: Record<string, unknown> = { ...flat };
    for (const { key, build } of inner) copy[key] = build(memory, offset);
    if (numpyForm) Object.defineProperty(copy, NUMPY_FORM, { value: true, enumerable: false });
    return copy;
  };
}
