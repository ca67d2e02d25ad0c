// every error the service answers with: one entry per message, each with its stable code, its message
// template (util.format, as fastify's lib/errors.js) and its status. Messages start with the path of
// the offending field or header. A test checks the codes against the OpenAPI document.
import createError from '@fastify/error';

const BAD = 400;

export const errors = {
  // the body as a whole
  bodyInvalid: createError('NORM_ERR_BODY_MALFORMED', 'body: %s', BAD),
  bodyNotMsgpack: createError('NORM_ERR_BODY_MALFORMED', 'body: not valid msgpack (%s)', BAD),
  bodyTooDeep: createError('NORM_ERR_BODY_MALFORMED', 'body: nested deeper than %d levels', BAD),
  bodyC1: createError('NORM_ERR_BODY_MALFORMED', 'body: 0xc1 is not a msgpack value', BAD),
  bodyKeyNotUtf8: createError('NORM_ERR_BODY_MALFORMED', 'body: a map key is not valid UTF-8', BAD),
  bodyKeyType: createError('NORM_ERR_BODY_MALFORMED', 'body: map keys must be strings, got %s', BAD),
  bodyLonger: createError('NORM_ERR_BODY_MALFORMED', 'body: longer than Content-Length', BAD),
  bodyShorter: createError('NORM_ERR_BODY_MALFORMED', 'body: shorter than Content-Length', BAD),
  bodyLengthMismatch: createError('NORM_ERR_BODY_MALFORMED', 'body: length does not match Content-Length', BAD),
  bodyEmptyJson: createError('NORM_ERR_BODY_MALFORMED', 'body: empty JSON body', BAD),
  // fields, by path
  fieldUnknown: createError('NORM_ERR_FIELD_UNKNOWN', '%s: unknown field', BAD),
  fieldMissing: createError('NORM_ERR_FIELD_MISSING', '%s: required field is missing', BAD),
  dtypeRequired: createError('NORM_ERR_FIELD_MISSING', '%s.dtype: required when data is binary', BAD),
  fieldType: createError('NORM_ERR_FIELD_INVALID', '%s: must be %s', BAD),
  fieldNotOneOf: createError('NORM_ERR_FIELD_INVALID', '%s: must be one of %s', BAD),
  fieldInvalid: createError('NORM_ERR_FIELD_INVALID', '%s: %s', BAD),
  fieldUndefined: createError('NORM_ERR_FIELD_INVALID', '%s: undefined (msgpack extension type 0) is no value', BAD),
  dtypeUnknown: createError('NORM_ERR_DTYPE_UNKNOWN', '%s: must be one of %s', BAD),
  // tensor data
  dataNotNumber: createError('NORM_ERR_DATA_INVALID', '%s: must be a number or one of "NaN", "Infinity", "-Infinity"', BAD),
  dataOverflow: createError('NORM_ERR_DATA_INVALID', '%s: number overflows float64', BAD),
  dataKind: createError('NORM_ERR_DATA_INVALID', '%s.data: must be binary or a list of numbers', BAD),
  dataTypedArray: createError('NORM_ERR_DATA_INVALID', '%s.data: typed array %s is not accepted; send bytes or Float32Array/Float64Array', BAD),
  dataExtensionDtype: createError('NORM_ERR_DATA_INVALID', '%s.data: a %s extension does not match dtype %s', BAD),
  dataBytes: createError('NORM_ERR_DATA_LENGTH', '%s.data: %d bytes, but shape [%s] of %s needs %d', BAD),
  dataCount: createError('NORM_ERR_DATA_LENGTH', '%s.data: %d %s, but shape [%s] needs %d', BAD),
  // shapes and axes
  axisRange: createError('NORM_ERR_AXIS_RANGE', '%s: %d is out of range for an input of rank %d (needs %d ≤ axis < %d)', BAD),
  shapeMismatch: createError('NORM_ERR_SHAPE_MISMATCH', '%s.shape: [%s] must be [%s]', BAD),
  dtypeMismatch: createError('NORM_ERR_SHAPE_MISMATCH', '%s.dtype: %s must match input.dtype %s', BAD),
  emptyRow: createError('NORM_ERR_EMPTY_ROW', '%s: the normalized dimensions [%s] hold no elements', BAD),
  partialEmpty: createError('NORM_ERR_EMPTY_ROW', '%s: keeps ⌊%d × %s⌋ = 0 elements of each row; needs at least 1', BAD),
  rankTooLow: createError('NORM_ERR_SHAPE_MISMATCH', '%s: rank %d; %s needs rank ≥ 2', BAD),
  pairMissing: createError('NORM_ERR_FIELD_MISSING', '%s: required when %s', BAD),
  tooFewValues: createError('NORM_ERR_TOO_FEW_VALUES', '%s: [%s] gives %d value(s) per channel; training needs at least 2', BAD),
  groupsDivide: createError('NORM_ERR_FIELD_INVALID', '%s: %d does not divide the %d channels of input.shape[1]', BAD),
  // headers and routes
  timeoutHeader: createError('NORM_ERR_TIMEOUT_HEADER', 'X-Request-Timeout-Ms: "%s" must be a whole number of milliseconds ≥ 1', BAD),
  unauthorized: createError('NORM_ERR_UNAUTHORIZED', 'Authorization: a valid "Bearer <key>" is required', 401),
  unauthorizedGrpc: createError('NORM_ERR_UNAUTHORIZED', 'authorization: a metadata entry "Bearer <key>" with a valid key is required', 401),
  notFound: createError('NORM_ERR_NOT_FOUND', '%s %s: no such route', 404),
  modelUnknown: createError('NORM_ERR_NOT_FOUND', 'model %s: unknown; the models are %s', 404),
  healthServiceUnknown: createError('NORM_ERR_NOT_FOUND', 'service %s: not served; ask for "" or "%s"', 404),
  modelVersionUnknown: createError('NORM_ERR_NOT_FOUND', 'model %s version %s: unknown; the one version is %s', 404),
  notAcceptable: createError('NORM_ERR_NOT_ACCEPTABLE', 'Accept: allows neither application/json nor application/msgpack', 406),
  bodyStalled: createError('NORM_ERR_BODY_STALLED', 'body: no bytes arrived for %d ms', 408),
  bodyTooSlow: createError('NORM_ERR_BODY_TOO_SLOW', 'body: %d bytes in %d ms, under the minimum rate of %d bytes/s after the first %d ms', 408),
  bodyTooLarge: createError('NORM_ERR_BODY_TOO_LARGE', 'body: larger than the byte limit', 413),
  headersTimeout: createError('NORM_ERR_HEADERS_TIMEOUT', 'request headers: not complete within %d ms', 408),
  headersTooLarge: createError('NORM_ERR_HEADERS_TOO_LARGE', 'request headers: over the size limit', 431),
  requestMalformed: createError('NORM_ERR_REQUEST_MALFORMED', 'request: the HTTP parser refused it (%s)', BAD),
  mediaType: createError('NORM_ERR_MEDIA_TYPE', 'Content-Type: %s; send application/json or application/msgpack', 415),
  contentEncoding: createError('NORM_ERR_MEDIA_TYPE', 'Content-Encoding: %s is not supported; send the body as it is (identity)', 415),
  mediaTypeInvalid: createError('NORM_ERR_MEDIA_TYPE', 'Content-Type: must be application/json or application/msgpack', 415),
  // the server
  internal: createError('NORM_ERR_INTERNAL', 'internal error', 500),
  workerFailed: createError('NORM_ERR_WORKER_FAILED', 'a worker thread failed: %s', 500),
  taskFailed: createError('NORM_ERR_WORKER_FAILED', 'a worker task failed: %s', 500),
  overloaded: createError('NORM_ERR_OVERLOADED', 'the server is overloaded; retry later', 503),
  tooManyInFlight: createError('NORM_ERR_OVERLOADED', 'too many requests in flight; retry later', 503),
  queueFull: createError('NORM_ERR_OVERLOADED', 'the work queue is full; retry later', 503),
  memoryExhausted: createError('NORM_ERR_OVERLOADED', 'shared tensor memory is exhausted; retry later', 503),
  poolFailed: createError('NORM_ERR_NOT_READY', 'the worker pool is not up; retry on another instance', 503),
  shuttingDown: createError('NORM_ERR_SHUTTING_DOWN', 'the server is shutting down; retry on another instance', 503),
  deadline: createError('NORM_ERR_DEADLINE', 'the request deadline passed before its result was ready', 504),
} as const;

export type ErrorName = keyof typeof errors;

/** every code with its status: what clients see, and what the OpenAPI document lists */
export const errorCodes: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(
  Object.values(errors).map((make) => {
    const sample = new make() as ServiceError;
    return [sample.code, sample.statusCode];
  }),
));

export interface ServiceError extends Error {
  code: string;
  statusCode: number;
}

/** the error `name`, its template filled with `args` */
export function serviceError(name: ErrorName, ...args: (string | number)[]): ServiceError {
  return new errors[name](...args) as ServiceError;
}

export function isServiceError(err: unknown): err is ServiceError {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && code in errorCodes;
}
