// /healthz is liveness, /readyz readiness: ready once the pool is up, 503 while draining, when /v1 work is refused.
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
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
