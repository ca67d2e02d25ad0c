// API_KEYS (and API_KEYS_FILE): bearer keys guard every path under /v1/ (401 before 415/406/400/404) and nothing else.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildReadyApp, startServer, type ServerProcess } from './helpers.js';

const UNAUTHORIZED = {
  statusCode: 401,
  code: 'NORM_ERR_UNAUTHORIZED',
  error: 'Unauthorized',
  message: 'Authorization: a valid "Bearer <key>" is required',
};
const JSON_TYPE = { 'content-type': 'application/json' };
// rows [3, 4] and [-6, 8], eps 0: x / sqrt(mean(x²)) is ±(0.6, 0.8)·√2
const VALID = JSON.stringify({ input: { shape: [2, 2], data: [3, 4, -6, 8] }, eps: 0 });
const EXPECTED = [0.6, 0.8, -0.6, 0.8].map((v) => v * Math.SQRT2);

describe('auth with API_KEYS k1,k2', () => {
  let app: FastifyInstance;
  beforeEach(async () => {
    app = await buildReadyApp({ workers: 1, apiKeys: ['k1', 'k2'] });
  });
  afterEach(async () => {
    await app.close();
  });

  it('missing, malformed and wrong keys on /v1/rmsnorm are 401 with the whole body', async () => {
    const cases: [string, Record<string, string>][] = [
      ['missing', {}],
      ['"Basic x"', { authorization: 'Basic x' }],
      ['"Bearer" and no key', { authorization: 'Bearer' }],
      ['"Bearer " and an empty key', { authorization: 'Bearer ' }],
      ['a wrong key', { authorization: 'Bearer k3' }],
      ['a prefix of a key', { authorization: 'Bearer k' }],
      ['two keys run together', { authorization: 'Bearer k1k2' }],
      ['both keys, comma-separated', { authorization: 'Bearer k1,k2' }],
      ['a right key and a trailing space', { authorization: 'Bearer k1 ' }],
      ['a right key under the Basic scheme', { authorization: 'Basic k1' }],
      ['a right key with no scheme', { authorization: 'k1' }],
    ];
    for (const [name, auth] of cases) {
      const res = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, ...auth }, payload: VALID });
      expect(res.statusCode, name).toBe(401);
      expect(res.headers['content-type'], name).toMatch(/^application\/json/);
      expect(res.json(), name).toEqual(UNAUTHORIZED);
    }
  });

  it('either right key is 200 on every operation', async () => {
    const batch = JSON.stringify({ requests: [{ op: 'rmsnorm', input: { shape: [2, 2], data: [3, 4, -6, 8] }, eps: 0 }] });
    for (const key of ['k1', 'k2']) {
      const headers = { ...JSON_TYPE, authorization: `Bearer ${key}` };
      const rms = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers, payload: VALID });
      expect(rms.statusCode, key).toBe(200);
      const { output } = rms.json();
      expect(output).toMatchObject({ dtype: 'float32', shape: [2, 2] });
      EXPECTED.forEach((v, i) => expect(output.data[i]).toBeCloseTo(v, 6));
      expect((await app.inject({ method: 'POST', url: '/v1/layernorm', headers, payload: VALID })).statusCode, key).toBe(200);
      expect((await app.inject({ method: 'POST', url: '/v1/batch', headers, payload: batch })).statusCode, key).toBe(200);
    }
    // the scheme is case-insensitive (RFC 9110 §11.1)
    const lower = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, authorization: 'bearer k1' }, payload: VALID });
    expect(lower.statusCode).toBe(200);
  });

  it('401 comes before 415, 406, 400 and 404', async () => {
    const cases = [
      ['an unsupported Content-Type', 'POST', '/v1/rmsnorm', { 'content-type': 'text/plain' }, VALID, 415],
      ['a missing Content-Type', 'POST', '/v1/rmsnorm', {}, VALID, 415],
      ['an unacceptable Accept', 'POST', '/v1/rmsnorm', { ...JSON_TYPE, accept: 'image/png' }, VALID, 406],
      ['malformed JSON', 'POST', '/v1/rmsnorm', JSON_TYPE, '{"input":', 400],
      ['an unknown field', 'POST', '/v1/layernorm', JSON_TYPE, JSON.stringify({ input: { shape: [1], data: [1] }, epsilon: 1 }), 400],
      ['a bad X-Request-Timeout-Ms', 'POST', '/v1/rmsnorm', { ...JSON_TYPE, 'x-request-timeout-ms': 'abc' }, VALID, 400],
      ['an unknown /v1 path', 'POST', '/v1/nope', JSON_TYPE, VALID, 404],
      ['an unknown /v1 path and a query', 'POST', '/v1/nope?x=1', JSON_TYPE, VALID, 404],
      ['GET on an operation', 'GET', '/v1/rmsnorm', {}, undefined, 404],
    ] as const;
    for (const [name, method, url, headers, payload, keyed] of cases) {
      const without = await app.inject({ method, url, headers, payload });
      expect(without.statusCode, name).toBe(401);
      expect(without.json(), name).toEqual(UNAUTHORIZED);
      const withKey = await app.inject({ method, url, headers: { ...headers, authorization: 'Bearer k1' }, payload });
      expect(withKey.statusCode, name).toBe(keyed);
      expect(withKey.json().statusCode, name).toBe(keyed);
    }
    const notFound = await app.inject({ method: 'POST', url: '/v1/nope', headers: { ...JSON_TYPE, authorization: 'Bearer k1' }, payload: VALID });
    expect(notFound.json()).toEqual({ statusCode: 404, code: 'NORM_ERR_NOT_FOUND', error: 'Not Found', message: 'POST /v1/nope: no such route' });
  });

  // the router decodes %76 to "v" and %31 to "1": the key check must guard what the router routes
  it('percent-encoded /v1 paths are guarded too', async () => {
    for (const url of ['/%761/rmsnorm', '/%76%31/layernorm', '/v%31/batch', '/%761/nope']) {
      const res = await app.inject({ method: 'POST', url, headers: JSON_TYPE, payload: VALID });
      expect(res.statusCode, url).toBe(401);
      expect(res.json(), url).toEqual(UNAUTHORIZED);
    }
    const keyed = await app.inject({ method: 'POST', url: '/%761/rmsnorm', headers: { ...JSON_TYPE, authorization: 'Bearer k1' }, payload: VALID });
    expect(keyed.statusCode).toBe(200);
  });

  it('health, readiness, metrics and docs stay open without a key', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBeLessThan(400);
    }
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const nope = await app.inject({ method: 'GET', url: '/nope' });
    expect(nope.statusCode).toBe(404);
    expect(nope.json()).toEqual({ statusCode: 404, code: 'NORM_ERR_NOT_FOUND', error: 'Not Found', message: 'GET /nope: no such route' });
  });
});

describe('auth without API_KEYS', () => {
  it('/v1/rmsnorm needs no key and ignores an Authorization header', async () => {
    const app = await buildReadyApp({ workers: 1 });
    try {
      for (const headers of [JSON_TYPE, { ...JSON_TYPE, authorization: 'Bearer whatever' }, { ...JSON_TYPE, authorization: 'Basic x' }]) {
        const res = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers, payload: VALID });
        expect(res.statusCode, JSON.stringify(headers)).toBe(200);
      }
    } finally {
      await app.close();
    }
  });
});

describe('API_KEYS_FILE on a real server (dist/server.js)', () => {
  let server: ServerProcess | null = null;
  let dir: string | null = null;
  afterEach(() => {
    server?.kill();
    server = null;
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  it('keys from the file and from API_KEYS are both accepted; others get 401', async () => {
    dir = mkdtempSync(join(tmpdir(), 'secret-'));
    const file = join(dir, 'api-keys');
    writeFileSync(file, 'from-file\n');
    server = await startServer({ API_KEYS: 'from-env', API_KEYS_FILE: file, WORKERS: '1' });
    const post = (key: string | null) => fetch(`${server!.url}/v1/rmsnorm`, {
      method: 'POST', body: VALID, headers: { ...JSON_TYPE, ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    });
    expect((await post('from-file')).status).toBe(200);
    expect((await post('from-env')).status).toBe(200);
    const refused = await post('other');
    expect([refused.status, await refused.json()]).toEqual([401, UNAUTHORIZED]);
    expect((await post(null)).status).toBe(401);
  }, 60_000);
});
