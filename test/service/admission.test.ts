// one admission rule for every dialect (engine/admission.ts): /v2 infer is refused with 503 and
// Retry-After exactly where /v1 is — the in-flight limit reached while the fault gate holds the
// workers, draining, a pool that could not load its kernels — each in its dialect's error form.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { closeApp, faultGate } from '../helpers/fault-gate.js';
import { buildReadyApp } from './helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await closeApp(app);
  app = undefined;
});

const HOLD = { 'x-test-fault': 'hold' };
const v1 = (headers: Record<string, string> = {}) => app!.inject({
  method: 'POST', url: '/v1/rmsnorm', headers: { 'content-type': 'application/json', ...headers },
  payload: { input: { shape: [1, 4], data: [1, 2, 3, 4] } },
});
const v2 = (headers: Record<string, string> = {}) => app!.inject({
  method: 'POST', url: '/v2/models/rmsnorm/infer', headers,
  payload: { inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }] },
});

/** the same refusal in both forms: /v1's coded body, /v2's {"error"} with the same message */
function expectRefused(v1Answer: LightMyRequestResponse, v2Answer: LightMyRequestResponse, code: string, message: string): void {
  for (const res of [v1Answer, v2Answer]) {
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  }
  expect(v1Answer.json()).toEqual({ statusCode: 503, code, error: 'Service Unavailable', message });
  expect(v2Answer.json()).toEqual({ error: message });
}

describe('admission, the same for /v1 and /v2', () => {
  it('the in-flight limit (MAX_QUEUE + WORKERS) reached while the gate holds the worker: both 503; both served once it opens', async () => {
    // MAX_QUEUE 1 + WORKERS 1: two requests in flight at most
    app = await buildReadyApp({ workers: 1, maxQueue: 1, faultInjection: true, inlineMaxElements: 0 });
    const gate = faultGate(app);
    const held = [v1(HOLD), v2(HOLD)];
    await gate.held(1); // one runs (held at the gate), the other waits in the pool's queue
    expect(app.service.inFlight).toBe(2);
    expectRefused(await v1(), await v2(), 'NORM_ERR_OVERLOADED', 'too many requests in flight; retry later');
    gate.open();
    const [first, second] = await Promise.all(held);
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(app.service.inFlight).toBe(0);
    expect((await v1()).statusCode).toBe(200);
    expect((await v2()).statusCode).toBe(200);
  });

  it('draining: both 503, while /readyz and /v2/health/ready say not ready', async () => {
    app = await buildReadyApp({ workers: 1 });
    app.service.draining = true; // what SIGTERM does
    expectRefused(await v1(), await v2(), 'NORM_ERR_SHUTTING_DOWN', 'the server is shutting down; retry on another instance');
    expect((await app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(503);
  });

  it('a pool that could not load its kernels: both 503', async () => {
    app = await buildReadyApp({ workers: 1 });
    app.service.poolFailed = true; // what the engine sets when the workers' warm-up fails
    expectRefused(await v1(), await v2(), 'NORM_ERR_NOT_READY', 'the worker pool is not up; retry on another instance');
  });
});
