// API.md §4: request Content-Type, Accept negotiation, the response's label, errors in JSON, Server-Timing.
import { describe, expect, it } from 'vitest';
import { bodyOf, expectError, expectServerTiming, pack, postMsgpack, serverTiming, useFreshApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { valuesOf } from '../helpers/tensors.js';

const ctx = useFreshApp();
const values = [1, 2, 3, 4, 5, 6, 7, 8];
const body = { input: { shape: [2, 4], data: values } };
const JSON_TYPE = /^application\/json(;|$)/;

function post(contentType: string, accept?: string, url = '/v1/rmsnorm', payload: unknown = body) {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (accept !== undefined) headers.accept = accept;
  const isJson = contentType.toLowerCase().includes('json');
  return ctx.app.inject({ method: 'POST', url, headers, payload: isJson ? JSON.stringify(payload) : pack(payload) });
}

/** the response type, and a check that its body really is in that encoding with the right values */
async function answer(contentType: string, accept?: string): Promise<string> {
  const res = await post(contentType, accept);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  const type = String(res.headers['content-type']);
  const out = bodyOf(res).output;
  expect(Array.isArray(out.data)).toBe(JSON_TYPE.test(type));
  expectClose(valuesOf(out), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values }).output, 'float32');
  return type.startsWith('application/json') ? 'application/json' : type;
}

describe('the response encoding', () => {
  it.each([
    // [request Content-Type, Accept, response Content-Type]
    ['application/json', undefined, 'application/json'],
    ['application/msgpack', undefined, 'application/msgpack'],
    ['application/json', '*/*', 'application/json'],
    ['application/msgpack', '*/*', 'application/msgpack'],
    ['application/json', 'application/*', 'application/json'],
    ['application/json', 'application/msgpack', 'application/msgpack'],
    ['application/msgpack', 'application/json', 'application/json'],
    ['application/json', 'application/json;q=0.5, application/msgpack', 'application/msgpack'],
    ['application/msgpack', 'application/json, application/msgpack;q=0.9', 'application/json'],
    ['application/json', 'application/json;q=0, */*', 'application/msgpack'],
    ['application/json', 'text/html, */*;q=0.1', 'application/json'],
    ['application/json', 'application/*;q=0.5, application/msgpack;q=0.6', 'application/msgpack'],
    ['application/json', 'application/json;q=0, application/msgpack;q=0.001', 'application/msgpack'],
    ['application/json', 'APPLICATION/MSGPACK', 'application/msgpack'],
  ] as [string, string | undefined, string][])('Content-Type %s, Accept %s → %s', async (contentType, accept, expected) => {
    expect(await answer(contentType, accept)).toBe(expected);
  });

  it.each([
    ['application/json', 'application/json, application/msgpack', 'application/json'],
    ['application/msgpack', 'application/json, application/msgpack', 'application/msgpack'],
    ['application/json', 'application/msgpack;q=0.7, application/json;q=0.7', 'application/json'],
    ['application/x-msgpack', 'application/json;q=0.7, application/msgpack;q=0.7', 'application/msgpack'],
    ['application/msgpack', 'application/*;q=0.2', 'application/msgpack'],
  ] as [string, string, string][])('a tie keeps the request encoding: %s with Accept %s → %s', async (contentType, accept, expected) => {
    expect(await answer(contentType, accept)).toBe(expected);
  });
});

describe('the msgpack label', () => {
  it.each([
    // a type Accept names wins; else the request's own msgpack type
    ['application/json', 'application/x-msgpack', 'application/x-msgpack'],
    ['application/json', 'application/vnd.msgpack', 'application/vnd.msgpack'],
    ['application/msgpack', 'application/vnd.msgpack', 'application/vnd.msgpack'],
    ['application/vnd.msgpack', '*/*', 'application/vnd.msgpack'],
    ['application/x-msgpack', undefined, 'application/x-msgpack'],
    ['application/x-msgpack', 'application/*', 'application/x-msgpack'],
    ['application/json', 'application/vnd.msgpack;q=0.9, application/x-msgpack;q=0.8, application/json;q=0.7', 'application/vnd.msgpack'],
    ['application/json', 'application/json;q=0.1, */*', 'application/msgpack'],
    // the request's type refused with q=0 while a wildcard allows the others
    ['application/msgpack', 'application/msgpack;q=0, application/json;q=0.1, application/*;q=0.5', 'application/x-msgpack'],
  ] as [string, string | undefined, string][])('Content-Type %s, Accept %s → %s', async (contentType, accept, expected) => {
    expect(await answer(contentType, accept)).toBe(expected);
  });
});

describe('request Content-Type', () => {
  it.each([
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'Application/JSON',
    'application/msgpack; charset=binary',
    'application/x-msgpack',
    'application/vnd.msgpack; foo=bar',
  ])('%s is read (parameters ignored)', async (contentType) => {
    const res = await post(contentType);
    expect(res.statusCode, res.body).toBe(200);
    expectClose(valuesOf(bodyOf(res).output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values }).output, 'float32');
  });

  it.each(['text/plain', 'application/octet-stream', 'multipart/form-data; boundary=x', 'application/jsonx'])('%s → 415', async (contentType) => {
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: { 'content-type': contentType }, payload: JSON.stringify(body) });
    expectError(res, 415, 'NORM_ERR_MEDIA_TYPE', `Content-Type: ${contentType.split(';')[0]}; send application/json or application/msgpack`);
  });
});

describe('unacceptable Accept', () => {
  it.each([
    'text/html',
    'application/msgpack;q=0',
    'application/msgpack;q=0, application/json;q=0',
    'image/*',
  ])('Accept %s → 406', async (accept) => {
    expectError(await post('application/json', accept), 406, 'NORM_ERR_NOT_ACCEPTABLE', 'Accept: allows neither application/json nor application/msgpack');
  });
});

describe('errors are always JSON', () => {
  it('a msgpack request accepting only msgpack, with a bad field → 400 in JSON', async () => {
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: body.input, eps: -1 }, { accept: 'application/msgpack' });
    expectError(res, 400, 'NORM_ERR_FIELD_INVALID', 'eps: must be >= 0');
  });

  it('a msgpack request accepting only x-msgpack, unknown route → 404 in JSON', async () => {
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm/extra', body, { accept: 'application/x-msgpack' });
    expectError(res, 404, 'NORM_ERR_NOT_FOUND', 'POST /v1/rmsnorm/extra: no such route');
  });

  it('a batch accepting msgpack with json;q=0, malformed body → 400 in JSON', async () => {
    const res = await postMsgpack(ctx.app, '/v1/batch', Buffer.from([0x81, 0xa8]), { accept: 'application/msgpack, application/json;q=0' });
    expectError(res, 400, 'NORM_ERR_BODY_MALFORMED', 'body: not valid msgpack (Unexpected end of MessagePack data)');
  });
});

describe('Server-Timing', () => {
  const batch = { requests: [{ op: 'rmsnorm', ...body }, { op: 'layernorm', ...body }] };

  it.each([
    ['/v1/rmsnorm', 'application/json', body],
    ['/v1/rmsnorm', 'application/msgpack', body],
    ['/v1/layernorm', 'application/json', body],
    ['/v1/layernorm', 'application/vnd.msgpack', body],
    ['/v1/batch', 'application/json', batch],
    ['/v1/batch', 'application/x-msgpack', batch],
    ['/v1/layernorm', 'application/json', { input: { shape: [0, 4], data: [] } }],
  ] as [string, string, unknown][])('200 from %s (%s) has decode, queue, compute and encode durations', async (url, contentType, payload) => {
    const res = await post(contentType, undefined, url, payload);
    expect(res.statusCode).toBe(200);
    expectServerTiming(res);
  });

  it('the header is metric;dur=<ms> entries, comma-separated', async () => {
    const res = await post('application/json');
    expect(res.headers['server-timing']).toMatch(/^(\w+;dur=\d+(\.\d+)?)(, ?\w+;dur=\d+(\.\d+)?)*$/);
    expect(Object.keys(serverTiming(res.headers['server-timing']))).toEqual(expect.arrayContaining(['decode', 'queue', 'compute', 'encode']));
  });
});
