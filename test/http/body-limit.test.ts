// API.md §5: 413 as soon as a declared Content-Length or the bytes received (chunked too) pass maxBodyBytes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { expectError, pack, postJson, useFreshApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';

const LIMIT = 4096;
const ctx = useFreshApp({ maxBodyBytes: LIMIT });
const TOO_LARGE = 'body: larger than the byte limit';
const big = { input: { shape: [2048], data: new Array(2048).fill(0.1) } };

describe('413 through app.inject (Content-Length set)', () => {
  it.each(['application/json', 'application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'])('a %s body over maxBodyBytes → 413', async (type) => {
    const payload = type === 'application/json' ? Buffer.from(JSON.stringify(big)) : pack(big);
    expect(payload.byteLength).toBeGreaterThan(LIMIT);
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { 'content-type': type }, payload });
    expectError(res, 413, 'NORM_ERR_BODY_TOO_LARGE', TOO_LARGE);
  });

  it('a batch over maxBodyBytes → 413', async () => {
    expectError(await postJson(ctx.app, '/v1/batch', { requests: [{ op: 'rmsnorm', ...big }] }), 413, 'NORM_ERR_BODY_TOO_LARGE', TOO_LARGE);
  });

  it('a body of exactly maxBodyBytes is read (then judged on its content)', async () => {
    const body = JSON.stringify({ input: { shape: [1], data: [1] } });
    const res = await postJson(ctx.app, '/v1/rmsnorm', body + ' '.repeat(LIMIT - body.length));
    expect(res.statusCode).toBe(200);
  });
});

interface RawResponse { status: number; headers: http.IncomingHttpHeaders; body: string }

async function listen(): Promise<URL> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return new URL(`http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`);
}

/** sends `chunks` and never ends the request: an answer can only come from the server deciding early */
function sendWithoutEnding(base: URL, headers: Record<string, string>, chunks: Buffer[]): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, method: 'POST', path: '/v1/rmsnorm', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        req.destroy();
      });
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
  });
}

describe('413 over a socket (127.0.0.1, port 0)', () => {
  const error413 = { statusCode: 413, code: 'NORM_ERR_BODY_TOO_LARGE', error: 'Payload Too Large', message: TOO_LARGE };

  it.each(['application/json', 'application/msgpack'])('a chunked %s body without Content-Length → 413 once the bytes pass the limit', async (type) => {
    const res = await sendWithoutEnding(await listen(), { 'content-type': type, 'transfer-encoding': 'chunked' }, [Buffer.alloc(3000, 0x20), Buffer.alloc(3000, 0x20)]);
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual(error413);
  });

  it('a declared Content-Length over the limit → 413 before the body is sent', async () => {
    const res = await sendWithoutEnding(await listen(), { 'content-type': 'application/msgpack', 'content-length': String(LIMIT + 1) }, [Buffer.from([0x81])]);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual(error413);
  });

  it('the server keeps serving after a 413', async () => {
    const base = await listen();
    await sendWithoutEnding(base, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, [Buffer.alloc(LIMIT + 1, 0x20)]);
    const result = await createClient({ baseUrl: base.origin }).rmsnorm({ dtype: 'float32', shape: [4], data: new Float32Array([1, 2, 3, 4]) });
    expectClose([...result.output.data], reference({ op: 'rmsnorm', dtype: 'float32', shape: [4], values: [1, 2, 3, 4] }).output, 'float32');
  });
});
