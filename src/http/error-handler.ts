// every failure becomes a JSON error body { statusCode, code, error, message } with a code from the table.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isServiceError, serviceError, type ServiceError } from '../errors.js';
import { TOO_LARGE } from './body-reader.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/requests/3/input/shape/1` → `requests[3].input.shape[1]` */
export function fieldPath(instancePath: string, child?: string): string {
  const segments = instancePath.split('/').slice(1);
  if (child !== undefined) segments.push(child);
  let path = '';
  for (const raw of segments) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(segment) ? `[${segment}]` : path === '' ? segment : `.${segment}`;
  }
  return path === '' ? 'body' : path;
}

function fromValidation(error: AjvError): ServiceError {
  const { keyword, instancePath, params } = error;
  switch (keyword) {
    case 'additionalProperties':
      return serviceError('NORM_ERR_FIELD_UNKNOWN', `${fieldPath(instancePath, String(params.additionalProperty))}: unknown field`);
    case 'required':
      return serviceError('NORM_ERR_FIELD_MISSING', `${fieldPath(instancePath, String(params.missingProperty))}: required field is missing`);
    case 'anyOf':
      return serviceError('NORM_ERR_DATA_INVALID', `${fieldPath(instancePath)}: must be a number or one of "NaN", "Infinity", "-Infinity"`);
    case 'enum': {
      const path = fieldPath(instancePath);
      const code = /dtype$/.test(path) ? 'NORM_ERR_DTYPE_UNKNOWN' : 'NORM_ERR_FIELD_INVALID';
      return serviceError(code, `${path}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`);
    }
    case 'type':
      return serviceError('NORM_ERR_FIELD_INVALID', `${fieldPath(instancePath)}: must be ${String(params.type)}`);
    default:
      return serviceError('NORM_ERR_FIELD_INVALID', `${fieldPath(instancePath)}: ${error.message ?? 'is invalid'}`);
  }
}

/** fastify's own errors, by their code */
function fromFastify(error: FastifyError): ServiceError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return serviceError('NORM_ERR_BODY_TOO_LARGE', TOO_LARGE);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return serviceError('NORM_ERR_MEDIA_TYPE', 'Content-Type: must be application/json or application/msgpack');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return serviceError('NORM_ERR_BODY_MALFORMED', 'body: empty JSON body');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return serviceError('NORM_ERR_BODY_MALFORMED', 'body: length does not match Content-Length');
    default:
      if (error.statusCode === 400 || error instanceof SyntaxError) {
        return serviceError('NORM_ERR_BODY_MALFORMED', `body: ${error.message}`);
      }
      return serviceError('NORM_ERR_INTERNAL', 'internal error');
  }
}

export function toServiceError(error: FastifyError): ServiceError {
  if (isServiceError(error)) return error;
  if (Array.isArray(error.validation) && error.validation.length > 0) {
    // a failed anyOf lists each branch's error before its own, which is the one that says what is allowed
    const errors = error.validation as AjvError[];
    return fromValidation(errors.find((e) => e.keyword === 'anyOf') ?? errors[0]);
  }
  return fromFastify(error);
}

export function sendError(reply: FastifyReply, error: ServiceError): FastifyReply {
  return reply
    .code(error.statusCode)
    .type('application/json')
    .send({ statusCode: error.statusCode, code: error.code, error: STATUS_CODES[error.statusCode] ?? 'Error', message: error.message });
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toServiceError(error);
    // 503 and 504 are load shedding and deadlines doing their job, not faults
    if (mapped.statusCode === 500) request.log.error({ err: error }, 'request failed');
    if (mapped.code === 'NORM_ERR_OVERLOADED' || mapped.code === 'NORM_ERR_SHUTTING_DOWN') reply.header('retry-after', '1');
    return sendError(reply, mapped);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, serviceError('NORM_ERR_NOT_FOUND', `${request.method} ${request.url.split('?')[0]}: no such route`)));
}
