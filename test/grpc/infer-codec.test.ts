// the hand-written inference codec (src/grpc/infer-codec.ts) against protobufjs reading and writing
// the same messages: any ModelInferRequest protobufjs encodes (packed or not, fields in any order,
// unknown fields beside) decodes to what proto-loader's decoder makes; every answer encoded decodes
// in protobufjs to what was given.
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeInferRequest, encodeInferResponse, encodeStreamError } from '../../src/grpc/infer-codec.js';

const PROTO = readFileSync(fileURLToPath(new URL('../../src/grpc/proto/inference.proto', import.meta.url)), 'utf8');
// field names as written (proto-loader's keepCase)
const root = protobuf.parse(PROTO, { keepCase: true }).root;
const Request = root.lookupType('inference.ModelInferRequest');
const Response = root.lookupType('inference.ModelInferResponse');
const StreamResponse = root.lookupType('inference.ModelStreamInferResponse');
// proto-loader's conversion (grpc/definitions.ts' options): defaults present, oneofs named, longs as numbers
const AS_LOADED = { longs: Number, enums: String, defaults: true, arrays: true, oneofs: true };

// the same messages with every repeated scalar unpacked, as older encoders may write them
const unpackedRoot = protobuf.parse(
  PROTO
    .replace(/repeated int64 shape = 3;/g, 'repeated int64 shape = 3 [packed = false];')
    .replace(/repeated (bool|int32|int64|uint32|uint64|float|double) (\w+_contents) = (\d);/g, 'repeated $1 $2 = $3 [packed = false];'),
  { keepCase: true },
).root;
const UnpackedRequest = unpackedRoot.lookupType('inference.ModelInferRequest');

// short and long, ASCII and not: the reader decodes short ASCII text itself (grpc/wire.ts)
const text = fc.oneof(fc.string({ maxLength: 12, unit: 'grapheme' }), fc.string({ minLength: 60, maxLength: 70, unit: 'grapheme' }), fc.string({ minLength: 60, maxLength: 70 }));
// names come again and again, and the reader keeps the ones it read lately (grpc/wire.ts name()):
// a few names, near one another, read many times over, beside the random ones
const name = fc.oneof(text, fc.constantFrom('input', 'inpu', 'tupni', 'INPUT', 'FP32', 'FP16', 'rmsnorm', 'rmsnorn', 'eps', 'spe', ''));
const int64 = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
const parameter = fc.oneof(
  fc.boolean().map((v) => ({ bool_param: v })),
  int64.map((v) => ({ int64_param: v })),
  text.map((v) => ({ string_param: v })),
  fc.double().map((v) => ({ double_param: v })),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }).map((v) => ({ uint64_param: v })),
  fc.constant({}),
);
const parameters = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('eps', 'spe', 'axis', 'sixa')), parameter, { maxKeys: 3 });
const contents = fc.record({
  bool_contents: fc.array(fc.boolean(), { maxLength: 3 }),
  int_contents: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 3 }),
  int64_contents: fc.array(int64, { maxLength: 3 }),
  uint_contents: fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 3 }),
  uint64_contents: fc.array(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { maxLength: 3 }),
  fp32_contents: fc.array(fc.float({ noNaN: true }), { maxLength: 4 }),
  fp64_contents: fc.array(fc.double({ noNaN: true }), { maxLength: 4 }),
  bytes_contents: fc.array(fc.uint8Array({ maxLength: 4 }).map((b) => Buffer.from(b)), { maxLength: 2 }),
}, { requiredKeys: [] });
const request = fc.record({
  model_name: name,
  model_version: name,
  id: text,
  parameters,
  inputs: fc.array(fc.record({
    name, datatype: name,
    shape: fc.array(int64, { maxLength: 4 }),
    parameters,
    contents,
  }, { requiredKeys: ['name'] }), { maxLength: 3 }),
  outputs: fc.array(fc.record({ name, parameters }, { requiredKeys: [] }), { maxLength: 2 }),
  raw_input_contents: fc.array(fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)), { maxLength: 3 }),
}, { requiredKeys: [] });

/** Buffers (and Uint8Arrays) as plain byte lists, so that views and copies compare by content */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (_k, v) => (v?.type === 'Buffer' ? { bytes: v.data } : v)));

describe('decodeInferRequest', () => {
  it('decodes what protobufjs encodes, packed or unpacked, to proto-loader\'s objects', () => {
    fc.assert(fc.property(request, fc.boolean(), (message, unpacked) => {
      const type = unpacked ? UnpackedRequest : Request;
      const bytes = Buffer.from(type.encode(type.fromObject(message)).finish());
      const expected = Request.toObject(Request.decode(bytes), AS_LOADED);
      expect(plain(decodeInferRequest(bytes))).toEqual(plain(expected));
    }), { numRuns: 300 });
  });

  it('skips unknown fields of every wire type, and a later map entry of a key wins', () => {
    const known = Buffer.from(Request.encode(Request.fromObject({ model_name: 'rmsnorm', parameters: { eps: { double_param: 1 } } })).finish());
    const later = Buffer.from(Request.encode(Request.fromObject({ parameters: { eps: { int64_param: 2 } } })).finish());
    // field 15: varint 300, fixed64, length-delimited "xy", fixed32
    const unknown = Buffer.from([0x78, 0xac, 0x02, 0x79, 1, 2, 3, 4, 5, 6, 7, 8, 0x7a, 2, 0x78, 0x79, 0x7d, 1, 2, 3, 4]);
    const decoded = decodeInferRequest(Buffer.concat([unknown, known, unknown, later]));
    expect([decoded.model_name, decoded.parameters]).toEqual(['rmsnorm', { eps: { parameter_choice: 'int64_param', int64_param: 2 } }]);
  });

  it('raw_input_contents are views of the message, not copies', () => {
    const bytes = Buffer.from(Request.encode(Request.fromObject({ raw_input_contents: [Buffer.from([1, 2, 3])] })).finish());
    const [raw] = decodeInferRequest(bytes).raw_input_contents;
    expect(raw.buffer).toBe(bytes.buffer);
  });

  it('a message cut inside a field is an error, not a shorter request', () => {
    // model_name "rmsnorm" (2 + 7 bytes), then one raw entry of 16 bytes (2 + 16)
    const bytes = Buffer.from(Request.encode(Request.fromObject({ model_name: 'rmsnorm', raw_input_contents: [Buffer.alloc(16)] })).finish());
    expect(bytes.length).toBe(27);
    for (let cut = 1; cut < bytes.length; cut++) {
      const truncated = bytes.subarray(0, cut);
      if (cut === 9) expect(decodeInferRequest(truncated)).toMatchObject({ model_name: 'rmsnorm', raw_input_contents: [] });
      else expect(() => decodeInferRequest(truncated), `cut at ${cut}`).toThrow(/^protobuf: /);
    }
  });
});

describe('encodeInferResponse and encodeStreamError', () => {
  const output = fc.record({
    name: text.filter((s) => s.length > 0), datatype: text.filter((s) => s.length > 0),
    shape: fc.array(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { minLength: 1, maxLength: 8 }),
    bytes: fc.uint8Array({ maxLength: 300 }),
  });

  it('protobufjs reads back what was given, unary and framed for a stream', () => {
    fc.assert(fc.property(text.filter((s) => s.length > 0), text, fc.array(output, { maxLength: 4 }), (model, id, outputs) => {
      const expected = {
        model_name: model, model_version: '1', id, parameters: {},
        outputs: outputs.map(({ name, datatype, shape }) => ({ name, datatype, shape, parameters: {}, contents: null })),
        raw_output_contents: outputs.map(({ bytes }) => Buffer.from(bytes)),
      };
      const unary = encodeInferResponse(model, '1', id, outputs, false);
      expect(plain(Response.toObject(Response.decode(unary), AS_LOADED))).toEqual(plain(expected));
      const framed = StreamResponse.toObject(StreamResponse.decode(encodeInferResponse(model, '1', id, outputs, true)), AS_LOADED);
      expect(plain(framed)).toEqual(plain({ error_message: '', infer_response: expected }));
    }), { numRuns: 300 });
  });

  it('a stream error: the message, and infer_response holding the id alone', () => {
    fc.assert(fc.property(text, text, (message, id) => {
      const decoded = StreamResponse.toObject(StreamResponse.decode(encodeStreamError(message, id)), AS_LOADED);
      expect(plain(decoded)).toEqual(plain({
        error_message: message,
        infer_response: { model_name: '', model_version: '', id, parameters: {}, outputs: [], raw_output_contents: [] },
      }));
    }), { numRuns: 200 });
  });
});
