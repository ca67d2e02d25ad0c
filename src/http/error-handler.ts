// every failure becomes a coded ServiceError (errors.ts), answered as JSON in its scope's form: the
// service's { statusCode, code, error, message } unless a dialect registers its own.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isServiceError, serviceError, type ServiceError } from '../errors.js';

export interface AjvError {
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
      return serviceError('fieldUnknown', fieldPath(instancePath, String(params.additionalProperty)));
    case 'required':
      return serviceError('fieldMissing', fieldPath(instancePath, String(params.missingProperty)));
    case 'anyOf':
      return serviceError('dataNotNumber', fieldPath(instancePath));
    case 'enum': {
      const path = fieldPath(instancePath);
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return serviceError(/dtype$/.test(path) ? 'dtypeUnknown' : 'fieldNotOneOf', path, allowed);
    }
    case 'type':
      return serviceError('fieldType', fieldPath(instancePath), String(params.type));
    case 'discriminator':
      // a batch item's op missing or not one of the table's (the enum beside it lists them)
      return params.error === 'tag'
        ? serviceError('fieldMissing', fieldPath(instancePath, String(params.tag)))
        : serviceError('fieldInvalid', fieldPath(instancePath, String(params.tag)), 'is not an operation');
    default:
      return serviceError('fieldInvalid', fieldPath(instancePath), error.message ?? 'is invalid');
  }
}

/** fastify's own errors, by their code */
function fromFastify(error: FastifyError): ServiceError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return serviceError('bodyTooLarge');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return serviceError('mediaTypeInvalid');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return serviceError('bodyEmptyJson');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return serviceError('bodyLengthMismatch');
    default:
      if (error.statusCode === 400 || error instanceof SyntaxError) {
        return serviceError('bodyInvalid', error.message);
      }
      return serviceError('internal');
  }
}

/** ajv's errors for a body → the coded 400 naming the field */
export function validationError(errors: AjvError[]): ServiceError {
  // a failed anyOf lists each branch's error before its own, which is the one that says what is allowed
  return fromValidation(errors.find((e) => e.keyword === 'anyOf') ?? errors[0]);
}

export function toServiceError(error: FastifyError): ServiceError {
  if (isServiceError(error)) return error;
  if (Array.isArray(error.validation) && error.validation.length > 0) return validationError(error.validation as AjvError[]);
  return fromFastify(error);
}

/** a dialect's error body for a coded error */
export type ErrorBody = (error: ServiceError) => unknown;

/** the service's own form (API.md §5), used by /v1 and the service endpoints */
export const serviceErrorBody: ErrorBody = (error) =>
  ({ statusCode: error.statusCode, code: error.code, error: STATUS_CODES[error.statusCode] ?? 'Error', message: error.message });

/**
 * `scope`'s errors and its not-found answers in the form `body` gives. In a prefixed plugin the
 * not-found handler is the plugin's own, so its hooks (auth: 401 before 404) run for it too
 */
export function registerErrorReplies(scope: FastifyInstance, body: ErrorBody): void {
  const send = (reply: FastifyReply, error: ServiceError) => reply.code(error.statusCode).type('application/json').send(body(error));
  scope.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toServiceError(error);
    // 503 and 504 are load shedding and deadlines doing their job, not faults
    if (mapped.statusCode === 500) request.server.log.error({ reqId: request.id, err: error }, 'request failed');
    if (mapped.statusCode === 503) reply.header('retry-after', '1');
    // fastify closes the connection after any body-reading error, and a client still sending its
    // body then meets a reset (EPIPE) instead of this answer. Overload is transient and the client
    // is sending what it declared: keep the connection, and Node reads any rest of the body and
    // throws it away (nothing is held for it) before the next request on the connection
    if (mapped.code === 'NORM_ERR_OVERLOADED') reply.removeHeader('connection');
    return send(reply, mapped);
  });
  scope.setNotFoundHandler((request, reply) => send(reply, serviceError('notFound', request.method, request.url.split('?')[0])));
}
