// deadlines: REQUEST_TIMEOUT_MS and X-Request-Timeout-Ms; work whose deadline passed is dropped and answered 504.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeApp, faultGate } from '../helpers/fault-gate.js';
import { buildReadyApp, metricValue, MSGPACK, msgpackBody } from './helpers.js';
import type { Cancellation } from '../../src/engine/cancellation.js';

const JSON_TYPE = { 'content-type': 'application/json' };
// 4 rows of 8: with inlineMaxElements 0 every request is one pool task
const BODY = JSON.stringify({ input: { shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => i - 16) } });
const DEADLINE = {
  statusCode: 504,
  code: 'NORM_ERR_DEADLINE',
  error: 'Gateway Timeout',
  message: 'the request deadline passed before its result was ready',
};
const timeoutHeaderError = (value: string) => ({
  statusCode: 400,
  code: 'NORM_ERR_TIMEOUT_HEADER',
  error: 'Bad Request',
  message: `X-Request-Timeout-Ms: "${value}" must be a whole number of milliseconds ≥ 1`,
});

let app: FastifyInstance | undefined;
afterEach(async () => {
  await closeApp(app);
  app = undefined;
});

/** the cancellation of every admitted request, in arrival order: tests wait on it firing rather than on a clock */
const deadlines: Cancellation[] = [];
const deadlineSpy = (a: FastifyInstance) => {
  deadlines.length = 0;
  a.addHook('preParsing', (request, _reply, payload, done) => {
    if (request.cancellation != null) deadlines.push(request.cancellation);
    done(null, payload);
  });
};

const metric = async (name: string, labels: Record<string, string> = {}) => (await metricValue(app!, name, labels)) ?? 0;

const post = (headers: Record<string, string> = {}) =>
  app!.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, ...headers }, payload: BODY });

describe('a request whose deadline passes behind held work', () => {
  it('gets 504 while that work is still held, and its task is dropped from the queue, never run', async () => {
    app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 });
    const gate = faultGate(app);
    const slow = [post({ 'x-test-fault': 'hold' }), post({ 'x-test-fault': 'hold' })];
    let slowDone = 0;
    for (const s of slow) void s.then(() => slowDone++);
    // one held task holds the worker, the other waits behind it
    await gate.held(1);
    await vi.waitFor(async () => expect(await metric('norm_pool_queue_depth')).toBe(1));

    const late = await post({ 'x-request-timeout-ms': '1' });
    expect(late.statusCode).toBe(504);
    expect(late.headers['content-type']).toMatch(/^application\/json/);
    expect(late.json()).toEqual(DEADLINE);
    // answered at its deadline: the work ahead of it cannot have finished, its gate is still shut
    expect(slowDone).toBe(0);

    gate.open();
    for (const res of await Promise.all(slow)) expect(res.statusCode).toBe(200);
    // exactly the two slow tasks ran; the late one was counted as aborted and its rows never normalized
    expect(await metric('norm_tasks_total', { outcome: 'ok' })).toBe(2);
    expect(await metric('norm_tasks_total', { outcome: 'aborted' })).toBe(1);
    expect(await metric('norm_task_run_seconds_count')).toBe(2);
    expect(await metric('norm_rows_total', { op: 'rmsnorm', dtype: 'float32' })).toBe(8);
    expect(await metric('http_requests_total', { method: 'POST', route: '/v1/rmsnorm', status: '504' })).toBe(1);
    // dropping a queued task kills no worker
    expect(await metric('norm_worker_restarts_total')).toBe(0);
    expect(await metric('norm_pool_queue_depth')).toBe(0);
  });

  it('gets 504 when the deadline passes while its body is still arriving, and nothing is queued', async () => {
    app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 }, deadlineSpy);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1', port, method: 'POST', path: '/v1/rmsnorm', agent: false,
        headers: { ...JSON_TYPE, 'content-length': Buffer.byteLength(BODY), 'x-request-timeout-ms': '5' },
      }, (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode!, body }));
      });
      req.on('error', reject);
      req.flushHeaders();
      // the rest of the body comes once the 5 ms deadline has fired: the handler must not queue the work
      req.write(BODY.slice(0, 10));
      vi.waitFor(() => expect(deadlines[0]?.cancelled).toBe(true)).then(() => req.end(BODY.slice(10)), reject);
    });
    expect(res.status).toBe(504);
    expect(JSON.parse(res.body)).toEqual(DEADLINE);
    expect(await metric('norm_tasks_total', { outcome: 'ok' })).toBe(0);
    expect(await metric('norm_tasks_total', { outcome: 'aborted' })).toBe(1);
    expect(await metric('norm_task_run_seconds_count')).toBe(0);
  });
});

describe('X-Request-Timeout-Ms', () => {
  it('anything but decimal digits ≥ 1 is a 400 with the whole body', async () => {
    app = await buildReadyApp({ workers: 1 });
    for (const value of ['abc', '0', '-5', '1.5', '', '5ms', '0x10', '1e3', '+5', '00']) {
      const res = await post({ 'x-request-timeout-ms': value });
      expect(res.statusCode, JSON.stringify(value)).toBe(400);
      expect(res.json(), JSON.stringify(value)).toEqual(timeoutHeaderError(value));
    }
    // deadlines long enough that no loaded machine reaches them: a 7 ms one ('007' was here) can pass
    // before the body is even parsed, and the deadline is read from the clock (a 504, rightly)
    for (const value of ['10000', '0020000', '60000']) {
      expect((await post({ 'x-request-timeout-ms': value })).statusCode, value).toBe(200);
    }
  });

  it('is answered after the body and its own 400s: a body that fails its checks names its field first', async () => {
    app = await buildReadyApp({ workers: 1 });
    const res = await app.inject({
      method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, 'x-request-timeout-ms': 'abc' },
      payload: JSON.stringify({ input: { shape: [2], data: [1, 2] }, epsilon: 1e-5 }),
    });
    expect(res.json()).toEqual({ statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'epsilon: unknown field' });
  });

  it('a value above REQUEST_TIMEOUT_MS is capped to it, not an error', async () => {
    app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0, requestTimeoutMs: 50 });
    for (const value of ['100000', '99999999999999999999999']) {
      expect((await post({ 'x-request-timeout-ms': value })).statusCode, value).toBe(200);
    }
    // held work ends only when the gate opens: a deadline of 100000 ms would wait for it, the cap does not
    const res = await post({ 'x-request-timeout-ms': '100000', 'x-test-fault': 'hold' });
    expect(res.statusCode).toBe(504);
    expect(res.json()).toEqual(DEADLINE);
    // without the header the same default applies
    expect((await post({ 'x-test-fault': 'hold' })).json()).toEqual(DEADLINE);
  });

  it('a shorter header deadline wins over REQUEST_TIMEOUT_MS', async () => {
    app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 });
    const res = await post({ 'x-request-timeout-ms': '50', 'x-test-fault': 'hold' });
    expect(res.statusCode).toBe(504);
    expect(res.json()).toEqual(DEADLINE);
    // the held task goes on once the gate opens, and the same worker serves the next request
    faultGate(app).open();
    expect((await post()).statusCode).toBe(200);
    expect(await metric('norm_worker_restarts_total')).toBe(0);
  });
});

describe('the memory of dropped work', () => {
  // slabs come from one WebAssembly.Memory: a dropped job's slab must come back (once no task can
  // touch it), or ~63 such 64 MiB jobs would exhaust the 4 GiB tensor memory
  it('80 large jobs dropped at their deadline leave the next ones answerable (504, not 503)', async () => {
    app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 });
    // keeps the one worker busy: the large jobs queue behind it, or find their deadline passed first
    const sleeper = post({ 'x-test-fault': 'hold' });
    await faultGate(app).held(1);
    // 4 × 1Mi float32 (16 MiB) in, float64 out: each job's slab is 32 MiB + header → the 64 MiB class
    const large = msgpackBody(new Float32Array(4 * 1024 * 1024), [4, 1024 * 1024], { output_dtype: 'float64' });
    const answers: Record<string, number> = {};
    for (let i = 0; i < 80; i++) {
      const res = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { 'content-type': MSGPACK, 'x-request-timeout-ms': '1' }, payload: large });
      const key = `${res.statusCode} ${res.json().message}`;
      answers[key] = (answers[key] ?? 0) + 1;
    }
    expect(answers).toEqual({ [`504 ${DEADLINE.message}`]: 80 });
    faultGate(app).open();
    expect((await sleeper).statusCode).toBe(200);
  }, 30_000);
});

describe('a task that started before its deadline', () => {
  it('outlives its 504, and its slabs stay held until it settles', async () => {
    app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 }, deadlineSpy);
    const gate = faultGate(app);
    const idle = await metric('norm_tensor_memory_in_use_bytes');
    const answer = post({ 'x-test-fault': 'hold' });
    await gate.held(1);
    // what the deadline's timer does when it fires, done once the task is surely running
    deadlines[0].cancel();
    const res = await answer;
    expect(res.statusCode).toBe(504);
    expect(res.json()).toEqual(DEADLINE);
    // answered, but the task still writes into its slab: the body's and the job's slabs are held
    const held = await metric('norm_tensor_memory_in_use_bytes');
    expect(held).toBeGreaterThan(idle);

    gate.open();
    await vi.waitFor(async () => expect(await metric('norm_tensor_memory_in_use_bytes')).toBe(idle));
    expect(await metric('norm_tasks_total', { outcome: 'ok' })).toBe(1);
    expect(await metric('norm_tasks_total', { outcome: 'aborted' })).toBe(0);
    expect((await post()).statusCode).toBe(200);
  });
});
