// the time rules of bodies still arriving (API.md §5 408s; docs/api.md): no pause longer than
// BODY_IDLE_TIMEOUT_MS, and, after BODY_MIN_RATE_GRACE_MS, at least BODY_MIN_BYTES_PER_S on average.
// One sweep a few times per idle limit looks at every body still arriving, as Node's own
// connectionsCheckingInterval does for headers, instead of timers per request: a small body, in with
// its headers, costs a push and a pop, and a large one no timer refresh per chunk. (The bodies are in
// arrays, each body keeping its place: a Map's entry made and dropped per request reallocated the
// map's table each time.) A sweep can only be late, never early: progress is stamped at the sweep
// that sees it, so a body is idle at least as long as the sweep counts, and it is failed within two
// sweeps after its limit (docs/api.md).
import { serviceError, type ServiceError } from '../errors.js';
import type { BodyLimits } from './body-reader.js';

export interface Arriving {
  /** bytes in so far, kept up to date by the reader */
  received: number;
  /** the reader ends the body with this error (its memory given back) */
  fail(err: ServiceError): void;
  /** the watch's own: where it keeps the body, -1 while not watched (a new body's value) */
  slot: number;
}

interface Watched {
  /** the sweep's clock when this body was first swept, and when its count last moved */
  firstSeenAt: number;
  progressAt: number;
  receivedThen: number;
}

export class BodyWatch {
  /** the bodies arriving, and what the sweeps saw of each (null until the first sweep), alike by index */
  private readonly bodies: Arriving[] = [];
  private readonly watched: (Watched | null)[] = [];
  private sweeper: NodeJS.Timeout | null = null;
  private readonly everyMs: number;

  constructor(private readonly limits: BodyLimits) {
    // a few sweeps per limit, at most a second apart (the grace counts only where there is a rate rule)
    const shortest = limits.bodyMinBytesPerSecond > 0 ? Math.min(limits.bodyIdleTimeoutMs, limits.bodyMinRateGraceMs) : limits.bodyIdleTimeoutMs;
    this.everyMs = Math.max(5, Math.min(1000, shortest / 4));
  }

  add(body: Arriving): void {
    if (body.slot >= 0) return;
    body.slot = this.bodies.length;
    this.bodies.push(body);
    this.watched.push(null);
    // a sweep that found nothing stopped the sweeper; nothing to look at, no wake-ups
    if (this.sweeper === null) this.sweeper = setInterval(() => this.sweep(), this.everyMs).unref();
  }

  delete(body: Arriving): void {
    const i = body.slot;
    if (i < 0) return;
    body.slot = -1;
    // the last body takes its place
    const last = this.bodies.length - 1;
    if (i !== last) {
      const moved = this.bodies[last];
      moved.slot = i;
      this.bodies[i] = moved;
      this.watched[i] = this.watched[last];
    }
    this.bodies.pop();
    this.watched.pop();
  }

  private sweep(): void {
    if (this.bodies.length === 0) {
      clearInterval(this.sweeper!);
      this.sweeper = null;
      return;
    }
    const now = performance.now();
    const { bodyIdleTimeoutMs: idleMs, bodyMinRateGraceMs: graceMs, bodyMinBytesPerSecond: minRate } = this.limits;
    // from the last: a body failed here leaves, and the one that takes its place was swept already
    for (let i = this.bodies.length - 1; i >= 0; i--) {
      if (i >= this.bodies.length) continue; // a failure took more than its own body
      const body = this.bodies[i];
      const watched = this.watched[i];
      if (watched === null) {
        // first seen now: timed from here (a body is given up to one sweep more, never less)
        this.watched[i] = { firstSeenAt: now, progressAt: now, receivedThen: body.received };
        continue;
      }
      if (body.received !== watched.receivedThen) {
        watched.receivedThen = body.received;
        watched.progressAt = now;
      } else if (now - watched.progressAt >= idleMs) {
        body.fail(serviceError('bodyStalled', idleMs));
        continue;
      }
      // the minimum rate (as mod_reqtimeout's MinRate): the grace, plus a second per minRate bytes
      const elapsedMs = now - watched.firstSeenAt;
      if (minRate > 0 && elapsedMs >= graceMs + (body.received / minRate) * 1000) {
        body.fail(serviceError('bodyTooSlow', body.received, Math.round(elapsedMs), minRate, graceMs));
      }
    }
  }
}

const watches = new WeakMap<BodyLimits, BodyWatch>();
/** the last one asked for: a process serves one app, so most lookups end here, not in the WeakMap */
let last: { limits: BodyLimits; watch: BodyWatch } | null = null;

/** the one watch of an app's limits (its config object) */
export function bodyWatchFor(limits: BodyLimits): BodyWatch {
  if (last !== null && last.limits === limits) return last.watch;
  let watch = watches.get(limits);
  if (watch === undefined) watches.set(limits, (watch = new BodyWatch(limits)));
  last = { limits, watch };
  return watch;
}
