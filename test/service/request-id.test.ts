// X-Request-Id is echoed when sane and generated (a UUID) when not; every /v1 200 carries Server-Timing.
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { madeRequestId } from '../../src/http/request-id.js';
import { buildReadyApp, MSGPACK, msgpackBody, values } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const JSON_TYPE = { 'content-type': 'application/json' };
const VALID = JSON.stringify({ input: { shape: [2, 3], data: [1, 2, 3, 4, 5, 6] } });

/** `decode;dur=0.12, queue;dur=0.01, …` → { decode: 0.12, … }; throws on anything else */
function serverTiming(header: string | string[] | number | undefined): Record<string, number> {
  expect(typeof header).toBe('string');
  const metrics: Record<string, number> = {};
  for (const part of String(header).split(',')) {
    const match = /^\s*([\w-]+);dur=(\d+(?:\.\d+)?)\s*$/.exec(part);
    expect(match, `Server-Timing part "${part}"`).not.toBeNull();
    metrics[match![1]] = Number(match![2]);
  }
  return metrics;
}

describe('request id', () => {
  let app: FastifyInstance;
  beforeEach(async () => {
    app = await buildReadyApp({ workers: 1 });
  });
  afterEach(async () => {
    await app.close();
  });

  it('a given X-Request-Id is echoed on 200s, errors and service endpoints', async () => {
    const ok = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, 'x-request-id': 'abc-123.x:y_z' }, payload: VALID });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-request-id']).toBe('abc-123.x:y_z');
    const bad = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { ...JSON_TYPE, 'x-request-id': 'req-400' }, payload: '{' });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['x-request-id']).toBe('req-400');
    const missing = await app.inject({ method: 'POST', url: '/v1/nope', headers: { ...JSON_TYPE, 'x-request-id': 'req-404' }, payload: VALID });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-request-id']).toBe('req-404');
    const health = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'probe-1' } });
    expect(health.headers['x-request-id']).toBe('probe-1');
  });

  it('without X-Request-Id each response gets a fresh UUID', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: JSON_TYPE, payload: VALID });
      expect(res.statusCode).toBe(200);
      const id = String(res.headers['x-request-id']);
      expect(id).toMatch(UUID);
      ids.add(id);
    }
    expect(ids.size).toBe(3);
  });

  it('an X-Request-Id that is not a short token is replaced by a UUID', async () => {
    for (const given of ['has space', 'x'.repeat(129), '<script>', 'a\tb', 'é']) {
      const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': given } });
      expect(String(res.headers['x-request-id']), JSON.stringify(given)).toMatch(UUID);
    }
    const longest = 'x'.repeat(128);
    expect((await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': longest } })).headers['x-request-id']).toBe(longest);
  });
});

describe('made request ids', () => {
  it('are version-4 UUIDs, each distinct from all made before it', () => {
    const made = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      const id = madeRequestId();
      if (!UUID.test(id)) expect(id).toMatch(UUID);
      made.add(id);
    }
    expect(made.size).toBe(100_000);
  });
});

describe('Server-Timing', () => {
  it('every /v1 200 has decode, queue, compute and encode, each a dur in ms', async () => {
    // inlineMaxElements 16: the 2×3 tensors run inline, the 64×64 one on the pool
    const app = await buildReadyApp({ workers: 1, inlineMaxElements: 16 });
    try {
      const big = msgpackBody(values(64 * 64), [64, 64]);
      const requests = [
        { url: '/v1/rmsnorm', headers: JSON_TYPE, payload: VALID },
        { url: '/v1/layernorm', headers: JSON_TYPE, payload: VALID },
        { url: '/v1/rmsnorm', headers: { 'content-type': MSGPACK }, payload: big },
        { url: '/v1/layernorm', headers: { 'content-type': MSGPACK, accept: 'application/json' }, payload: big },
        { url: '/v1/batch', headers: JSON_TYPE, payload: JSON.stringify({ requests: [{ op: 'rmsnorm', input: { shape: [1, 2], data: [1, 2] } }, { op: 'layernorm', input: { shape: [1, 2], data: [1, 2] } }] }) },
      ];
      for (const { url, headers, payload } of requests) {
        const res = await app.inject({ method: 'POST', url, headers, payload });
        expect(res.statusCode, url).toBe(200);
        const timing = serverTiming(res.headers['server-timing']);
        expect(Object.keys(timing).sort(), url).toEqual(['compute', 'decode', 'encode', 'queue']);
        for (const dur of Object.values(timing)) expect(dur).toBeGreaterThanOrEqual(0);
      }
      // errors are not timed
      const bad = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: JSON_TYPE, payload: '{' });
      expect(bad.headers['server-timing']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
