// /v1's part of the OpenAPI document: its tensors, its answers per status and media type, and the
// transform that documents its request bodies (msgpack tensors as the codec accepts them, examples).
import type { FastifySchema } from 'fastify';
import { DTYPE_NAMES } from '../../codec/dtype.js';
import { OP_NAMES, OPERATIONS, type OpName } from '../../ops/registry.js';
import { JSON_TYPE, MSGPACK_TYPES } from '../media-types.js';
import { admissionRequestHeaders, errorResponse, KEY_SECURITY, serverTiming } from '../openapi/response-schemas.js';
import { requestExamples, responseExamples } from './openapi-examples.js';
import { jsonTensor } from './schemas.js';

const dtype = { type: 'string', enum: DTYPE_NAMES };
const shape = { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1, maxItems: 8 };
const binary = { type: 'string', format: 'binary' };
const listData = {
  type: 'array',
  items: { anyOf: [{ type: 'number' }, { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] }] },
};

const tensorBinary = {
  title: 'TensorBinary',
  type: 'object',
  additionalProperties: false,
  required: ['dtype', 'shape', 'data'],
  properties: { dtype, shape, data: { ...binary, description: 'msgpack bin: the raw little-endian elements, prod(shape) × itemsize bytes' } },
  // redundant beside data's type, and said outright so that linters see the oneOf alternatives
  // exclude each other (Redocly cannot compare schemas with `items`); documentation only
  not: { properties: { data: { type: 'array' } } },
};

const numpyArray = {
  title: 'NumpyArray',
  type: 'object',
  additionalProperties: false,
  required: ['nd', 'type', 'shape', 'data'],
  properties: {
    nd: { type: 'boolean', enum: [true] },
    type: { type: 'string', enum: ['<f4', '<f8', '<f2'], description: 'float32, float64, float16' },
    kind: { description: 'empty', anyOf: [{ type: 'string', maxLength: 0 }, binary] },
    shape,
    data: { ...binary, description: 'the raw little-endian elements' },
  },
};

/** a request tensor in msgpack (the route schema checks it with the annotation x-msgpack-data, which ajv ignores) */
export const tensorMsgpack = { title: 'TensorMsgpack', oneOf: [jsonTensor, tensorBinary, numpyArray] };

const tensorOut = {
  title: 'TensorOut',
  type: 'object',
  additionalProperties: false,
  required: ['dtype', 'shape', 'data'],
  properties: { dtype, shape, data: { ...listData, description: 'prod(shape) numbers, row-major' } },
};

const tensorOutMsgpack = { title: 'TensorOutMsgpack', oneOf: [tensorBinary, numpyArray] };

/** what a named component says about itself; a field that uses it says what it holds there */
export const v1ComponentDescriptions: Readonly<Record<string, string>> = {
  Tensor: 'A tensor: row-major shape, data a list of prod(shape) numbers ("NaN", "Infinity", "-Infinity" for the non-finite values), dtype float32 unless given.',
  TensorMsgpack: 'A tensor in msgpack: the list form of Tensor; data as bin (dtype required); or a msgpack-numpy ndarray. A msgpackr Float32Array/Float64Array extension is accepted as data too (dtype, if given, must match); other typed arrays are a 400.',
  TensorBinary: 'A tensor whose data is msgpack bin.',
  NumpyArray: 'A msgpack-numpy ndarray: a map whose keys are msgpack bin (str is accepted too). A response answers in this form when the request input came in it (bfloat16 excepted); in a batch, item by item.',
  TensorOut: 'A result tensor in JSON.',
  TensorOutMsgpack: 'A result tensor in msgpack: data is bin, or the msgpack-numpy form when the input came in it.',
};

function opResponse(op: OpName, tensor: object, title: string) {
  return { title, type: 'object', additionalProperties: false, required: ['output'], properties: OPERATIONS[op].responseFields(tensor as Record<string, unknown>) };
}

const capitalized = (op: OpName) => `${op[0].toUpperCase()}${op.slice(1)}`;

function batchResponse(title: string, tensor: object) {
  const item = { anyOf: OP_NAMES.map((op) => opResponse(op, tensor, `${capitalized(op)}Response${title.slice('BatchResponse'.length)}`)) };
  return {
    title,
    type: 'object',
    additionalProperties: false,
    required: ['results'],
    properties: { results: { type: 'array', minItems: 1, maxItems: 1024, description: 'one response per request, in order', items: item } },
  };
}

function okResponse(description: string, json: object, msgpack: object, examples: object) {
  const content: Record<string, object> = { [JSON_TYPE]: { schema: json, examples } };
  for (const type of MSGPACK_TYPES) content[type] = { schema: msgpack };
  return { description, headers: { 'Server-Timing': serverTiming }, content };
}

const V1_ERRORS = [400, 401, 406, 408, 413, 415, 431, 500, 503, 504];

function v1Responses(ok: object) {
  return { 200: ok, ...Object.fromEntries(V1_ERRORS.map((status) => [status, errorResponse(status)])) };
}

/** everything but the body of a POST /v1/<op> route schema */
export function opRouteDoc(op: OpName) {
  const name = capitalized(op);
  const { summary, description } = OPERATIONS[op];
  return {
    operationId: op,
    tags: ['normalization'],
    summary,
    description,
    response: v1Responses(okResponse(
      'the normalized tensor, in the negotiated encoding',
      opResponse(op, tensorOut, `${name}Response`),
      opResponse(op, tensorOutMsgpack, `${name}ResponseMsgpack`),
      responseExamples[op],
    )),
  };
}

/** everything but the body of the POST /v1/batch route schema */
export function batchRouteDoc() {
  return {
    operationId: 'batch',
    tags: ['normalization'],
    summary: 'Several normalizations in one request',
    description: 'Each item is a §2 request with its op; the results come in order. The whole batch is checked before anything is computed.',
    response: v1Responses(okResponse(
      'one result per request, in order, in the negotiated encoding',
      batchResponse('BatchResponse', tensorOut),
      batchResponse('BatchResponseMsgpack', tensorOutMsgpack),
      responseExamples.batch,
    )),
  };
}

type Json = Record<string, unknown>;

/** a msgpack tensor as ajv checks it: its data carries the annotation x-msgpack-data */
const isMsgpackTensor = (node: Json) =>
  typeof node.properties === 'object' && node.properties !== null && 'x-msgpack-data' in ((node.properties as Json).data as Json ?? {});

/** documents msgpack data as bin, a list, or a msgpack-numpy ndarray: what the codec accepts, not what ajv checks */
function documentMsgpack(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(documentMsgpack);
  if (typeof node !== 'object' || node === null) return node;
  const object = node as Json;
  if (isMsgpackTensor(object)) return { ...tensorMsgpack, ...(typeof object.description === 'string' ? { description: object.description } : {}) };
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, documentMsgpack(v)]));
}

/** names each request body, adds its examples, and documents msgpack tensors */
function documentBody(body: { content: Record<string, { schema: Json }> }, op: OpName | 'batch') {
  const name = `${op[0].toUpperCase()}${op.slice(1)}Request`;
  const content: Record<string, { schema: Json }> = {};
  for (const [type, { schema }] of Object.entries(body.content)) {
    const msgpack = (MSGPACK_TYPES as readonly string[]).includes(type);
    content[type] = {
      schema: { title: msgpack ? `${name}Msgpack` : name, ...(msgpack ? documentMsgpack(schema) as Json : schema), 'x-examples': requestExamples[op] },
    };
  }
  return { content };
}

/** what the document shows for a /v1 route: its body documented, its headers and key requirement; the
 *  schema fastify validates with is untouched (route config `openapi`, read by openapi/document.ts) */
export function documentRoute(route: OpName | 'batch') {
  return (schema: FastifySchema): FastifySchema => ({
    ...schema, body: documentBody(schema.body as { content: Record<string, { schema: Json }> }, route), headers: admissionRequestHeaders, security: KEY_SECURITY,
  } as FastifySchema);
}
