// every error the service answers with: one code, one status, one message template.
// a test checks this table against the OpenAPI document.
import createError from '@fastify/error';

export const errors = {
  NORM_ERR_BODY_MALFORMED: createError('NORM_ERR_BODY_MALFORMED', '%s', 400),
  NORM_ERR_FIELD_UNKNOWN: createError('NORM_ERR_FIELD_UNKNOWN', '%s', 400),
  NORM_ERR_FIELD_MISSING: createError('NORM_ERR_FIELD_MISSING', '%s', 400),
  NORM_ERR_FIELD_INVALID: createError('NORM_ERR_FIELD_INVALID', '%s', 400),
  NORM_ERR_DTYPE_UNKNOWN: createError('NORM_ERR_DTYPE_UNKNOWN', '%s', 400),
  NORM_ERR_DATA_INVALID: createError('NORM_ERR_DATA_INVALID', '%s', 400),
  NORM_ERR_DATA_LENGTH: createError('NORM_ERR_DATA_LENGTH', '%s', 400),
  NORM_ERR_AXIS_RANGE: createError('NORM_ERR_AXIS_RANGE', '%s', 400),
  NORM_ERR_SHAPE_MISMATCH: createError('NORM_ERR_SHAPE_MISMATCH', '%s', 400),
  NORM_ERR_EMPTY_ROW: createError('NORM_ERR_EMPTY_ROW', '%s', 400),
  NORM_ERR_TIMEOUT_HEADER: createError('NORM_ERR_TIMEOUT_HEADER', '%s', 400),
  NORM_ERR_UNAUTHORIZED: createError('NORM_ERR_UNAUTHORIZED', '%s', 401),
  NORM_ERR_NOT_FOUND: createError('NORM_ERR_NOT_FOUND', '%s', 404),
  NORM_ERR_NOT_ACCEPTABLE: createError('NORM_ERR_NOT_ACCEPTABLE', '%s', 406),
  NORM_ERR_BODY_TOO_LARGE: createError('NORM_ERR_BODY_TOO_LARGE', '%s', 413),
  NORM_ERR_MEDIA_TYPE: createError('NORM_ERR_MEDIA_TYPE', '%s', 415),
  NORM_ERR_INTERNAL: createError('NORM_ERR_INTERNAL', '%s', 500),
  NORM_ERR_WORKER_FAILED: createError('NORM_ERR_WORKER_FAILED', '%s', 500),
  NORM_ERR_OVERLOADED: createError('NORM_ERR_OVERLOADED', '%s', 503),
  NORM_ERR_SHUTTING_DOWN: createError('NORM_ERR_SHUTTING_DOWN', '%s', 503),
  NORM_ERR_DEADLINE: createError('NORM_ERR_DEADLINE', '%s', 504),
} as const;

export type ErrorCode = keyof typeof errors;

export interface ServiceError extends Error {
  code: ErrorCode;
  statusCode: number;
}

export function serviceError(code: ErrorCode, message: string): ServiceError {
  return new errors[code](message) as ServiceError;
}

export function isServiceError(err: unknown): err is ServiceError {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && code in errors;
}
