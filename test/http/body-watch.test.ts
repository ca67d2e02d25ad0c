// the body watch (src/http/body-watch.ts) on vitest's fake clock: a stalled body fails at its idle
// limit, never before and at most one sweep after; progress between sweeps keeps it alive; the
// minimum rate after the grace; a body deleted (in, or failed) is no longer looked at.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { BodyWatch, type Arriving } from '../../src/http/body-watch.js';
import type { ServiceError } from '../../src/errors.js';

beforeEach(() => vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] }));
afterEach(() => vi.useRealTimers());

/** a body as the reader makes it: failing ends it, so the watch lets go of it */
function body(watch: BodyWatch): Arriving & { failures: ServiceError[] } {
  const failures: ServiceError[] = [];
  const arriving = { received: 0, slot: -1, failures, fail: (err: ServiceError) => { failures.push(err); watch.delete(arriving); } };
  return arriving;
}

it('a stalled body fails after its idle limit, not before, within one sweep of it', () => {
  const watch = new BodyWatch({ maxBodyBytes: 1 << 20, bodyIdleTimeoutMs: 400, bodyMinRateGraceMs: 60_000, bodyMinBytesPerSecond: 1024 });
  const stalled = body(watch);
  watch.add(stalled);
  vi.advanceTimersByTime(400); // sweeps every 100 ms: first seen at 100, idle 300 ms so far
  expect(stalled.failures).toEqual([]);
  vi.advanceTimersByTime(100);
  expect(stalled.failures.map((e) => e.code)).toEqual(['NORM_ERR_BODY_STALLED']);
});

it('a body that keeps arriving is never idle; once deleted it is not looked at', () => {
  const watch = new BodyWatch({ maxBodyBytes: 1 << 20, bodyIdleTimeoutMs: 400, bodyMinRateGraceMs: 60_000, bodyMinBytesPerSecond: 0 });
  const steady = body(watch);
  watch.add(steady);
  for (let i = 0; i < 50; i++) {
    steady.received += 10;
    vi.advanceTimersByTime(300);
  }
  expect(steady.failures).toEqual([]);
  watch.delete(steady);
  vi.advanceTimersByTime(10_000);
  expect(steady.failures).toEqual([]);
});

it('after the grace, a body slower than the minimum rate fails; one at the rate does not', () => {
  const limits = { maxBodyBytes: 1 << 20, bodyIdleTimeoutMs: 10_000, bodyMinRateGraceMs: 1_000, bodyMinBytesPerSecond: 1000 };
  const watch = new BodyWatch(limits);
  const slow = body(watch);
  const fast = body(watch);
  watch.add(slow);
  watch.add(fast);
  // 5 s: the grace plus 4 s allows 4,000 bytes
  for (let t = 0; t < 50; t++) {
    slow.received += 50; // 500 B/s
    fast.received += 250; // 2,500 B/s
    vi.advanceTimersByTime(100);
  }
  expect(fast.failures).toEqual([]);
  expect(slow.failures.map((e) => e.code)).toEqual(['NORM_ERR_BODY_TOO_SLOW']);
});

it('among many bodies, those that stall fail and the rest do not, whichever leave meanwhile', () => {
  const watch = new BodyWatch({ maxBodyBytes: 1 << 20, bodyIdleTimeoutMs: 400, bodyMinRateGraceMs: 60_000, bodyMinBytesPerSecond: 0 });
  const bodies = Array.from({ length: 7 }, () => body(watch));
  for (const b of bodies) watch.add(b);
  const stalls = new Set([0, 3, 6]); // the first, a middle one and the last: each failure moves another into its place
  watch.delete(bodies[4]); // one in, in the middle, before any sweep
  for (let t = 0; t < 10; t++) {
    bodies.forEach((b, i) => { if (!stalls.has(i)) b.received += 10; });
    vi.advanceTimersByTime(100);
  }
  expect(bodies.map((b) => b.failures.map((e) => e.code))).toEqual(
    bodies.map((_, i) => (stalls.has(i) ? ['NORM_ERR_BODY_STALLED'] : [])),
  );
  // the rest stall too once they stop: each fails once, the deleted one never
  vi.advanceTimersByTime(1_000);
  expect(bodies.map((b) => b.failures.length)).toEqual([1, 1, 1, 1, 0, 1, 1]);
});
