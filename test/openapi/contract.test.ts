// the server's real answers against openapi/openapi.json: every answer of the corpus must be one the
// document lists (status, content type, headers, body), and every answer the document lists must be
// produced by the corpus or be allow-listed here, so drift in either direction fails.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { closeApp } from '../helpers/fault-gate.js';
import type { Config } from '../../src/config.js';
import { errorExamples } from '../../src/http/openapi/examples.js';
import { requestExamples, responseExamples } from '../../src/http/v1/openapi-examples.js';
import { inferExamples, oipErrorExamples } from '../../src/http/v2/openapi-examples.js';
import { API_KEY, corpus, type AppName, type Probe } from './corpus.js';
import { loadContract, readDocument, type Contract } from './contract.js';

/** documented answers no request here can produce yet, each with the reason */
const NOT_YET_REACHABLE: ReadonlyMap<string, string> = new Map<string, string>([]);

const PROBE_TIMEOUT_MS = 20_000; // a loaded machine starts worker threads slowly
const BASE: Partial<Config> = { logLevel: 'silent', workers: 1 };
const GUARDED: Partial<Config> = { ...BASE, apiKeys: [API_KEY], maxBodyBytes: 4096, faultInjection: true, bodyIdleTimeoutMs: 50 };
const CONFIGS: Record<AppName, Partial<Config>> = {
  open: BASE,
  guarded: GUARDED,
  // held work parks its worker at the fault gate until the app closes: on an app of its own, so
  // no other probe waits behind it
  blocking: GUARDED,
  draining: BASE,
};

const apps = {} as Record<AppName, FastifyInstance>;
let contract: Contract;
const produced = new Set<string>();

beforeAll(async () => {
  contract = await loadContract();
  for (const name of Object.keys(CONFIGS) as AppName[]) {
    apps[name] = await buildApp(CONFIGS[name]);
    await apps[name].ready();
  }
  apps.draining.service.draining = true; // what SIGTERM does
}, 30_000);

afterAll(async () => {
  await Promise.all(Object.values(apps).map(closeApp));
});

/** over a real socket, for what Node's HTTP parser answers before any route; the answer in inject's shape */
async function sendOverHttp(probe: Pick<Probe, 'app' | 'method' | 'url' | 'headers' | 'payload'>) {
  const app = apps[probe.app];
  if (app.server.address() === null) await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return new Promise<{ statusCode: number; headers: Record<string, string>; rawPayload: Buffer; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: probe.method, path: probe.url, headers: probe.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const rawPayload = Buffer.concat(chunks);
        resolve({ statusCode: res.statusCode!, headers: res.headers as Record<string, string>, rawPayload, body: rawPayload.toString('utf8') });
      });
    });
    // the server answers and closes before it reads the body
    req.on('error', reject);
    req.end(probe.payload);
  });
}

async function send(probe: Pick<Probe, 'app' | 'method' | 'url' | 'headers' | 'payload' | 'stalls' | 'overHttp'>) {
  if (probe.overHttp) return sendOverHttp(probe);
  // a stalled body: its bytes, then nothing more, never an end
  const payload = probe.stalls ? new Readable({ read() {} }) : probe.payload;
  if (payload instanceof Readable) payload.push(probe.payload);
  return apps[probe.app].inject({ method: probe.method, url: probe.url, headers: probe.headers, payload } as InjectOptions);
}

describe('every answer of the corpus is one the document lists', () => {
  for (const probe of corpus()) {
    it(probe.name, async () => {
      const res = await send(probe);
      expect(res.statusCode, res.body.slice(0, 300)).toBe(probe.status);
      const { key, body } = contract.checkResponse(probe, res);
      produced.add(key);
      if (probe.code !== undefined) expect((body as { code?: string }).code).toBe(probe.code);
      if (probe.error !== undefined) expect(body).toEqual({ error: probe.error });
      if (res.statusCode === 200 && probe.payload !== undefined && probe.outsideRequestSchema === undefined) {
        // a request the server accepted must be one the document allows
        expect(contract.requestProblems(probe)).toBeNull();
      }
    }, PROBE_TIMEOUT_MS);
  }
});

describe('the documented examples are the server\'s answers', () => {
  for (const op of ['rmsnorm', 'layernorm', 'batchnorm', 'groupnorm', 'batch'] as const) {
    for (const [name, example] of Object.entries(requestExamples[op])) {
      it(`${op} ${name}: JSON and msgpack`, async () => {
        for (const type of ['application/json', 'application/msgpack']) {
          const payload = type === 'application/json' ? JSON.stringify(example.value) : (await import('../helpers/http.js')).pack(example.value);
          const probe = { app: 'open' as const, method: 'POST' as const, url: `/v1/${op}`, headers: { 'content-type': type, accept: 'application/json' }, payload };
          const res = await send(probe);
          const { body } = contract.checkResponse(probe, res);
          expect(body).toEqual(responseExamples[op][name].value);
        }
      }, PROBE_TIMEOUT_MS);
    }
  }

  for (const [name, example] of Object.entries(inferExamples)) {
    it(`/v2 ${example.model} ${name}: JSON, and with no Content-Type`, async () => {
      for (const headers of [{ 'content-type': 'application/json' }, {}] as Record<string, string>[]) {
        const probe = { app: 'open' as const, method: 'POST' as const, url: `/v2/models/${example.model}/infer`, headers, payload: JSON.stringify(example.request) };
        const { body } = contract.checkResponse(probe, await send(probe));
        expect(body).toEqual(example.response);
      }
    }, PROBE_TIMEOUT_MS);
  }

  it('/v2 400 and 404: a misspelled eps, an unknown model', async () => {
    const misspelled = {
      app: 'open' as const, method: 'POST' as const, url: '/v2/models/rmsnorm/infer',
      headers: {}, payload: JSON.stringify({ ...inferExamples.rmsnorm2x4.request as object, parameters: { epsilon: 0 } }),
    };
    expect(contract.checkResponse(misspelled, await send(misspelled)).body).toEqual(oipErrorExamples[400].unknownParameter.value);
    const unknown = { app: 'open' as const, method: 'GET' as const, url: '/v2/models/softmax', headers: {} };
    expect(contract.checkResponse(unknown, await send(unknown)).body).toEqual(oipErrorExamples[404].unknownModel.value);
  });

  it('400: a misspelled eps', async () => {
    const probe = {
      app: 'open' as const, method: 'POST' as const, url: '/v1/rmsnorm',
      headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ ...requestExamples.rmsnorm.rmsnorm2x4.value as object, epsilon: 0 }),
    };
    const { body } = contract.checkResponse(probe, await send(probe));
    expect(body).toEqual(errorExamples[400].unknownField.value);
  });
});

describe('coverage', () => {
  it('every documented answer is produced above, or allow-listed as not yet reachable', () => {
    const documented = [...contract.documentedPairs(), '* 404', '* 401'];
    const missing = documented.filter((pair) => !produced.has(pair) && !NOT_YET_REACHABLE.has(pair));
    expect(missing, 'documented answers no request of the corpus produced: add a request to corpus.ts').toEqual([]);
    const stale = [...NOT_YET_REACHABLE.keys()].filter((pair) => produced.has(pair) || !documented.includes(pair));
    expect(stale, 'allow-listed answers that are now produced, or no longer documented: remove them from NOT_YET_REACHABLE').toEqual([]);
  });
});

describe('the checker catches drift', () => {
  const probe = { app: 'open' as const, method: 'POST' as const, url: '/v1/rmsnorm', headers: { 'content-type': 'text/plain' }, payload: 'x' };

  it('an answer whose status the document lost', async () => {
    const document = readDocument();
    delete document.paths['/v1/rmsnorm'].post.responses['415'];
    const drifted = await loadContract(document);
    const res = await send(probe);
    expect(() => drifted.checkResponse(probe, res)).toThrow(/lists no 415/);
  });

  it('an error code the document does not list', async () => {
    const document = readDocument();
    document.components.schemas.Error415.properties.code.enum = ['NORM_ERR_SOMETHING_ELSE'];
    const drifted = await loadContract(document);
    expect(() => drifted.checkResponse(probe, { statusCode: 415, headers: { 'content-type': 'application/json' }, rawPayload: Buffer.from('{}') })).toThrow();
    const res = await send(probe);
    expect(() => drifted.checkResponse(probe, res)).toThrow(/does not match the document/);
  });

  it('msgpack data that is a list where the document says bin, and numpy maps with str keys', async () => {
    const { pack } = await import('../helpers/http.js');
    const ok = { statusCode: 200, headers: { 'content-type': 'application/msgpack', 'server-timing': 'decode;dur=1, queue;dur=0, compute;dur=1, encode;dur=0' } };
    const msgpackProbe = { ...probe, headers: { 'content-type': 'application/msgpack' } };
    const tensor = { dtype: 'float32', shape: [1], data: Buffer.from(new Float32Array([1]).buffer) };
    expect(contract.checkResponse(msgpackProbe, { ...ok, rawPayload: pack({ output: tensor }) }).key).toBe('POST /v1/rmsnorm 200');
    expect(() => contract.checkResponse(msgpackProbe, { ...ok, rawPayload: pack({ output: { ...tensor, data: [1] } }) })).toThrow(/does not match/);
    const strKeys = { nd: true, type: '<f4', kind: '', shape: [1], data: tensor.data };
    expect(() => contract.checkResponse(msgpackProbe, { ...ok, rawPayload: pack({ output: strKeys }) })).toThrow(/msgpack-numpy map with str keys/);
    expect(() => contract.checkResponse(msgpackProbe, { ...ok, headers: { 'content-type': 'application/msgpack' }, rawPayload: pack({ output: tensor }) }))
      .toThrow(/Server-Timing is documented as always sent/);
  });

  it('/v2: a binary answer whose blocks differ from its header, "NaN" as a string, an error body with more than its message', async () => {
    const infer = { app: 'open' as const, method: 'POST' as const, url: '/v2/models/rmsnorm/infer', headers: {} };
    const timing = { 'server-timing': 'decode;dur=1, queue;dur=0, compute;dur=1, encode;dur=0' };
    const header = Buffer.from('{"model_name":"rmsnorm","model_version":"1","outputs":[{"name":"output","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]}');
    const binary = (rest: Buffer) => ({
      statusCode: 200, headers: { ...timing, 'content-type': 'application/octet-stream', 'inference-header-content-length': String(header.length) }, rawPayload: Buffer.concat([header, rest]),
    });
    expect(contract.checkResponse(infer, binary(Buffer.alloc(4))).key).toBe('POST /v2/models/{model}/infer 200');
    expect(() => contract.checkResponse(infer, binary(Buffer.alloc(8)))).toThrow(/announces 4 bytes of tensors, 8 follow/);
    const json = (text: string) => ({ statusCode: 200, headers: { ...timing, 'content-type': 'application/json' }, rawPayload: Buffer.from(text) });
    const answer = (data: string) => `{"model_name":"rmsnorm","model_version":"1","outputs":[{"name":"output","datatype":"FP32","shape":[1],"data":[${data}]}]}`;
    expect(contract.checkResponse(infer, json(answer('NaN'))).key).toBe('POST /v2/models/{model}/infer 200');
    expect(() => contract.checkResponse(infer, json(answer('"NaN"')))).toThrow(/does not match the document/);
    const error = { statusCode: 404, headers: { 'content-type': 'application/json' }, rawPayload: Buffer.from('{"error":"model x: unknown","code":"NORM_ERR_NOT_FOUND"}') };
    expect(() => contract.checkResponse({ ...infer, url: '/v2/models/x/infer' }, error)).toThrow(/does not match the document/);
  });

  it('a content type the document does not list', async () => {
    const res = await send({ ...probe, headers: { 'content-type': 'application/json', accept: 'application/msgpack' }, payload: JSON.stringify({ input: { shape: [1], data: [1] } }) });
    const document = readDocument();
    delete document.paths['/v1/rmsnorm'].post.responses['200'].content['application/msgpack'];
    const drifted = await loadContract(document);
    expect(() => drifted.checkResponse({ ...probe, url: '/v1/rmsnorm' }, res)).toThrow(/content type application\/msgpack is not listed/);
  });
});
