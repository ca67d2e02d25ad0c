// /healthz is liveness, /readyz readiness: ready once the pool is up (its workers loaded their kernels),
// 503 while draining or when the workers cannot load (a broken build), when /v1 work is refused.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createWorkerPool } from '../../src/pool/worker-pool.js';
import { buildReadyApp, waitFor } from './helpers.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const VALID = JSON.stringify({ input: { shape: [1, 2], data: [1, 2] } });
const SHUTTING_DOWN = {
  statusCode: 503,
  code: 'NORM_ERR_SHUTTING_DOWN',
  error: 'Service Unavailable',
  message: 'the server is shutting down; retry on another instance',
};

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildReadyApp({ workers: 2 });
});
afterEach(async () => {
  await app.close();
});

it('/readyz is 200 with every worker up, /healthz 200', async () => {
  const ready = await waitFor('/readyz 200', async () => {
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    return res.statusCode === 200 && res;
  });
  expect(ready.json()).toEqual({ status: 'ready', workers: 2 });
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  expect(health.statusCode).toBe(200);
  expect(health.json()).toEqual({ status: 'ok' });
});

it('while draining: /readyz 503, /v1 POST 503 NORM_ERR_SHUTTING_DOWN with Retry-After, /healthz 200', async () => {
  await waitFor('/readyz 200', async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200);
  app.service.draining = true;

  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  expect(ready.statusCode).toBe(503);
  expect(ready.json()).toEqual({ status: 'draining', workers: 2 });

  for (const url of ['/v1/rmsnorm', '/v1/layernorm', '/v1/batch']) {
    const res = await app.inject({ method: 'POST', url, headers: JSON_TYPE, payload: VALID });
    expect(res.statusCode, url).toBe(503);
    expect(res.headers['retry-after'], url).toMatch(/^\d+$/);
    expect(res.headers['content-type'], url).toMatch(/^application\/json/);
    expect(res.json(), url).toEqual(SHUTTING_DOWN);
  }

  const health = await app.inject({ method: 'GET', url: '/healthz' });
  expect(health.statusCode).toBe(200);
  expect(health.json()).toEqual({ status: 'ok' });
  expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);

  // draining is the entry point's one-way switch; the flag is all the routes read
  app.service.draining = false;
  expect((await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: JSON_TYPE, payload: VALID })).statusCode).toBe(200);
});

/** the pool's shared memory; warm-up tasks touch none of it */
const sharedPage = () => new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });

it('a build whose workers cannot load their kernels: warm-up reports it, the error is logged, nothing throws', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'broken-worker-'));
  const brokenWorker = join(dir, 'worker.cjs');
  // as worker-entry.cjs loads, then fails to import the kernels of a broken build
  writeFileSync(brokenWorker, 'module.exports = async () => { throw new Error("a broken build"); };\n');
  const logged: Error[] = [];
  const pool = createWorkerPool({ workers: 2, maxQueue: 4 }, sharedPage(), (err) => logged.push(err), null, brokenWorker);
  try {
    expect(await pool.warmUp()).toBe(false);
    expect(logged.map((err) => err.message)).toContainEqual(expect.stringMatching(/^the workers cannot load their kernels: .*a broken build/));
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true });
  }
});

it('the real workers warm up', async () => {
  const pool = createWorkerPool({ workers: 2, maxQueue: 4 }, sharedPage(), (err) => { throw err; });
  try {
    expect(await pool.warmUp()).toBe(true);
  } finally {
    await pool.close();
  }
});

it('when the pool failed to warm up: /readyz 503 "failed", /v1 and /v2 work 503 NORM_ERR_NOT_READY with Retry-After, /healthz 200', async () => {
  app.service.poolFailed = true; // what buildApp sets when warmUp() answers false

  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  expect(ready.statusCode).toBe(503);
  expect(ready.json()).toEqual({ status: 'failed', workers: 2 });
  expect((await app.inject({ method: 'GET', url: '/v2/health/ready' })).statusCode).toBe(503);

  const res = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: JSON_TYPE, payload: VALID });
  expect(res.statusCode).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  expect(res.json()).toEqual({
    statusCode: 503, code: 'NORM_ERR_NOT_READY', error: 'Service Unavailable', message: 'the worker pool is not up; retry on another instance',
  });
  const oip = await app.inject({
    method: 'POST', url: '/v2/models/rmsnorm/infer', headers: JSON_TYPE,
    payload: JSON.stringify({ inputs: [{ name: 'input', shape: [1, 2], datatype: 'FP32', data: [1, 2] }] }),
  });
  expect(oip.statusCode).toBe(503);
  expect(oip.headers['retry-after']).toBe('1');
  expect(oip.json()).toEqual({ error: 'the worker pool is not up; retry on another instance' });
  expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
});
