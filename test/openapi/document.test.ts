// openapi/openapi.json: what the routes generate, valid OpenAPI with every $ref resolved, the error
// table both ways, every endpoint and header of the contract, and the same bytes at GET /openapi.json.
import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { errors } from '../../src/errors.js';
import { renderOpenapi } from '../../src/http/openapi/document.js';
import { DOCUMENT_PATH, loadContract, readDocument, type Contract } from './contract.js';

const MSGPACK_TYPES = ['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'];
const V1_OPERATIONS = ['/v1/rmsnorm', '/v1/layernorm', '/v1/batchnorm', '/v1/groupnorm', '/v1/batch'];
const V1_STATUSES = ['200', '400', '401', '406', '408', '413', '415', '431', '500', '503', '504'];
// API.md §2–§6, and the Open Inference Protocol (OIP.md)
const ENDPOINTS = [
  'POST /v1/batch', 'POST /v1/layernorm', 'POST /v1/rmsnorm', 'POST /v1/batchnorm', 'POST /v1/groupnorm',
  'GET /docs', 'GET /healthz', 'GET /metrics', 'GET /openapi.json', 'GET /readyz',
  'GET /docs/{page}', // docs/api.md, the API reference
  'GET /v2', 'GET /v2/health/live', 'GET /v2/health/ready',
  'GET /v2/models/{model}', 'GET /v2/models/{model}/ready', 'POST /v2/models/{model}/infer',
  'GET /v2/models/{model}/versions/{version}', 'GET /v2/models/{model}/versions/{version}/ready', 'POST /v2/models/{model}/versions/{version}/infer',
];
const V2_PUBLIC = ['/v2/health/live', '/v2/health/ready'];

const checkedIn = readFileSync(DOCUMENT_PATH, 'utf8');
const document = readDocument();
let app: FastifyInstance;
let contract: Contract;

beforeAll(async () => {
  app = await buildApp({ logLevel: 'silent', workers: 1 });
  await app.ready();
  contract = await loadContract(document);
}, 30_000);

afterAll(() => app.close());

describe('openapi/openapi.json', () => {
  it('is what the route schemas generate (if not: run `npm run openapi`)', () => {
    const generated = renderOpenapi(app);
    if (generated !== checkedIn) {
      const want = generated.split('\n');
      const have = checkedIn.split('\n');
      const line = want.findIndex((text, i) => text !== have[i]);
      expect.fail(`openapi/openapi.json is stale: run \`npm run openapi\` (first difference at line ${line + 1}: `
        + `checked in ${JSON.stringify(have[line])}, generated ${JSON.stringify(want[line])})`);
    }
  });

  it('does not depend on the server configuration', async () => {
    const other = await buildApp({ logLevel: 'silent', workers: 1, apiKeys: ['k'], maxBodyBytes: 1024, requestTimeoutMs: 5 });
    try {
      await other.ready();
      expect(renderOpenapi(other) === checkedIn, 'the document generated with other settings differs').toBe(true);
    } finally {
      await other.close();
    }
  }, 20_000);

  it('is valid OpenAPI 3.1 (@apidevtools/swagger-parser, every $ref resolved)', async () => {
    const api = await SwaggerParser.validate(structuredClone(document) as never);
    expect((api as { openapi?: string }).openapi).toBe('3.1.0');
  });

  it('a dangling $ref makes the validator fail', async () => {
    const broken = structuredClone(document);
    broken.paths['/v1/rmsnorm'].post.responses['400'] = { $ref: '#/components/responses/NoSuchAnswer' };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow(/NoSuchAnswer/);
  });
});

describe('the error table of src/errors.ts and the document', () => {
  const entries = Object.values(errors).map((make) => new make() as { code: string; statusCode: number });
  const table = new Map(entries.map(({ code, statusCode }) => [code, statusCode]));

  it('every code answers with one status, whichever of its messages is sent', () => {
    expect(entries.filter(({ code, statusCode }) => table.get(code) !== statusCode)).toEqual([]);
  });
  /** code → status, from the Error<status> schemas; a code listed twice keeps the status 0 */
  const documented = new Map<string, number>();
  for (const [name, schema] of Object.entries(document.components.schemas as Record<string, any>)) {
    const status = /^Error(\d{3})$/.exec(name)?.[1];
    if (status === undefined) continue;
    for (const code of schema.properties.code.enum) documented.set(code, documented.has(code) || schema.properties.statusCode.enum[0] !== Number(status) ? 0 : Number(status));
  }

  it('every code of the table is in the document, under its status', () => {
    expect(Object.fromEntries([...table].filter(([code, status]) => documented.get(code) !== status))).toEqual({});
  });

  it('every code of the document is in the table, with that status', () => {
    expect(Object.fromEntries([...documented].filter(([code, status]) => table.get(code) !== status))).toEqual({});
  });
});

describe('what the document covers', () => {
  it('every endpoint of API.md §2–§6, and nothing else', () => {
    const operations = Object.entries(document.paths as Record<string, object>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual([...ENDPOINTS].sort());
  });

  for (const path of V1_OPERATIONS) {
    it(`${path}: bodies, answers, headers, auth and an example`, () => {
      const operation = contract.operation('POST', path)!;
      const raw = document.paths[path].post;
      expect(Object.keys(operation.requestBody.content).sort()).toEqual(['application/json', ...MSGPACK_TYPES].sort());
      expect(Object.keys(operation.responses)).toEqual(V1_STATUSES);
      expect(Object.keys(operation.responses['200'].content).sort()).toEqual(['application/json', ...MSGPACK_TYPES].sort());
      expect(operation.responses['200'].headers['Server-Timing'].required).toBe(true);
      expect(operation.responses['503'].headers['Retry-After'].required).toBe(true);
      for (const status of V1_STATUSES.slice(1)) expect(Object.keys(operation.responses[status].content)).toEqual(['application/json']);
      expect(raw.parameters.map((p: { in: string; name: string }) => `${p.in} ${p.name}`)).toEqual(['header X-Request-Timeout-Ms']);
      expect(raw.security).toEqual([{ bearerAuth: [] }, {}]);
      expect(Object.keys(raw.requestBody.content['application/json'].examples).length).toBeGreaterThan(0);
      expect(Object.keys(raw.responses['200'].content['application/json'].examples).length).toBeGreaterThan(0);
    });
  }

  it('Authorization as a bearer security scheme on /v1 and /v2; the service endpoints and the /v2 health checks need none', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [path, item] of Object.entries(document.paths as Record<string, any>)) {
      const guarded = path.startsWith('/v1/') || ((path === '/v2' || path.startsWith('/v2/')) && !V2_PUBLIC.includes(path));
      for (const operation of Object.values(item as Record<string, any>)) {
        expect(operation.security, path).toEqual(guarded ? [{ bearerAuth: [] }, {}] : []);
        if (guarded) expect(Object.keys(operation.responses), path).toContain('401');
      }
    }
  });

  it('the license of package.json, and the API reference in info and externalDocs', () => {
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(document.externalDocs.url).toBe('/docs/api.md');
    expect(document.info.description).toContain('[/docs/api.md](/docs/api.md)');
  });

  it('the tensor: its dtypes, and binary msgpack data documented as binary', () => {
    const { Tensor, TensorBinary, NumpyArray, TensorMsgpack } = document.components.schemas;
    expect(Tensor.properties.dtype).toMatchObject({ enum: ['float32', 'float64', 'float16', 'bfloat16'], default: 'float32' });
    expect(TensorBinary.properties.data).toMatchObject({ type: 'string', format: 'binary' });
    expect(NumpyArray.properties.data).toMatchObject({ type: 'string', format: 'binary' });
    expect(TensorMsgpack.oneOf.map((s: { $ref: string }) => s.$ref)).toEqual(['Tensor', 'TensorBinary', 'NumpyArray'].map((n) => `#/components/schemas/${n}`));
    expect(JSON.stringify(document)).not.toContain('x-msgpack-data');
  });

  it('every optional field of §2, §8 and §9 with its default', () => {
    const rowDefaults = { axis: -1, eps_placement: 'inside', weight_offset: 0, return_stats: false };
    const rowFields = ['input', 'axis', 'weight', 'bias', 'eps', 'eps_placement', 'weight_offset', 'residual', 'return_stats', 'output_dtype'];
    const channelFields = ['weight', 'bias', 'eps', 'return_stats', 'output_dtype'];
    const cases = [
      ['Rmsnorm', [...rowFields, 'partial'], ['input'], { ...rowDefaults, eps: 1e-6, partial: 1 }],
      ['Layernorm', rowFields, ['input'], { ...rowDefaults, eps: 1e-5 }],
      ['Batchnorm', ['input', 'channel_axis', 'training', 'running_mean', 'running_var', 'momentum', ...channelFields], ['input'],
        { channel_axis: 1, training: false, momentum: 0.1, eps: 1e-5, return_stats: false }],
      ['Groupnorm', ['input', 'num_groups', ...channelFields], ['input', 'num_groups'], { eps: 1e-5, return_stats: false }],
    ] as const;
    for (const [op, fields, needed, defaults] of cases) {
      for (const suffix of ['', 'Msgpack']) {
        const { properties, required } = document.components.schemas[`${op}Request${suffix}`];
        expect(required).toEqual(needed);
        expect(Object.keys(properties)).toEqual(fields);
        for (const [field, value] of Object.entries(defaults)) expect(properties[field].default, `${op} ${field}`).toBe(value);
        expect(properties.eps.minimum).toBe(0);
        for (const field of ['weight', 'bias', 'output_dtype']) expect(properties[field].description, field).toMatch(/default|same shape/);
      }
    }
  });

  it('every example matches its schema', () => {
    let count = 0;
    for (const [path, item] of Object.entries(document.paths as Record<string, any>)) {
      for (const operation of Object.values(item as Record<string, any>)) {
        const resolved = contract.operation(Object.keys(item)[0], path)!;
        const media = [
          ...Object.entries(operation.requestBody?.content ?? {}).map(([type, m]) => [m, resolved.requestBody.content[type].schema]),
          ...Object.entries(resolved.responses as Record<string, any>).flatMap(([, r]) =>
            Object.values(r.content ?? {}).map((m: any) => [m, m.schema])),
        ] as [{ examples?: Record<string, { value: unknown }> }, object][];
        for (const [{ examples }, schema] of media) {
          for (const example of Object.values(examples ?? {})) {
            count++;
            expect(contract.problems(schema, example.value), `${path} example`).toBeNull();
          }
        }
      }
    }
    expect(count).toBeGreaterThanOrEqual(6);
  });
});

describe('served', () => {
  it('GET /openapi.json: the checked-in bytes', async () => {
    const res = await app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body === checkedIn, 'GET /openapi.json differs from openapi/openapi.json: run `npm run openapi`').toBe(true);
  });

  it('GET /docs: Swagger UI from local files only, reading this document', async () => {
    for (const url of ['/docs', '/docs/']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const assets = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(assets.length).toBeGreaterThan(3);
      for (const asset of assets) {
        expect(asset, 'an asset from the network').not.toMatch(/^(https?:)?\/\//);
        const target = new URL(asset, `http://localhost${url}`).pathname;
        expect((await app.inject({ url: target })).statusCode, target).toBe(200);
      }
    }
    const initializer = await app.inject({ url: '/docs/static/swagger-initializer.js' });
    expect(initializer.body).toContain('validatorUrl: null'); // no call to validator.swagger.io
    const json = await app.inject({ url: '/docs/json' });
    expect(json.json()).toEqual(document);
  });

  it('GET /docs/api.md: the bytes of docs/api.md, as Markdown', async () => {
    const res = await app.inject({ url: '/docs/api.md' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.body === readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8'), 'GET /docs/api.md differs from docs/api.md').toBe(true);
  });
});
