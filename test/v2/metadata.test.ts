// OIP.md's health, server metadata and model metadata endpoints, with whole bodies; auth on /v2.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createApp, useFreshApp } from '../helpers/http.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const ctx = useFreshApp();
const get = (url: string, headers: Record<string, string> = {}) => ctx.app.inject({ method: 'GET', url, headers });
const tensors = (...names: string[]) => names.map((name) => ({ name, datatype: 'FP32', shape: [-1] }));

// OIP.md's table of models, written out here apart from the code that derives it
const MODELS = {
  rmsnorm: { inputs: ['input', 'weight', 'bias', 'residual'], outputs: ['output', 'residual', 'rstd'] },
  layernorm: { inputs: ['input', 'weight', 'bias', 'residual'], outputs: ['output', 'residual', 'mean', 'rstd'] },
  batchnorm: { inputs: ['input', 'weight', 'bias', 'running_mean', 'running_var'], outputs: ['output', 'running_mean', 'running_var', 'mean', 'rstd'] },
  groupnorm: { inputs: ['input', 'weight', 'bias'], outputs: ['output', 'mean', 'rstd'] },
};

describe('/v2 health and metadata', () => {
  it('GET /v2/health/live, /v2/health/ready and /v2', async () => {
    expect((await get('/v2/health/live')).json()).toEqual({ live: true });
    const ready = await get('/v2/health/ready');
    expect([ready.statusCode, ready.json()]).toEqual([200, { ready: true }]);
    const server = await get('/v2');
    expect([server.statusCode, server.json()]).toEqual([200, { name: 'tensor-norm-service', version, extensions: ['binary_tensor_data', 'parameters'] }]);
  });

  for (const [model, { inputs, outputs }] of Object.entries(MODELS)) {
    it(`GET /v2/models/${model} (and /versions/1): its inputs and outputs; ready`, async () => {
      const metadata = { name: model, versions: ['1'], platform: 'tensor-norm-service', inputs: tensors(...inputs), outputs: tensors(...outputs) };
      for (const url of [`/v2/models/${model}`, `/v2/models/${model}/versions/1`]) {
        const res = await get(url);
        expect([res.statusCode, res.json()]).toEqual([200, metadata]);
        const ready = await get(`${url}/ready`);
        expect([ready.statusCode, ready.json()]).toEqual([200, { name: model, ready: true }]);
      }
    });
  }

  it.each([
    ['/v2/models/softmax', 'model softmax: unknown; the models are rmsnorm, layernorm, batchnorm, groupnorm'],
    ['/v2/models/softmax/ready', 'model softmax: unknown; the models are rmsnorm, layernorm, batchnorm, groupnorm'],
    ['/v2/models/rmsnorm/versions/2', 'model rmsnorm version 2: unknown; the one version is 1'],
    ['/v2/models/layernorm/versions/latest/ready', 'model layernorm version latest: unknown; the one version is 1'],
    ['/v2/nowhere', 'GET /v2/nowhere: no such route'],
  ])('GET %s → 404 {"error": …} naming it', async (url, message) => {
    const res = await get(url);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect([res.statusCode, res.json()]).toEqual([404, { error: message }]);
  });
});

describe('/v2 with API keys', () => {
  it('health checks stay open; /v2 and everything else under it needs the key, 401 before 404', async () => {
    const app = await createApp({ apiKeys: ['k1'] });
    try {
      const get2 = (url: string, key?: string) => app.inject({ method: 'GET', url, headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
      expect((await get2('/v2/health/live')).statusCode).toBe(200);
      expect((await get2('/v2/health/ready')).statusCode).toBe(200);
      const unauthorized = { error: 'Authorization: a valid "Bearer <key>" is required' };
      for (const url of ['/v2', '/v2/models/rmsnorm', '/v2/models/nope', '/v2/models/rmsnorm/versions/1/ready', '/v2/nowhere']) {
        const res = await get2(url);
        expect([res.statusCode, res.json()], url).toEqual([401, unauthorized]);
        expect((await get2(url, 'wrong')).statusCode, url).toBe(401);
      }
      expect((await get2('/v2/models/rmsnorm', 'k1')).statusCode).toBe(200);
      expect((await get2('/v2/models/nope', 'k1')).statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });
});
