// the engine's admission (engine/admission.ts) for the routes a dialect subjects to it: an onRequest
// hook for the request's deadline from X-Request-Timeout-Ms and its cancellation when the client goes
// away, and, once its body is in and checked, its work slot until the answer is out (the request's
// close ends it: http/request-scope.ts), taken by the route's handler as it begins: a preValidation
// hook for it cost every request fastify's hook runner (with it, a small request's CPU at 4,000 req/s
// read 1.03-1.04x, npm run ab both ways; in one warm process no difference: it is the cold path's).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Admitted } from '../engine/admission.js';
import type { Cancellation } from '../engine/cancellation.js';
import type { Engine } from '../engine/engine.js';
import { serviceError, type ServiceError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    cancellation: Cancellation;
    /** a bad X-Request-Timeout-Ms, answered after the body (400s come after 413) */
    timeoutHeaderError: ServiceError | null;
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

export interface AdmissionHooks {
  /** onRequest: 503 at a hard limit, else the request is admitted and its body may come */
  admit: Hook;
  /** the handler's first step, the body in and checked: throws the 400 of a bad X-Request-Timeout-Ms
   *  (after 413 and the body's 400s), then takes the work slot (throws the 503 when none is free) */
  startWork(request: FastifyRequest): void;
}

/** the deadline is min(REQUEST_TIMEOUT_MS, X-Request-Timeout-Ms); "decimal digits only, ≥ 1" */
function timeoutFor(request: FastifyRequest, defaultMs: number): number {
  const header = request.headers['x-request-timeout-ms'];
  if (header === undefined) return defaultMs;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    request.timeoutHeaderError = serviceError('timeoutHeader', value.slice(0, 32));
    return defaultMs;
  }
  return Math.min(Number(value), defaultMs);
}

/** decorates `scope`'s requests and gives its hooks */
export function admissionHooks(scope: FastifyInstance, engine: Engine): AdmissionHooks {
  scope.decorateRequest('cancellation', null as unknown as Cancellation);
  scope.decorateRequest('timeoutHeaderError', null);
  const { admission, config } = engine;
  return {
    admit(request, reply, done) {
      let admitted: Admitted;
      try {
        admitted = admission.admit(timeoutFor(request, config.requestTimeoutMs));
      } catch (err) {
        return done(err as Error);
      }
      // ended when the request closes (http/request-scope.ts)
      request.admitted = admitted;
      request.cancellation = admitted.cancellation;
      done();
    },
    startWork(request) {
      if (request.timeoutHeaderError !== null) throw request.timeoutHeaderError;
      request.admitted!.startWork();
    },
  };
}
