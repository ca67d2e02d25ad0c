// a client that goes away while its work is queued gets that work dropped: it never runs.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { buildReadyApp, metricValue, waitFor } from './helpers.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const BODY = JSON.stringify({ input: { shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => i - 16) } });

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const metric = async (name: string, labels: Record<string, string> = {}) => (await metricValue(app!, name, labels)) ?? 0;

it('a disconnect drops the queued task; the work ahead of it still finishes', async () => {
  app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;

  const slow = app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, 'x-test-fault': 'sleep-400' }, payload: BODY });
  // admitted in-process, so submitted before the socket request below is even parsed
  await waitFor('the slow request to be admitted', () => app!.service.inFlight === 1);

  const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/rmsnorm', agent: false, headers: JSON_TYPE });
  const closed = new Promise<string>((resolve) => {
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.on('response', (res) => resolve(`answered ${res.statusCode}`));
  });
  req.end(BODY);
  await waitFor('the second task to queue', async () => (await metric('norm_pool_queue_depth')) === 1);
  req.destroy();
  expect(await closed).toBe('ECONNRESET');

  // dropped from the queue as soon as the server sees the socket close, long before the slow task ends
  await waitFor('the dropped task to be counted', async () => (await metric('norm_tasks_total', { outcome: 'aborted' })) === 1, 300);
  expect(await metric('norm_pool_queue_depth')).toBe(0);

  expect((await slow).statusCode).toBe(200);
  expect(await metric('norm_tasks_total', { outcome: 'ok' })).toBe(1);
  expect(await metric('norm_task_run_seconds_count')).toBe(1);
  // it was dropped from the queue, not cut off on a worker (that would replace the worker)
  expect(await metric('norm_worker_restarts_total')).toBe(0);
  // the dropped request is not counted as served rows
  expect(await metric('norm_rows_total', { op: 'rmsnorm', dtype: 'float32' })).toBe(4);
  expect(app.service.inFlight).toBe(0);
});
