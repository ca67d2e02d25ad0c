// what runs before a /v1/* request is read: auth (401 first), admission (503), and its deadline.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { serviceError, type ServiceError } from '../errors.js';
import { Deadline } from '../jobs/deadline.js';
import { isV2Path } from './v2/path.js';

export interface ServiceState {
  /** set on SIGTERM: /readyz answers 503 and new work is refused */
  draining: boolean;
  /** the workers could not load their kernels (a broken build): /readyz answers 503 and work is refused */
  poolFailed: boolean;
  /** /v1 requests admitted and not yet answered */
  inFlight: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    deadline: Deadline;
    /** a bad X-Request-Timeout-Ms, answered after the body (400s come after 413) */
    timeoutHeaderError: ServiceError | null;
  }
}

const digest = (key: string) => createHash('sha256').update(key).digest();

/** /v1/…, and /v2 with everything under it but the two health checks (OIP.md) */
function guardedPath(path: string): boolean {
  if (path.startsWith('/v1/')) return true;
  if (!isV2Path(path)) return false;
  return path !== '/v2/health/live' && path !== '/v2/health/ready';
}

/**
 * guarded as the router sees it: it routes "/%761/rmsnorm" to /v1/rmsnorm, so the raw URL alone is
 * not enough; an unmatched path is guarded when it is guarded raw or decoded (401 before 404)
 */
function isGuarded(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route !== undefined) return guardedPath(route);
  const path = request.url.split('?')[0];
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // a malformed escape: judge the raw path
  }
  return guardedPath(path) || guardedPath(decoded);
}

/** compares digests so the time taken says nothing about the keys */
export function createAuthHook(apiKeys: readonly string[]) {
  const keys = apiKeys.map(digest);
  return async function authenticate(request: FastifyRequest): Promise<void> {
    if (keys.length === 0 || !isGuarded(request)) return;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    const given = digest(match ? match[1] : '');
    let ok = false;
    for (const key of keys) ok = timingSafeEqual(key, given) || ok;
    if (!ok || match === null) throw serviceError('unauthorized');
  };
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

export function createAdmissionHook(config: Pick<Config, 'requestTimeoutMs' | 'maxQueue' | 'workers'>, state: ServiceState) {
  // each admitted request holds at most one body and its shared memory: this bounds memory
  const maxInFlight = config.maxQueue + config.workers;
  return function admit(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    if (state.draining) return done(serviceError('shuttingDown'));
    if (state.poolFailed) return done(serviceError('poolFailed'));
    if (state.inFlight >= maxInFlight) return done(serviceError('tooManyInFlight'));
    state.inFlight++;
    const deadline = new Deadline();
    const timer = setTimeout(() => deadline.abort(), timeoutFor(request, config.requestTimeoutMs));
    reply.raw.once('close', () => {
      clearTimeout(timer);
      state.inFlight--;
      // closed before the answer was written: the client went away, drop its queued work
      if (!reply.raw.writableFinished) deadline.abort();
    });
    request.deadline = deadline;
    done();
  };
}
