// a client that goes away while its work is queued gets that work dropped: it never runs.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it, vi } from 'vitest';
import { closeApp, faultGate } from '../helpers/fault-gate.js';
import { buildReadyApp, metricValue } from './helpers.js';

const JSON_TYPE = { 'content-type': 'application/json' };
// polls on a loaded machine (a CI host beside other work) may take seconds, not vitest's default 1 s
const SETTLE = { timeout: 20_000, interval: 20 };
const BODY = JSON.stringify({ input: { shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => i - 16) } });

let app: FastifyInstance | undefined;
afterEach(async () => {
  await closeApp(app);
  app = undefined;
});

const metric = async (name: string, labels: Record<string, string> = {}) => (await metricValue(app!, name, labels)) ?? 0;

it('a disconnect drops the queued task; the work ahead of it still finishes', async () => {
  app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;

  const gate = faultGate(app);
  const slow = app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, 'x-test-fault': 'hold' }, payload: BODY });
  let slowDone = false;
  void slow.then(() => (slowDone = true));
  await gate.held(1);

  const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/rmsnorm', agent: false, headers: JSON_TYPE });
  const closed = new Promise<string>((resolve) => {
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.on('response', (res) => resolve(`answered ${res.statusCode}`));
  });
  req.end(BODY);
  await vi.waitFor(async () => expect(await metric('norm_pool_queue_depth')).toBe(1), SETTLE);
  req.destroy();
  expect(await closed).toBe('ECONNRESET');

  // dropped from the queue as soon as the server sees the socket close, while the work ahead is still held
  await vi.waitFor(async () => expect(await metric('norm_tasks_total', { outcome: 'aborted' })).toBe(1), SETTLE);
  expect(await metric('norm_pool_queue_depth')).toBe(0);
  expect(slowDone).toBe(false);

  gate.open();
  expect((await slow).statusCode).toBe(200);
  expect(await metric('norm_tasks_total', { outcome: 'ok' })).toBe(1);
  expect(await metric('norm_task_run_seconds_count')).toBe(1);
  // it was dropped from the queue, not cut off on a worker (that would replace the worker)
  expect(await metric('norm_worker_restarts_total')).toBe(0);
  // the dropped request is not counted as served rows
  expect(await metric('norm_rows_total', { op: 'rmsnorm', dtype: 'float32' })).toBe(4);
  expect(app.service.inFlight).toBe(0);
});

it('a disconnect while its task runs: the request\'s memory is given back only once the task has settled', async () => {
  app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const gate = faultGate(app);

  // the task starts on the worker and is held there, reading and writing the request's slabs
  const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/rmsnorm', agent: false, headers: { ...JSON_TYPE, 'x-test-fault': 'hold' } });
  const closed = new Promise<string>((resolve) => {
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.on('response', (res) => resolve(`answered ${res.statusCode}`));
  });
  req.end(BODY);
  await gate.held(1);
  const held = await metric('norm_tensor_memory_in_use_bytes');
  expect(held).toBeGreaterThan(0);

  req.destroy();
  expect(await closed).toBe('ECONNRESET');
  await vi.waitFor(() => expect(app!.service.inFlight).toBe(0), SETTLE);
  // the running task may still write its output: its slabs are not free for another request yet
  expect(await metric('norm_tensor_memory_in_use_bytes')).toBe(held);

  gate.open();
  await vi.waitFor(async () => expect(await metric('norm_tensor_memory_in_use_bytes')).toBe(0), SETTLE);
  expect(await metric('norm_worker_restarts_total')).toBe(0);
});
