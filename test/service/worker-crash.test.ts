// a worker thread that dies mid-task fails only its own request (500); the pool replaces it.
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it, vi } from 'vitest';
import { closeApp, faultGate } from '../helpers/fault-gate.js';
import {
  buildReadyApp, decodeMsgpack, float32Mismatches, float32Of, MSGPACK, metricValue, msgpackBody,
  referenceRmsnorm, values,
} from './helpers.js';

const WORKER_FAILED = {
  statusCode: 500,
  code: 'NORM_ERR_WORKER_FAILED',
  error: 'Internal Server Error',
  message: 'a worker thread failed: worker exited with code: 1',
};
const ROWS = 16;
const N = 64;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await closeApp(app);
  app = undefined;
});

const metric = (name: string) => metricValue(app!, name);

function rmsnorm(seed: number, fault?: string) {
  return app!.inject({
    method: 'POST', url: '/v1/rmsnorm',
    headers: { 'content-type': MSGPACK, ...(fault ? { 'x-test-fault': fault } : {}) },
    payload: msgpackBody(values(ROWS * N, seed), [ROWS, N]),
  });
}

/** a 200 whose output is rmsnorm of values(…, seed) within the float32 tolerance */
function expectCorrect(res: Awaited<ReturnType<typeof rmsnorm>>, seed: number) {
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  const { output } = decodeMsgpack(res.rawPayload);
  expect(output.shape).toEqual([ROWS, N]);
  expect(float32Mismatches(float32Of(output), referenceRmsnorm(values(ROWS * N, seed), N))).toEqual([]);
}

it('the crashed request gets 500, the others in flight and all later ones 200, and the restart is counted', async () => {
  // 16×64 is one task (below minTaskElements), so the crash kills exactly one worker with one request on it
  app = await buildReadyApp({ workers: 2, faultInjection: true, inlineMaxElements: 0 });
  expect(await metric('norm_worker_restarts_total')).toBe(0);

  // in flight together: the crash goes to a worker first, held work keeps the others and the
  // queue busy until the crash has been answered
  const gate = faultGate(app);
  const crashing = rmsnorm(2, 'crash-worker');
  const others = [rmsnorm(1, 'hold'), rmsnorm(3, 'hold'), rmsnorm(4), rmsnorm(5, 'hold'), rmsnorm(6)];
  const crashed = await crashing;
  await gate.held(1);
  gate.open();
  const rest = await Promise.all(others);
  const answers = [rest[0], crashed, ...rest.slice(1)]; // by seed: answers[i] is rmsnorm(i + 1)
  expect(crashed.statusCode).toBe(500);
  expect(crashed.headers['content-type']).toMatch(/^application\/json/);
  expect(crashed.json()).toEqual(WORKER_FAILED);
  answers.forEach((res, i) => {
    if (i !== 1) expectCorrect(res, i + 1);
  });

  expect(await metric('norm_worker_restarts_total')).toBeGreaterThanOrEqual(1);
  // the pool is refilled: /readyz says so and shows both workers
  const ready = await vi.waitFor(async () => {
    const res = await app!.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    return res;
  });
  expect(ready.json()).toEqual({ status: 'ready', workers: 2 });

  for (let seed = 10; seed < 16; seed++) expectCorrect(await rmsnorm(seed), seed);
  // spread over both workers too
  (await Promise.all([20, 21, 22, 23].map((seed) => rmsnorm(seed)))).forEach((res, i) => expectCorrect(res, 20 + i));
  expect(await metric('norm_pool_workers')).toBe(2);
});

it('every crash is replaced: three in a row leave two workers and count three restarts', async () => {
  app = await buildReadyApp({ workers: 2, faultInjection: true, inlineMaxElements: 0 });
  for (let i = 0; i < 3; i++) {
    const res = await rmsnorm(i, 'crash-worker');
    expect(res.json()).toEqual(WORKER_FAILED);
  }
  expect(await metric('norm_worker_restarts_total')).toBe(3);
  await vi.waitFor(async () => expect((await app!.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200));
  expectCorrect(await rmsnorm(7), 7);
  expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
});
