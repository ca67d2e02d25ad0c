// what each route answers, per status and media type: fastify serializes error bodies with these
// schemas, and @fastify/swagger writes them (with summaries, headers, examples) into the OpenAPI document.
// a schema with a `title` becomes a named component of the document (see tidy.ts).
import { STATUS_CODES } from 'node:http';
import { DTYPE_NAMES } from '../../codec/dtype.js';
import { errorCodes, serviceError } from '../../errors.js';
import { OP_NAMES, OPERATIONS, type OpName } from '../../ops/registry.js';
import { errorExamples, responseExamples } from './examples.js';
import { JSON_TYPE, MSGPACK_TYPES } from '../media-types.js';
import { jsonTensor } from '../v1/schemas.js';

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
export const componentDescriptions: Readonly<Record<string, string>> = {
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

/** the codes of the error table that answer with `status` */
export function codesFor(status: number): string[] {
  return Object.keys(errorCodes).filter((code) => errorCodes[code] === status);
}

/** exactly the body the error handler sends: fast-json-stringify writes these four fields in this order */
function errorBody(status: number) {
  return {
    title: `Error${status}`,
    type: 'object',
    additionalProperties: false,
    required: ['statusCode', 'code', 'error', 'message'],
    properties: {
      statusCode: { type: 'integer', enum: [status] },
      code: { type: 'string', enum: codesFor(status), description: 'stable and machine-readable' },
      error: { type: 'string', enum: [STATUS_CODES[status]] },
      message: { type: 'string', description: 'starts with the path of the offending field or header, e.g. requests[2].weight.shape' },
    },
  };
}

export const ERROR_WHEN: Readonly<Record<number, string>> = {
  400: 'Malformed msgpack or JSON, schema violation, unknown dtype, data length ≠ shape, bad axis, eps, weight, bias or residual shape, n = 0, or a bad X-Request-Timeout-Ms.',
  401: 'API keys are configured and the request has no valid Authorization: Bearer <key>. Checked before anything else.',
  404: 'No such route (any other path or method), or no such page of docs/.',
  406: 'Accept allows neither application/json nor a msgpack type.',
  408: 'The body stalled: no bytes arrived for BODY_IDLE_TIMEOUT_MS while it was being read. The connection is closed after the answer.',
  413: 'The body is over the byte limit (MAX_BODY_BYTES): by its Content-Length, or as the bytes arrive.',
  415: 'Content-Type is missing, or neither application/json nor a msgpack type.',
  500: 'An internal error, or a worker thread failed.',
  503: 'The work queue or tensor memory (MAX_TENSOR_MEMORY_BYTES) is full, or the server is shutting down. Transient: once memory is given back, every request that fits is served again.',
  504: "The request's deadline passed before its result was ready.",
};

export const retryAfter = { type: 'integer', minimum: 0, description: 'seconds to wait before retrying' };

export const serverTiming = {
  type: 'string',
  pattern: '^(?=.*\\bdecode;dur=)(?=.*\\bqueue;dur=)(?=.*\\bcompute;dur=)(?=.*\\bencode;dur=)',
  description: 'the metrics decode, queue, compute and encode, each with its dur in milliseconds, e.g. "decode;dur=0.120, queue;dur=0.010, compute;dur=0.050, encode;dur=0.020"',
};

/** an error answer in the `content` form fastify and @fastify/swagger both read */
export function errorResponse(status: number) {
  const examples = errorExamples[status];
  return {
    description: ERROR_WHEN[status],
    ...(status === 503 ? { headers: { 'Retry-After': retryAfter } } : {}),
    content: { [JSON_TYPE]: { schema: errorBody(status), ...(examples ? { examples } : {}) } },
  };
}

const queryError = serviceError('fieldUnknown', '?verbose');

/** what a service endpoint answers to a query parameter: it takes none (service-routes.ts) */
export const queryErrorResponse = {
  description: 'A query parameter: this endpoint takes none. The message names the first one.',
  content: {
    [JSON_TYPE]: {
      schema: {
        ...errorBody(400),
        title: 'QueryError',
        properties: { ...errorBody(400).properties, code: { type: 'string', enum: [queryError.code] }, message: { type: 'string', description: 'starts with ? and the name of the query parameter' } },
      },
      examples: { verbose: { summary: 'GET /healthz?verbose=1', value: { statusCode: 400, code: queryError.code, error: STATUS_CODES[400], message: queryError.message } } },
    },
  },
};

function okResponse(description: string, json: object, msgpack: object, examples: object) {
  const content: Record<string, object> = { [JSON_TYPE]: { schema: json, examples } };
  for (const type of MSGPACK_TYPES) content[type] = { schema: msgpack };
  return { description, headers: { 'Server-Timing': serverTiming }, content };
}

const V1_ERRORS = [400, 401, 406, 408, 413, 415, 500, 503, 504];

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

/** either a bearer key or none: the server asks for one only when it has API keys */
export const KEY_SECURITY: readonly { [scheme: string]: string[] }[] = [{ bearerAuth: [] }, {}];

/** request headers of every /v1 route (documentation only: guards.ts checks X-Request-Timeout-Ms) */
export const v1RequestHeaders = {
  type: 'object',
  properties: {
    'X-Request-Timeout-Ms': {
      type: 'string',
      pattern: '^0*[1-9][0-9]*$',
      description: 'a shorter deadline for this request, in ms: decimal digits only, ≥ 1; larger values are capped at REQUEST_TIMEOUT_MS; anything else is a 400',
    },
  },
};

/** an answer with a JSON body */
export function json(description: string, schema: object) {
  return { description, content: { [JSON_TYPE]: { schema } } };
}
