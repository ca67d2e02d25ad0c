// ModelInferRequest in and ModelInferResponse / ModelStreamInferResponse out, by hand on protobuf's wire
// (grpc/wire.ts), in place of proto-loader's generic decode + toObject and fromObject + encode:
// inputs' raw contents stay views of the received message, and an answer's outputs are copied once,
// from shared memory into the message, already framed for a stream when it goes on one. The objects
// read are those proto-loader makes with grpc/definitions.ts' options (defaults present, oneofs
// named), so either decoder serves the same code; test/grpc/infer-codec.test.ts holds them equal.
import type { InferParameter, ModelInferRequest } from './infer-request.js';
import { FIXED32, FIXED64, fieldSize, LENGTH, VARINT, varintSize, WireReader, WireWriter } from './wire.js';

const CONTENT_FIELDS = ['bool_contents', 'int_contents', 'int64_contents', 'uint_contents', 'uint64_contents', 'fp32_contents', 'fp64_contents', 'bytes_contents'] as const;

type Contents = Record<(typeof CONTENT_FIELDS)[number], unknown[]>;

/** never throws: a message that is not a ModelInferRequest comes back with `malformed` saying why, so
 *  that its call ends INVALID_ARGUMENT (and a stream answers it in place), where a throwing decoder
 *  would make grpc-js end the call INTERNAL */
export function readInferRequest(message: Buffer): ModelInferRequest {
  try {
    return decodeInferRequest(message);
  } catch (err) {
    return { model_name: '', model_version: '', id: '', parameters: {}, inputs: [], outputs: [], raw_input_contents: [], malformed: (err as Error).message };
  }
}

export function decodeInferRequest(message: Buffer): ModelInferRequest {
  const r = new WireReader(message);
  const request: ModelInferRequest = { model_name: '', model_version: '', id: '', parameters: emptyMap(), inputs: [], outputs: [], raw_input_contents: [] };
  while (!r.done) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === LENGTH) request.model_name = r.name();
    else if (field === 2 && (tag & 7) === LENGTH) request.model_version = r.name();
    else if (field === 3 && (tag & 7) === LENGTH) request.id = r.string();
    else if (field === 4 && (tag & 7) === LENGTH) readMapEntry(r.nested(), request.parameters);
    else if (field === 5 && (tag & 7) === LENGTH) request.inputs.push(readInput(r.nested()));
    else if (field === 6 && (tag & 7) === LENGTH) request.outputs.push(readOutput(r.nested()));
    else if (field === 7 && (tag & 7) === LENGTH) {
      const view = r.bytesView();
      request.raw_input_contents.push(Buffer.from(view.buffer, view.byteOffset, view.byteLength));
    } else r.skip(tag & 7);
  }
  return request;
}

function readInput(r: WireReader): ModelInferRequest['inputs'][number] {
  const input: ModelInferRequest['inputs'][number] = { name: '', datatype: '', shape: [], parameters: emptyMap(), contents: null };
  while (!r.done) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === LENGTH) input.name = r.name();
    else if (field === 2 && (tag & 7) === LENGTH) input.datatype = r.name();
    else if (field === 3) readNumbers(r, tag & 7, input.shape, () => r.int64());
    else if (field === 4 && (tag & 7) === LENGTH) readMapEntry(r.nested(), input.parameters);
    else if (field === 5 && (tag & 7) === LENGTH) input.contents = readContents(r.nested(), input.contents as Contents | null);
    else r.skip(tag & 7);
  }
  return input;
}

function readOutput(r: WireReader): ModelInferRequest['outputs'][number] {
  const output: ModelInferRequest['outputs'][number] = { name: '', parameters: emptyMap() };
  while (!r.done) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === LENGTH) output.name = r.name();
    else if (tag >>> 3 === 2 && (tag & 7) === LENGTH) readMapEntry(r.nested(), output.parameters);
    else r.skip(tag & 7);
  }
  return output;
}

/** a protobuf map as an object of no prototype: a key `__proto__` is a key like any other (and is
 *  refused, naming it, as every unknown parameter is) */
const emptyMap = (): Record<string, InferParameter> => Object.create(null) as Record<string, InferParameter>;

/** a map<string, InferParameter> entry: key 1, value 2 (a later entry of the same key wins) */
function readMapEntry(r: WireReader, map: Record<string, InferParameter>): void {
  let key = '';
  let value: InferParameter = {};
  while (!r.done) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === LENGTH) key = r.name();
    else if (tag >>> 3 === 2 && (tag & 7) === LENGTH) value = readParameter(r.nested());
    else r.skip(tag & 7);
  }
  map[key] = value;
}

/** the oneof parameter_choice: the last choice on the wire is the one set */
function readParameter(r: WireReader): InferParameter {
  let parameter: InferParameter = {};
  while (!r.done) {
    const tag = r.uint32();
    const wire = tag & 7;
    switch (tag >>> 3) {
      case 1: if (wire === VARINT) { parameter = { parameter_choice: 'bool_param', bool_param: r.uint64() !== 0 }; continue; } break;
      case 2: if (wire === VARINT) { parameter = { parameter_choice: 'int64_param', int64_param: r.int64() }; continue; } break;
      case 3: if (wire === LENGTH) { parameter = { parameter_choice: 'string_param', string_param: r.string() }; continue; } break;
      case 4: if (wire === FIXED64) { parameter = { parameter_choice: 'double_param', double_param: r.double() }; continue; } break;
      case 5: if (wire === VARINT) { parameter = { parameter_choice: 'uint64_param', uint64_param: r.uint64() }; continue; } break;
    }
    r.skip(wire);
  }
  return parameter;
}

/** InferTensorContents, merged into what an earlier occurrence of the field held (protobuf's rule) */
function readContents(r: WireReader, earlier: Contents | null): Contents {
  const contents = earlier ?? (Object.fromEntries(CONTENT_FIELDS.map((f) => [f, []])) as unknown as Contents);
  while (!r.done) {
    const tag = r.uint32();
    const wire = tag & 7;
    switch (tag >>> 3) {
      case 1: readNumbers(r, wire, contents.bool_contents, () => r.uint64() !== 0); break;
      case 2: readNumbers(r, wire, contents.int_contents, () => r.int64() | 0); break;
      case 3: readNumbers(r, wire, contents.int64_contents, () => r.int64()); break;
      case 4: readNumbers(r, wire, contents.uint_contents, () => r.uint64() >>> 0); break;
      case 5: readNumbers(r, wire, contents.uint64_contents, () => r.uint64()); break;
      case 6: readNumbers(r, wire, contents.fp32_contents, () => r.float(), FIXED32); break;
      case 7: readNumbers(r, wire, contents.fp64_contents, () => r.double(), FIXED64); break;
      case 8:
        if (wire === LENGTH) contents.bytes_contents.push(Buffer.from(r.bytesView()));
        else r.skip(wire);
        break;
      default: r.skip(wire);
    }
  }
  return contents;
}

/** a repeated scalar, packed (one length-delimited run) or not (one field each) */
function readNumbers<T>(r: WireReader, wire: number, into: T[], read: () => T, scalarWire = VARINT): void {
  if (wire === LENGTH) {
    const length = r.uint32();
    const end = r.pos + length;
    if (end > r.end) throw new Error('protobuf: a packed field runs past the end of the message');
    while (r.pos < end) into.push(read());
    if (r.pos !== end) throw new Error('protobuf: a packed field ends inside a value');
  } else if (wire === scalarWire) {
    into.push(read());
  } else {
    r.skip(wire);
  }
}

export interface OutputMeta { name: string; datatype: string; shape: number[]; byteLength: number }
export interface OutputTensor extends Omit<OutputMeta, 'byteLength'> { bytes: Uint8Array }

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/** a ModelInferResponse's layout: its size and its fields up to the raw contents */
class ResponseHead {
  private readonly tensorSizes: number[];
  /** the ModelInferResponse's bytes */
  readonly size: number;

  constructor(readonly modelName: string, readonly modelVersion: string, readonly id: string, readonly outputs: OutputMeta[], readonly forStream: boolean) {
    this.tensorSizes = outputs.map(({ name, datatype, shape }) => {
      const dims = shape.reduce((sum, d) => sum + varintSize(d), 0);
      return fieldSize(1, byteLength(name)) + fieldSize(2, byteLength(datatype)) + (shape.length > 0 ? fieldSize(3, dims) : 0);
    });
    let size = fieldSize(1, byteLength(modelName)) + fieldSize(2, byteLength(modelVersion)) + (id === '' ? 0 : fieldSize(3, byteLength(id)));
    for (const s of this.tensorSizes) size += fieldSize(5, s);
    for (const o of outputs) size += fieldSize(6, o.byteLength);
    this.size = size;
  }

  /** the bytes on the wire: framed as a ModelStreamInferResponse's infer_response (field 2) on a stream */
  get wireSize(): number {
    return this.forStream ? fieldSize(2, this.size) : this.size;
  }

  /** the stream's frame, then every field but the raw contents */
  write(w: WireWriter): void {
    if (this.forStream) w.lengthOf(2, this.size);
    writeString(w, 1, this.modelName);
    writeString(w, 2, this.modelVersion);
    if (this.id !== '') writeString(w, 3, this.id);
    this.outputs.forEach(({ name, datatype, shape }, i) => {
      w.lengthOf(5, this.tensorSizes[i]);
      writeString(w, 1, name);
      writeString(w, 2, datatype);
      if (shape.length === 0) return;
      w.lengthOf(3, shape.reduce((sum, d) => sum + varintSize(d), 0));
      for (const d of shape) w.varint(d);
    });
  }
}

/** a ModelInferResponse whole; `forStream`: framed as a ModelStreamInferResponse's infer_response */
export function encodeInferResponse(modelName: string, modelVersion: string, id: string, outputs: OutputTensor[], forStream: boolean): Buffer {
  const head = new ResponseHead(modelName, modelVersion, id, outputs.map((o) => ({ ...o, byteLength: o.bytes.length })), forStream);
  const w = new WireWriter(Buffer.allocUnsafe(head.wireSize));
  head.write(w);
  for (const { bytes } of outputs) w.bytesField(6, bytes);
  return w.bytes;
}

/** the bytes of a one-output response before its raw contents: with those contents right after them
 *  (in the job's slab), they are the whole message */
export function encodeResponsePrefix(modelName: string, modelVersion: string, id: string, output: OutputMeta, forStream: boolean): Buffer {
  const head = new ResponseHead(modelName, modelVersion, id, [output], forStream);
  const w = new WireWriter(Buffer.allocUnsafe(head.wireSize - output.byteLength));
  head.write(w);
  w.lengthOf(6, output.byteLength);
  return w.bytes;
}

/** a stream's answer to a failed request: its message, and an infer_response holding its id alone */
export function encodeStreamError(message: string, id: string): Buffer {
  const inner = id === '' ? 0 : fieldSize(3, byteLength(id));
  const w = new WireWriter(Buffer.allocUnsafe(fieldSize(1, byteLength(message)) + fieldSize(2, inner)));
  writeString(w, 1, message);
  w.lengthOf(2, inner);
  if (id !== '') writeString(w, 3, id);
  return w.bytes;
}

function writeString(w: WireWriter, field: number, text: string): void {
  const length = byteLength(text);
  w.lengthOf(field, length);
  w.bytes.write(text, w.pos, length, 'utf8');
  w.pos += length;
}
