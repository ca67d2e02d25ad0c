// protobuf's wire format, the little of it the inference messages need (grpc/infer-codec.ts): varints,
// 64-bit integers as numbers, length-delimited fields as views of the message (never copies), and
// the unknown fields a newer client may send, skipped by their wire type.

export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH = 2;
export const FIXED32 = 5;

const TWO_32 = 2 ** 32;

/** a text field this long or shorter is read in JS when it is ASCII (names, datatypes, ids): a
 *  Buffer's toString costs a native call and two views a field, ~0.7 µs (a profile of ModelInfer) */
const SHORT_TEXT = 64;

export class WireReader {
  pos: number;
  /** made when a fixed-width number is first read: most messages have none */
  private dataView: DataView | null = null;

  constructor(readonly bytes: Uint8Array, start = 0, readonly end = bytes.length) {
    this.pos = start;
  }

  private get view(): DataView {
    return (this.dataView ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength));
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  private byte(): number {
    if (this.pos >= this.end) throw new Error('protobuf: a varint runs past the end of the message');
    return this.bytes[this.pos++];
  }

  /** a varint up to 64 bits as two 32-bit halves: [low, high] */
  private varint64(): [number, number] {
    let low = 0;
    let b: number;
    for (let shift = 0; shift < 28; shift += 7) {
      b = this.byte();
      low |= (b & 0x7f) << shift;
      if (b < 0x80) return [low >>> 0, 0];
    }
    // the fifth byte: bits 28-31 of the low half, 0-2 of the high one
    b = this.byte();
    low |= (b & 0x0f) << 28;
    let high = (b & 0x7f) >> 4;
    if (b < 0x80) return [low >>> 0, high];
    for (let shift = 3; shift < 32; shift += 7) {
      b = this.byte();
      high |= (b & 0x7f) << shift;
      if (b < 0x80) return [low >>> 0, high >>> 0];
    }
    throw new Error('protobuf: a varint longer than 10 bytes');
  }

  /** a varint of at most 32 bits (tags, lengths, int32, bool, enum) */
  uint32(): number {
    // one byte, the common case (tags, short lengths), without the pair
    if (this.pos < this.end && this.bytes[this.pos] < 0x80) return this.bytes[this.pos++];
    return this.varint64()[0];
  }

  /** int64: two's complement, as a number (exact up to 2^53) */
  int64(): number {
    const [low, high] = this.varint64();
    if (high & 0x80000000) return -((~high >>> 0) * TWO_32 + (~low >>> 0) + 1);
    return high * TWO_32 + low;
  }

  uint64(): number {
    const [low, high] = this.varint64();
    return high * TWO_32 + low;
  }

  double(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  float(): number {
    this.need(4);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  /** a length-delimited field's bytes, as a view of the message */
  bytesView(): Uint8Array {
    const length = this.uint32();
    this.need(length);
    const view = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return view;
  }

  string(): string {
    return this.text(asciiText);
  }

  /** a name (a model's, a tensor's, a datatype, a parameter's key): as string(), but a short ASCII
   *  one seen lately comes back as the same internalized string (ids and values are read fresh) */
  name(): string {
    return this.text(keptAscii);
  }

  private text(ascii: (bytes: Uint8Array, start: number, end: number) => string | null): string {
    const length = this.uint32();
    this.need(length);
    const start = this.pos;
    this.pos += length;
    if (length <= SHORT_TEXT) {
      const text = ascii(this.bytes, start, start + length);
      if (text !== null) return text;
    }
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + start, length).toString('utf8');
  }

  /** a reader over the next length-delimited field (an embedded message or a packed list) */
  nested(): WireReader {
    const length = this.uint32();
    this.need(length);
    const reader = new WireReader(this.bytes, this.pos, this.pos + length);
    this.pos += length;
    return reader;
  }

  skip(wireType: number): void {
    if (wireType === VARINT) this.varint64();
    else if (wireType === FIXED64) this.advance(8);
    else if (wireType === LENGTH) this.advance(this.uint32());
    else if (wireType === FIXED32) this.advance(4);
    else throw new Error(`protobuf: wire type ${wireType} is not supported`);
  }

  private advance(n: number): void {
    this.need(n);
    this.pos += n;
  }

  private need(n: number): void {
    if (this.pos + n > this.end) throw new Error('protobuf: a field runs past the end of the message');
  }
}

/** bytes of a varint of a non-negative integer below 2^53 */
export function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

export class WireWriter {
  pos = 0;

  constructor(readonly bytes: Buffer) {}

  /** a non-negative integer below 2^53 */
  varint(n: number): void {
    while (n >= 128) {
      this.bytes[this.pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.bytes[this.pos++] = n;
  }

  tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  /** a length-delimited field from `length` bytes the caller writes next */
  lengthOf(field: number, length: number): void {
    this.tag(field, LENGTH);
    this.varint(length);
  }

  bytesField(field: number, bytes: Uint8Array): void {
    this.lengthOf(field, bytes.length);
    this.bytes.set(bytes, this.pos);
    this.pos += bytes.length;
  }
}

/** a length-delimited field's size on the wire: tag, length, content */
export const fieldSize = (field: number, length: number) => varintSize(field * 8 + LENGTH) + varintSize(length) + length;

/** bytes [start, end) as text when they are all ASCII (then UTF-8 reads them the same), else null */
function asciiText(bytes: Uint8Array, start: number, end: number): string | null {
  let text = '';
  for (let i = start; i < end; i++) {
    const b = bytes[i];
    if (b >= 0x80) return null;
    text += String.fromCharCode(b);
  }
  return text;
}

/** the names read last, by a hash of their bytes: a client sends the same model, tensor, datatype and
 *  parameter names again and again, and a kept one is V8's internalized string (a property's name),
 *  which a keyed load or store uses as it is, where a fresh one is first looked up in V8's string table */
const keptNames: (string | undefined)[] = new Array(256).fill(undefined);

/** as asciiText, but a text read before comes back as the same internalized string */
function keptAscii(bytes: Uint8Array, start: number, end: number): string | null {
  let hash = end - start;
  for (let i = start; i < end; i++) {
    const b = bytes[i];
    if (b >= 0x80) return null;
    hash = Math.imul(hash ^ b, 0x01000193);
  }
  const slot = (hash ^ (hash >>> 8) ^ (hash >>> 16)) & 255;
  const kept = keptNames[slot];
  if (kept !== undefined && sameText(kept, bytes, start, end)) return kept;
  const own = Object.keys({ [asciiText(bytes, start, end)!]: 0 })[0];
  keptNames[slot] = own;
  return own;
}

function sameText(text: string, bytes: Uint8Array, start: number, end: number): boolean {
  if (text.length !== end - start) return false;
  for (let i = start; i < end; i++) if (text.charCodeAt(i - start) !== bytes[i]) return false;
  return true;
}
