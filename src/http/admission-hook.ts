// the engine's admission (engine/admission.ts) as Fastify hooks, for the routes a dialect subjects to
// it: the request's deadline from X-Request-Timeout-Ms, its cancellation when the client goes away,
// and, once its body is in, its work slot until the answer is out (the request's close ends it:
// http/request-scope.ts).
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
  /** preValidation, the body in: a bad X-Request-Timeout-Ms is a 400 (after 413), then the work slot (503 when none) */
  afterBody: Hook;
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
    afterBody(request, _reply, done) {
      if (request.timeoutHeaderError !== null) return done(request.timeoutHeaderError);
      try {
        request.admitted!.startWork();
      } catch (err) {
        return done(err as Error);
      }
      done();
    },
  };
}
