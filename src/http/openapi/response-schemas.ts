// the parts of route schemas every dialect and the service endpoints share: the service's error
// answers (fastify serializes error bodies with these schemas), Retry-After, Server-Timing, the
// deadline header, the key requirement. A schema with a `title` becomes a named component of the
// document (see tidy.ts).
import { STATUS_CODES } from 'node:http';
import { errorCodes, serviceError } from '../../errors.js';
import { errorExamples } from './examples.js';
import { JSON_TYPE } from '../media-types.js';

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
  400: 'Malformed msgpack or JSON, schema violation, unknown dtype, data length ≠ shape, bad axis, eps, weight, bias or residual shape, n = 0, or a bad X-Request-Timeout-Ms; or a request the HTTP parser refuses (NORM_ERR_REQUEST_MALFORMED: a malformed request line or header, Content-Length with Transfer-Encoding), then the connection is closed.',
  401: 'API keys are configured and the request has no valid Authorization: Bearer <key>. Checked before anything else.',
  404: 'No such route (any other path or method), or no such page of docs/.',
  406: 'Accept allows neither application/json nor a msgpack type.',
  408: 'The body stalled (no bytes for BODY_IDLE_TIMEOUT_MS), or came too slowly (under BODY_MIN_BYTES_PER_S on average once BODY_MIN_RATE_GRACE_MS have passed), or the headers were not complete within HEADERS_TIMEOUT_MS. The connection is closed after the answer.',
  413: 'The body is over the byte limit (MAX_BODY_BYTES): by its Content-Length, or as the bytes arrive.',
  415: 'Content-Type is missing, or neither application/json nor a msgpack type.',
  431: 'The request headers are over the size limit (16 KiB); the HTTP parser answers before any route, in this form on every path. The connection is closed after the answer.',
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

/** either a bearer key or none: the server asks for one only when it has API keys */
export const KEY_SECURITY: readonly { [scheme: string]: string[] }[] = [{ bearerAuth: [] }, {}];

/** request headers of every route subject to admission (documentation only: http/admission-hook.ts checks X-Request-Timeout-Ms) */
export const admissionRequestHeaders = {
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
