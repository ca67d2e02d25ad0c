// API.md §5: every 400, 404, 406 and 415 the service answers, each with its whole JSON error body.
import { describe, it } from 'vitest';
import { expectError, pack, packTyped, postJson, postMsgpack, useFreshApp, type Response } from '../helpers/http.js';
import { bytesOf } from '../helpers/tensors.js';
import type { FastifyInstance } from 'fastify';

const input = { shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] };
const DTYPE_LIST = '"float32", "float64", "float16", "bfloat16"';
const NOT_JSON = "body: Body is not valid JSON but content-type is set to 'application/json'";

interface Case {
  name: string;
  send: (app: FastifyInstance) => Promise<Response>;
  status: number;
  code: string;
  message: string;
}

const json = (body: unknown) => (app: FastifyInstance) => postJson(app, '/v1/rmsnorm', body);
const msgpack = (body: unknown) => (app: FastifyInstance) => postMsgpack(app, '/v1/rmsnorm', body);
const layernormJson = (body: unknown) => (app: FastifyInstance) => postJson(app, '/v1/layernorm', body);

const badRequests: Case[] = [
  // malformed bodies
  { name: 'malformed JSON (cut off)', send: json('{"input":'), status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: NOT_JSON },
  { name: 'bare NaN token in JSON', send: json('{"input":{"shape":[1],"data":[NaN]}}'), status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: NOT_JSON },
  { name: 'bare Infinity token in JSON', send: json('{"input":{"shape":[1],"data":[1]},"eps":Infinity}'), status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: NOT_JSON },
  { name: 'empty JSON body', send: json(''), status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: 'body: empty JSON body' },
  {
    name: '1e400 in JSON data overflows float64',
    send: json('{"input":{"shape":[2],"data":[1,1e400]}}'),
    status: 400, code: 'NORM_ERR_DATA_INVALID', message: 'input.data[1]: must be a number or one of "NaN", "Infinity", "-Infinity"',
  },
  { name: '1e400 in JSON eps overflows float64', send: json('{"input":{"shape":[1],"data":[1]},"eps":1e400}'), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'eps: must be number' },
  {
    name: 'malformed msgpack (cut off)',
    send: msgpack(pack({ input: { dtype: 'float32', shape: [2], data: bytesOf('float32', [1, 2]) } }).subarray(0, 12)),
    status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: 'body: not valid msgpack (Unexpected end of MessagePack data)',
  },
  // the body is decoded between two offsets of the shared memory: an empty one must not read past its end
  { name: 'an empty msgpack body', send: msgpack(Buffer.alloc(0)), status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: 'body: not valid msgpack (Unexpected end of MessagePack data)' },
  { name: 'msgpack of the never-used byte 0xc1', send: msgpack(Buffer.from([0xc1])), status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: 'body: 0xc1 is not a msgpack value' },
  {
    name: 'msgpack with bytes after the body',
    send: msgpack(Buffer.concat([pack({ input }), Buffer.from([0x01])])),
    status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: 'body: not valid msgpack (Data read, but end of buffer not reached {})',
  },
  { name: 'msgpack map with an integer key', send: msgpack(pack(new Map<unknown, unknown>([[1, 2]]))), status: 400, code: 'NORM_ERR_BODY_MALFORMED', message: 'body: map keys must be strings, got number' },
  {
    // msgpackr reads ext type 0 as undefined; the field was sent, so it must not count as absent
    name: 'msgpack extension type 0 (undefined) as eps',
    send: msgpack(Buffer.concat([Buffer.from([0x82]), pack('input'), pack(input), pack('eps'), Buffer.from([0xd4, 0x00, 0x00])])),
    status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'eps: undefined (msgpack extension type 0) is no value',
  },
  {
    name: 'msgpack extension type 0 (undefined) as input.dtype of a list',
    send: msgpack(Buffer.concat([Buffer.from([0x81]), pack('input'), Buffer.from([0x83]), pack('dtype'), Buffer.from([0xd4, 0x00, 0x00]), pack('shape'), pack([1]), pack('data'), pack([2])])),
    status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'input.dtype: undefined (msgpack extension type 0) is no value',
  },
  // schema
  { name: 'body is a list', send: json([input]), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'body: must be object' },
  { name: 'input missing', send: json({ eps: 1e-6 }), status: 400, code: 'NORM_ERR_FIELD_MISSING', message: 'input: required field is missing' },
  { name: 'input.shape missing', send: json({ input: { data: [1] } }), status: 400, code: 'NORM_ERR_FIELD_MISSING', message: 'input.shape: required field is missing' },
  { name: 'input.data missing', send: json({ input: { shape: [1] } }), status: 400, code: 'NORM_ERR_FIELD_MISSING', message: 'input.data: required field is missing' },
  { name: 'shape of rank 0', send: json({ input: { shape: [], data: [1] } }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'input.shape: must NOT have fewer than 1 items' },
  { name: 'shape of rank 9', send: json({ input: { shape: [1, 1, 1, 1, 1, 1, 1, 1, 1], data: [1] } }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'input.shape: must NOT have more than 8 items' },
  { name: 'negative dimension', send: json({ input: { shape: [2, -4], data: [] } }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'input.shape[1]: must be >= 0' },
  { name: 'unknown field epsilon', send: json({ input, epsilon: 1e-5 }), status: 400, code: 'NORM_ERR_FIELD_UNKNOWN', message: 'epsilon: unknown field' },
  { name: 'unknown field inside a tensor', send: json({ input: { ...input, strides: [4, 1] } }), status: 400, code: 'NORM_ERR_FIELD_UNKNOWN', message: 'input.strides: unknown field' },
  { name: 'op is not a field of /v1/rmsnorm', send: json({ op: 'rmsnorm', input }), status: 400, code: 'NORM_ERR_FIELD_UNKNOWN', message: 'op: unknown field' },
  { name: 'null eps', send: json({ input, eps: null }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'eps: must be number' },
  { name: 'null weight', send: json({ input, weight: null }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'weight: must be object' },
  { name: 'null axis', send: json({ input, axis: null }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'axis: must be integer' },
  { name: 'null return_stats', send: json({ input, return_stats: null }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'return_stats: must be boolean' },
  { name: 'string "1" for eps (no coercion)', send: json({ input, eps: '1' }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'eps: must be number' },
  { name: 'string "1" for weight_offset (no coercion)', send: json({ input, weight_offset: '1' }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'weight_offset: must be number' },
  { name: 'string "-1" for axis (no coercion)', send: json({ input, axis: '-1' }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'axis: must be integer' },
  { name: 'string "4" in shape (no coercion)', send: json({ input: { shape: [2, '4'], data: input.data } }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'input.shape[1]: must be integer' },
  { name: 'string "1" in data', send: json({ input: { shape: [2], data: [1, '1'] } }), status: 400, code: 'NORM_ERR_DATA_INVALID', message: 'input.data[1]: must be a number or one of "NaN", "Infinity", "-Infinity"' },
  { name: 'boolean axis', send: json({ input, axis: true }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'axis: must be integer' },
  { name: 'number for return_stats', send: json({ input, return_stats: 1 }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'return_stats: must be boolean' },
  { name: 'fractional axis', send: json({ input, axis: 0.5 }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'axis: must be integer' },
  { name: 'unknown eps_placement', send: json({ input, eps_placement: 'between' }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'eps_placement: must be one of "inside", "outside"' },
  // dtypes and data
  { name: 'unknown dtype', send: json({ input: { ...input, dtype: 'int8' } }), status: 400, code: 'NORM_ERR_DTYPE_UNKNOWN', message: `input.dtype: must be one of ${DTYPE_LIST}` },
  { name: 'unknown output_dtype', send: json({ input, output_dtype: 'float8' }), status: 400, code: 'NORM_ERR_DTYPE_UNKNOWN', message: `output_dtype: must be one of ${DTYPE_LIST}` },
  { name: 'dtype names are case-sensitive', send: json({ input: { ...input, dtype: 'Float32' } }), status: 400, code: 'NORM_ERR_DTYPE_UNKNOWN', message: `input.dtype: must be one of ${DTYPE_LIST}` },
  { name: 'data list shorter than shape 2x3', send: json({ input: { shape: [2, 3], data: [1, 2, 3, 4, 5] } }), status: 400, code: 'NORM_ERR_DATA_LENGTH', message: 'input.data: 5 numbers, but shape [2, 3] needs 6' },
  {
    name: 'bin data of 2x4 float32 one byte short',
    send: msgpack({ input: { dtype: 'float32', shape: [2, 4], data: new Uint8Array(31) } }),
    status: 400, code: 'NORM_ERR_DATA_LENGTH', message: 'input.data: 31 bytes, but shape [2, 4] of float32 needs 32',
  },
  {
    name: 'bin data of float16 sized for float32',
    send: msgpack({ input: { dtype: 'float16', shape: [4], data: new Uint8Array(16) } }),
    status: 400, code: 'NORM_ERR_DATA_LENGTH', message: 'input.data: 16 bytes, but shape [4] of float16 needs 8',
  },
  {
    name: 'absurd shape [1e15, 1e15]',
    send: json({ input: { shape: [1e15, 1e15], data: [1] } }),
    status: 400, code: 'NORM_ERR_DATA_LENGTH', message: 'input.data: 1 numbers, but shape [1000000000000000, 1000000000000000] needs 1e+30',
  },
  {
    name: 'bin data without dtype',
    send: msgpack({ input: { shape: [2], data: bytesOf('float32', [1, 2]) } }),
    status: 400, code: 'NORM_ERR_FIELD_MISSING', message: 'input.dtype: required when data is binary',
  },
  {
    name: 'Int32Array extension as data',
    send: msgpack(packTyped({ input: { dtype: 'float32', shape: [2], data: new Int32Array([1, 2]) } })),
    status: 400, code: 'NORM_ERR_DATA_INVALID', message: 'input.data: typed array Int32Array is not accepted; send bytes or Float32Array/Float64Array',
  },
  {
    name: 'Uint16Array extension as weight data',
    send: msgpack(packTyped({ input: { dtype: 'float32', shape: [2], data: new Float32Array([1, 2]) }, weight: { dtype: 'float16', shape: [2], data: new Uint16Array([0x3c00, 0x3c00]) } })),
    status: 400, code: 'NORM_ERR_DATA_INVALID', message: 'weight.data: typed array Uint16Array is not accepted; send bytes or Float32Array/Float64Array',
  },
  {
    name: 'dtype float64 with a Float32Array extension',
    send: msgpack(packTyped({ input: { dtype: 'float64', shape: [2], data: new Float32Array([1, 2]) } })),
    status: 400, code: 'NORM_ERR_DATA_INVALID', message: 'input.data: a Float32Array extension does not match dtype float64',
  },
  {
    name: 'Float32Array extension of the wrong length',
    send: msgpack(packTyped({ input: { shape: [3], data: new Float32Array([1, 2]) } })),
    status: 400, code: 'NORM_ERR_DATA_LENGTH', message: 'input.data: 2 elements, but shape [3] needs 3',
  },
  {
    name: 'data is a string',
    send: msgpack({ input: { dtype: 'float32', shape: [1], data: 'abcd' } }),
    status: 400, code: 'NORM_ERR_DATA_INVALID', message: 'input.data: must be binary or a list of numbers',
  },
  {
    name: 'msgpack-numpy ndarray of int32',
    send: msgpack({
      input: new Map<Buffer, unknown>([[Buffer.from('nd'), true], [Buffer.from('type'), '<i4'], [Buffer.from('kind'), Buffer.alloc(0)], [Buffer.from('shape'), [2]], [Buffer.from('data'), Buffer.alloc(8)]]),
    }),
    status: 400, code: 'NORM_ERR_DTYPE_UNKNOWN', message: `input.dtype: must be one of ${DTYPE_LIST}`,
  },
  // axis, eps, shapes of the other tensors
  { name: 'axis 2 for rank 2', send: json({ input, axis: 2 }), status: 400, code: 'NORM_ERR_AXIS_RANGE', message: 'axis: 2 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)' },
  { name: 'axis -3 for rank 2', send: json({ input, axis: -3 }), status: 400, code: 'NORM_ERR_AXIS_RANGE', message: 'axis: -3 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)' },
  { name: 'huge axis 2^53', send: json({ input, axis: 2 ** 53 }), status: 400, code: 'NORM_ERR_AXIS_RANGE', message: 'axis: 9007199254740992 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)' },
  { name: 'negative eps', send: json({ input, eps: -1e-6 }), status: 400, code: 'NORM_ERR_FIELD_INVALID', message: 'eps: must be >= 0' },
  {
    name: 'weight of shape [3] for rows of 4',
    send: json({ input, weight: { shape: [3], data: [1, 1, 1] } }),
    status: 400, code: 'NORM_ERR_SHAPE_MISMATCH', message: 'weight.shape: [3] must be [4]',
  },
  {
    name: 'weight of the whole input shape',
    send: json({ input, weight: { shape: [2, 4], data: input.data } }),
    status: 400, code: 'NORM_ERR_SHAPE_MISMATCH', message: 'weight.shape: [2, 4] must be [4]',
  },
  {
    name: 'weight of shape [12] for axis 1 of [2, 3, 4] (must be [3, 4])',
    send: json({ input: { shape: [2, 3, 4], data: new Array(24).fill(1) }, axis: 1, weight: { shape: [12], data: new Array(12).fill(1) } }),
    status: 400, code: 'NORM_ERR_SHAPE_MISMATCH', message: 'weight.shape: [12] must be [3, 4]',
  },
  {
    name: 'bias of shape [1, 4]',
    send: layernormJson({ input, bias: { shape: [1, 4], data: [0, 0, 0, 0] } }),
    status: 400, code: 'NORM_ERR_SHAPE_MISMATCH', message: 'bias.shape: [1, 4] must be [4]',
  },
  {
    name: 'residual of shape [8] for input [2, 4]',
    send: json({ input, residual: { shape: [8], data: input.data } }),
    status: 400, code: 'NORM_ERR_SHAPE_MISMATCH', message: 'residual.shape: [8] must be [2, 4]',
  },
  {
    name: 'residual float64 for a float32 input',
    send: json({ input, residual: { ...input, dtype: 'float64' } }),
    status: 400, code: 'NORM_ERR_SHAPE_MISMATCH', message: 'residual.dtype: float64 must match input.dtype float32',
  },
  {
    name: 'weight data length checked before its shape',
    send: json({ input, weight: { shape: [4], data: [1, 1] } }),
    status: 400, code: 'NORM_ERR_DATA_LENGTH', message: 'weight.data: 2 numbers, but shape [4] needs 4',
  },
  { name: 'n = 0: shape [2, 0]', send: json({ input: { shape: [2, 0], data: [] } }), status: 400, code: 'NORM_ERR_EMPTY_ROW', message: 'input.shape: the normalized dimensions [0] hold no elements' },
  {
    name: 'n = 0: shape [3, 0, 4] from axis 1',
    send: layernormJson({ input: { shape: [3, 0, 4], data: [] }, axis: 1 }),
    status: 400, code: 'NORM_ERR_EMPTY_ROW', message: 'input.shape: the normalized dimensions [0, 4] hold no elements',
  },
];

describe('400 Bad Request', () => {
  const ctx = useFreshApp();
  it.each(badRequests)('$name → $status $code', async ({ send, status, code, message }) => {
    expectError(await send(ctx.app), status, code, message);
  });
});

describe('other 4xx', () => {
  const ctx = useFreshApp();

  it('Accept: text/html → 406, answered in JSON', async () => {
    const res = await postJson(ctx.app, '/v1/rmsnorm', { input }, { accept: 'text/html' });
    expectError(res, 406, 'NORM_ERR_NOT_ACCEPTABLE', 'Accept: allows neither application/json nor application/msgpack');
  });

  it('Content-Type text/plain → 415', async () => {
    const res = await postJson(ctx.app, '/v1/rmsnorm', JSON.stringify({ input }), { 'content-type': 'text/plain' });
    expectError(res, 415, 'NORM_ERR_MEDIA_TYPE', 'Content-Type: text/plain; send application/json or application/msgpack');
  });

  it('missing Content-Type → 415', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/layernorm', payload: Buffer.from(JSON.stringify({ input })) });
    expectError(res, 415, 'NORM_ERR_MEDIA_TYPE', 'Content-Type: missing; send application/json or application/msgpack');
  });

  it('415 is decided from the headers, before a malformed body is read', async () => {
    const res = await postJson(ctx.app, '/v1/batch', '{{{{', { 'content-type': 'application/xml' });
    expectError(res, 415, 'NORM_ERR_MEDIA_TYPE', 'Content-Type: application/xml; send application/json or application/msgpack');
  });

  it('406 is decided from the headers, before a malformed body is read', async () => {
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', Buffer.from([0xc1]), { accept: 'image/png' });
    expectError(res, 406, 'NORM_ERR_NOT_ACCEPTABLE', 'Accept: allows neither application/json nor application/msgpack');
  });

  it('unknown route POST /v1/instancenorm → 404', async () => {
    const res = await postJson(ctx.app, '/v1/instancenorm', { input });
    expectError(res, 404, 'NORM_ERR_NOT_FOUND', 'POST /v1/instancenorm: no such route');
  });

  it('GET on an operation route → 404 without the query string in the message', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/rmsnorm?x=1' });
    expectError(res, 404, 'NORM_ERR_NOT_FOUND', 'GET /v1/rmsnorm: no such route');
  });
});
