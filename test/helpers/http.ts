// one fresh app per test, requests through app.inject, and whole-body checks of error answers.
import type { FastifyInstance, InjectOptions } from 'fastify';
import { Packr, Unpackr } from 'msgpackr';
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';

export type Response = Awaited<ReturnType<FastifyInstance['inject']>>;

/** records off, so the service sees plain maps; typed arrays must be sent as byte views */
const plainPackr = new Packr({ useRecords: false });
/** packs Float32Array / Float64Array / Int32Array … as msgpackr's typed-array extension */
const typedPackr = new Packr({ moreTypes: true, useRecords: false });
const objectUnpackr = new Unpackr({ mapsAsObjects: true, useRecords: false });
const mapUnpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });

/** a copy: msgpackr may reuse the buffer it returned on the next pack */
export function pack(value: unknown): Buffer {
  return Buffer.from(plainPackr.pack(value));
}

export function packTyped(value: unknown): Buffer {
  return Buffer.from(typedPackr.pack(value));
}

/** msgpack maps decoded as plain objects (string keys) */
export function unpack(bytes: Uint8Array): any {
  return objectUnpackr.unpack(bytes);
}

/** msgpack maps decoded as Map, so bin keys stay bin (msgpack-numpy form) */
export function unpackMaps(bytes: Uint8Array): any {
  return mapUnpackr.unpack(bytes);
}

// the event-loop check would shed requests while the test process itself is busy
export const TEST_DEFAULTS: Partial<Config> = { logLevel: 'silent', workers: 2 };

// every test boots an app and its worker threads (schema compilation alone is ~0.3 s):
// on a busy CI machine the 5 s default is too tight
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

export function createApp(config: Partial<Config> = {}): Promise<FastifyInstance> {
  return buildApp({ ...TEST_DEFAULTS, ...config });
}

/**
 * a fresh app for every test of the calling file, closed after it; `scope: 'file'`: one app for all
 * of them, for files whose tests only send requests and read answers (a boot with its workers costs
 * ~0.3 s, more than most such tests)
 */
export function useFreshApp(config: Partial<Config> = {}, scope: 'test' | 'file' = 'test'): { readonly app: FastifyInstance } {
  let current: FastifyInstance | null = null;
  (scope === 'file' ? beforeAll : beforeEach)(async () => {
    current = await createApp(config);
  });
  (scope === 'file' ? afterAll : afterEach)(async () => {
    await current?.close();
    current = null;
  });
  return {
    get app() {
      if (current === null) throw new Error('no app outside a test');
      return current;
    },
  };
}

type Headers = Record<string, string>;

/** a JSON request: objects are stringified, strings sent as they are (for malformed bodies) */
export function postJson(app: FastifyInstance, url: string, body: unknown, headers: Headers = {}): Promise<Response> {
  return app.inject({
    method: 'POST', url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  } as InjectOptions);
}

/** a msgpack request: values are packed with records off, buffers sent as they are */
export function postMsgpack(app: FastifyInstance, url: string, body: unknown, headers: Headers = {}): Promise<Response> {
  return app.inject({
    method: 'POST', url,
    headers: { 'content-type': 'application/msgpack', ...headers },
    payload: Buffer.isBuffer(body) ? body : pack(body),
  } as InjectOptions);
}

/** the response body, JSON or msgpack by its Content-Type */
export function bodyOf(res: Response): any {
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('application/json')) return res.json();
  if (/^application\/(x-|vnd\.)?msgpack/.test(type)) return unpack(res.rawPayload);
  throw new Error(`unexpected content-type ${type}: ${res.body.slice(0, 200)}`);
}

/** a 200 with a body, else fail showing what came back */
export function okBody(res: Response): any {
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  return bodyOf(res);
}

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  404: 'Not Found',
  406: 'Not Acceptable',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  503: 'Service Unavailable',
};

/** an error answer: its status, a JSON content type, and exactly this body */
export function expectError(res: Response, statusCode: number, code: string, message: string): void {
  expect(res.headers['content-type']).toMatch(/^application\/json(;|$)/);
  expect(res.json()).toEqual({ statusCode, code, error: STATUS_TEXT[statusCode], message });
  expect(res.statusCode).toBe(statusCode);
}

/** a 4xx answered in JSON, whatever the dialect: its parsed body, for the dialect's own checks */
export function clientErrorBody(res: Response): Record<string, unknown> {
  expect(res.statusCode, res.body.slice(0, 300)).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
  expect(res.headers['content-type']).toMatch(/^application\/json(;|$)/);
  return JSON.parse(res.body) as Record<string, unknown>;
}

/** the names and durations of a Server-Timing header */
export function serverTiming(header: unknown): Record<string, number> {
  expect(typeof header).toBe('string');
  const metrics: Record<string, number> = {};
  for (const entry of String(header).split(',')) {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => p.trim()).find((p) => p.startsWith('dur='));
    if (dur !== undefined) metrics[name.trim()] = Number(dur.slice(4));
  }
  return metrics;
}

export function expectServerTiming(res: Response): void {
  const metrics = serverTiming(res.headers['server-timing']);
  for (const name of ['decode', 'queue', 'compute', 'encode']) {
    expect(metrics[name], `Server-Timing ${name} in ${String(res.headers['server-timing'])}`).toBeGreaterThanOrEqual(0);
  }
}
