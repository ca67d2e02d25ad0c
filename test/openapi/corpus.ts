// real requests for the contract test: valid and invalid, JSON and msgpack, every route and every
// status a route can answer (the /v2 ones in oip-corpus.ts). `app` names the server that answers: `open` (no keys), `guarded`
// (API keys, a 4 KiB body limit, test faults) or `draining` (as after SIGTERM).
import { pack, packTyped } from '../helpers/http.js';
import { bytesOf } from '../helpers/tensors.js';
import { oipProbes } from './oip-corpus.js';

/** `blocking`: configured as `guarded`, for the held-work probes alone (each parks a worker until the app closes) */
export type AppName = 'open' | 'guarded' | 'blocking' | 'draining';

export interface Probe {
  name: string;
  app: AppName;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  status: number;
  /** the error code, for error answers */
  code?: string;
  /** the whole message of a /v2 error answer, {"error": message} */
  error?: string;
  /** why a request the server accepts is outside the document's request schema */
  outsideRequestSchema?: string;
  /** the payload is sent as a stream that stops after it without ending: a stalled body */
  stalls?: true;
  /** sent over a real socket: Node's HTTP parser answers it before any route (431) */
  overHttp?: true;
}

/** a header that takes the request's headers over Node's 16 KiB limit */
export const OVERSIZED_HEADERS = { 'x-pad': 'a'.repeat(17 * 1024) };

export const API_KEY = 'contract-key';
const AUTH = { authorization: `Bearer ${API_KEY}` };
const MSGPACK = 'application/msgpack';

const x2x4 = { dtype: 'float32', shape: [2, 4], data: [1, 2, 3, 4, -1, -2, -3, -4] };
const bin = (dtype: 'float32' | 'float64' | 'float16' | 'bfloat16', shape: number[], values: number[]) => ({ dtype, shape, data: bytesOf(dtype, values) });
const numpy = (shape: number[], values: number[]) => new Map<Buffer, unknown>([
  [Buffer.from('nd'), true], [Buffer.from('type'), '<f4'], [Buffer.from('kind'), ''],
  [Buffer.from('shape'), shape], [Buffer.from('data'), bytesOf('float32', values)],
]);

type Send = Pick<Probe, 'headers' | 'payload'>;
const json = (body: unknown, headers: Record<string, string> = {}): Send => ({
  headers: { 'content-type': 'application/json', ...headers },
  payload: typeof body === 'string' ? body : JSON.stringify(body),
});
const msgpack = (body: unknown, headers: Record<string, string> = {}, type = MSGPACK): Send => ({
  headers: { 'content-type': type, ...headers },
  payload: Buffer.isBuffer(body) ? body : pack(body),
});

const post = (app: AppName, url: string, name: string, send: Send, status: number, code?: string): Probe =>
  ({ name: `${url} ${name}`, app, method: 'POST', url, ...send, status, ...(code ? { code } : {}) });

function normProbes(op: 'rmsnorm' | 'layernorm'): Probe[] {
  const url = `/v1/${op}`;
  const p = (name: string, send: Send, status: number, code?: string) => post('open', url, name, send, status, code);
  return [
    p('2x4 JSON example', json({ input: x2x4, eps: 0, return_stats: true }), 200),
    p('2x4 msgpack bin float32, float16 weight, list bias, residual, stats', msgpack({
      input: bin('float32', [2, 4], x2x4.data), weight: bin('float16', [4], [1, 0.5, 2, 1]), bias: { shape: [4], data: [0, 0.1, 0, 0] },
      residual: bin('float32', [2, 4], [0, 0, 0, 0, 1, 1, 1, 1]), return_stats: true,
    }), 200),
    p('2x4 x-msgpack float16 in, bfloat16 out, eps outside, weight_offset 1', msgpack({
      input: bin('float16', [2, 4], x2x4.data), output_dtype: 'bfloat16', eps_placement: 'outside', weight_offset: 1, weight: bin('float32', [4], [0, 0, 0, 0]),
    }, {}, 'application/x-msgpack'), 200),
    p('vnd.msgpack request, Accept JSON', msgpack({ input: bin('float64', [2, 4], x2x4.data) }, { accept: 'application/json' }, 'application/vnd.msgpack'), 200),
    p('JSON request, Accept vnd.msgpack', json({ input: x2x4, axis: 0 }, { accept: 'application/vnd.msgpack;q=1, application/json;q=0.5' }), 200),
    p('msgpack-numpy input and residual', msgpack({ input: numpy([2, 4], x2x4.data), residual: numpy([2, 4], [1, 1, 1, 1, 0, 0, 0, 0]), return_stats: true }), 200),
    p('JSON float64 with "NaN" and "Infinity"', json({ input: { dtype: 'float64', shape: [2, 2], data: [1, 'NaN', 'Infinity', 2] }, return_stats: true }), 200),
    p('zero rows [0, 8]', json({ input: { shape: [0, 8], data: [] }, return_stats: true }), 200),
    { ...p('Float32Array extension', msgpack(packTyped({ input: { shape: [2, 4], data: new Float32Array(x2x4.data) } })), 200), outsideRequestSchema: 'msgpackr typed-array extension' },
    p('misspelled epsilon', json({ input: x2x4, epsilon: 0 }), 400, 'NORM_ERR_FIELD_UNKNOWN'),
    p('msgpack without input', msgpack({ eps: 0 }), 400, 'NORM_ERR_FIELD_MISSING'),
    p('malformed JSON', json('{"input":'), 400, 'NORM_ERR_BODY_MALFORMED'),
    p('malformed msgpack', msgpack(Buffer.from([0xc1])), 400, 'NORM_ERR_BODY_MALFORMED'),
    p('unknown dtype', json({ input: { ...x2x4, dtype: 'int8' } }), 400, 'NORM_ERR_DTYPE_UNKNOWN'),
    p('binary data of the wrong length', msgpack({ input: bin('float32', [2, 3], x2x4.data) }), 400, 'NORM_ERR_DATA_LENGTH'),
    p('axis out of range', json({ input: x2x4, axis: 2 }), 400, 'NORM_ERR_AXIS_RANGE'),
    p('weight of the wrong shape', json({ input: x2x4, weight: { shape: [3], data: [1, 1, 1] } }), 400, 'NORM_ERR_SHAPE_MISMATCH'),
    p('n = 0', json({ input: { shape: [2, 0], data: [] } }), 400, 'NORM_ERR_EMPTY_ROW'),
    p('a string in data', json({ input: { shape: [1], data: ['one'] } }), 400, 'NORM_ERR_DATA_INVALID'),
    p('negative eps', json({ input: x2x4, eps: -1 }), 400, 'NORM_ERR_FIELD_INVALID'),
    p('bad X-Request-Timeout-Ms', json({ input: x2x4 }, { 'x-request-timeout-ms': '1.5' }), 400, 'NORM_ERR_TIMEOUT_HEADER'),
    p('Accept text/html', json({ input: x2x4 }, { accept: 'text/html' }), 406, 'NORM_ERR_NOT_ACCEPTABLE'),
    p('Content-Type text/plain', { headers: { 'content-type': 'text/plain' }, payload: 'input' }, 415, 'NORM_ERR_MEDIA_TYPE'),
    p('no Content-Type', { headers: {}, payload: Buffer.from('{}') }, 415, 'NORM_ERR_MEDIA_TYPE'),
  ];
}

/** BatchNorm, GroupNorm and pRMSNorm (API.md §2 partial, §8, §9) */
function channelProbes(): Probe[] {
  const p = (url: string, name: string, send: Send, status: number, code?: string) => post('open', url, name, send, status, code);
  const bn = '/v1/batchnorm';
  const gn = '/v1/groupnorm';
  const c2 = (values: number[], dtype: 'float32' | 'float16' = 'float32') => bin(dtype, [2], values);
  const running = { running_mean: { shape: [2], data: [0, 0] }, running_var: { shape: [2], data: [1, 1] } };
  const x4x2 = { dtype: 'float32', shape: [4, 2], data: [1, 10, 2, 20, 3, 30, 4, 40] };
  return [
    p(bn, 'JSON training example with running statistics and stats', json({ input: x4x2, training: true, eps: 0, return_stats: true, ...running }), 200),
    p(bn, 'msgpack inference, channels last, float16 running statistics, bfloat16 out', msgpack({
      input: bin('float32', [2, 2, 2], [1, 2, 3, 4, 5, 6, 7, 8]), channel_axis: -1, running_mean: c2([1, 2], 'float16'), running_var: c2([4, 1], 'float16'),
      weight: c2([1, 2]), bias: c2([0, 1]), output_dtype: 'bfloat16',
    }), 200),
    p(bn, 'msgpack-numpy training input, no running statistics', msgpack({ input: numpy([2, 4], x2x4.data), training: true, momentum: 0.5, return_stats: true }), 200),
    p(bn, 'rank 1', json({ input: { shape: [4], data: [1, 2, 3, 4] }, training: true }), 400, 'NORM_ERR_SHAPE_MISMATCH'),
    p(bn, 'inference without running_var', json({ input: x4x2, running_mean: running.running_mean }), 400, 'NORM_ERR_FIELD_MISSING'),
    p(bn, 'training on one value per channel', json({ input: { shape: [1, 2], data: [1, 2] }, training: true }), 400, 'NORM_ERR_TOO_FEW_VALUES'),
    p(bn, 'channel_axis out of range', json({ input: x4x2, channel_axis: 2, ...running }), 400, 'NORM_ERR_AXIS_RANGE'),
    p(bn, 'axis is not a batchnorm field', json({ input: x4x2, axis: 0, ...running }), 400, 'NORM_ERR_FIELD_UNKNOWN'),
    p(bn, 'Accept text/csv', json({ input: x4x2, ...running }, { accept: 'text/csv' }), 406, 'NORM_ERR_NOT_ACCEPTABLE'),
    p(bn, 'Content-Type text/plain', { headers: { 'content-type': 'text/plain' }, payload: 'x' }, 415, 'NORM_ERR_MEDIA_TYPE'),
    p(gn, 'JSON example with stats', json({ input: { shape: [1, 4, 2], data: [1, 2, 3, 4, 5, 6, 7, 8] }, num_groups: 2, eps: 0, return_stats: true }), 200),
    p(gn, 'msgpack float16 [2, 4, 3], instance norm, float32 out', msgpack({
      input: bin('float16', [2, 4, 3], Array.from({ length: 24 }, (_, i) => i % 5)), num_groups: 4, output_dtype: 'float32', weight: bin('float32', [4], [1, 2, 3, 4]),
    }), 200),
    p(gn, 'num_groups not dividing C', json({ input: { shape: [1, 3], data: [1, 2, 3] }, num_groups: 2 }), 400, 'NORM_ERR_FIELD_INVALID'),
    p(gn, 'no num_groups', json({ input: x2x4 }), 400, 'NORM_ERR_FIELD_MISSING'),
    p(gn, 'a zero spatial dimension', json({ input: { shape: [2, 4, 0], data: [] }, num_groups: 2 }), 400, 'NORM_ERR_EMPTY_ROW'),
    p(gn, 'a msgpack-numpy input with strides', msgpack({ input: new Map([...numpy([2, 4], x2x4.data), [Buffer.from('strides'), [16, 4]]]), num_groups: 1 }), 400, 'NORM_ERR_FIELD_UNKNOWN'),
    p(gn, 'Accept text/csv', json({ input: x2x4, num_groups: 1 }, { accept: 'text/csv' }), 406, 'NORM_ERR_NOT_ACCEPTABLE'),
    p(gn, 'Content-Type text/plain', { headers: { 'content-type': 'text/plain' }, payload: 'x' }, 415, 'NORM_ERR_MEDIA_TYPE'),
    p('/v1/rmsnorm', 'partial 0.5', json({ input: x2x4, partial: 0.5, eps: 0 }), 200),
    p('/v1/rmsnorm', 'partial keeping no element', json({ input: x2x4, partial: 0.2 }), 400, 'NORM_ERR_EMPTY_ROW'),
  ];
}

function batchProbes(): Probe[] {
  const url = '/v1/batch';
  const x4 = { dtype: 'float32', shape: [4], data: [1, 2, 3, 4] };
  const p = (name: string, send: Send, status: number, code?: string) => post('open', url, name, send, status, code);
  return [
    p('JSON example', json({ requests: [{ op: 'rmsnorm', input: x4 }, { op: 'layernorm', input: x4 }] }), 200),
    p('msgpack, one msgpack-numpy item and one bin item with stats', msgpack({
      requests: [{ op: 'rmsnorm', input: numpy([2, 4], x2x4.data) }, { op: 'layernorm', input: bin('float32', [2, 4], x2x4.data), return_stats: true }],
    }), 200),
    p('JSON request, Accept x-msgpack', json({ requests: [{ op: 'layernorm', input: x4, eps: 0 }] }, { accept: 'application/x-msgpack' }), 200),
    p('all four ops', json({
      requests: [
        { op: 'rmsnorm', input: x4, partial: 0.5 }, { op: 'layernorm', input: x4 },
        { op: 'batchnorm', input: { shape: [2, 2], data: [1, 2, 3, 4] }, training: true }, { op: 'groupnorm', input: { shape: [1, 4], data: [1, 2, 3, 4] }, num_groups: 2 },
      ],
    }), 200),
    p('a groupnorm item without num_groups', json({ requests: [{ op: 'rmsnorm', input: x4 }, { op: 'groupnorm', input: x4 }] }), 400, 'NORM_ERR_FIELD_MISSING'),
    p('an invalid second item', json({ requests: [{ op: 'rmsnorm', input: x4 }, { op: 'rmsnorm', input: x4, weight: { shape: [2], data: [1, 1] } }] }), 400, 'NORM_ERR_SHAPE_MISMATCH'),
    p('no requests', json({ requests: [] }), 400, 'NORM_ERR_FIELD_INVALID'),
    p('unknown op', msgpack({ requests: [{ op: 'softmax', input: x4 }] }), 400, 'NORM_ERR_FIELD_INVALID'),
    p('Accept application/xml', msgpack({ requests: [{ op: 'rmsnorm', input: x4 }] }, { accept: 'application/xml' }), 406, 'NORM_ERR_NOT_ACCEPTABLE'),
    p('Content-Type application/cbor', { headers: { 'content-type': 'application/cbor' }, payload: Buffer.from([0xa0]) }, 415, 'NORM_ERR_MEDIA_TYPE'),
  ];
}

const get = (app: AppName, url: string, status: number, headers: Record<string, string> = {}): Probe =>
  ({ name: `GET ${url} (${app})`, app, method: 'GET', url, headers, status });

/** 401, 408, 413, 500 and 504 from the guarded server, 503 from the draining one, for every /v1 route */
function guardedProbes(url: string, body: unknown): Probe[] {
  const big = { requests: [{ op: 'rmsnorm', input: { shape: [1024], data: new Array(1024).fill(1.5) } }] };
  return [
    post('guarded', url, 'with a valid key', json(body, AUTH), 200),
    post('guarded', url, 'without Authorization', json(body), 401, 'NORM_ERR_UNAUTHORIZED'),
    post('guarded', url, 'with a wrong key', msgpack(body, { authorization: 'Bearer nope' }), 401, 'NORM_ERR_UNAUTHORIZED'),
    post('guarded', url, 'JSON body over the 4 KiB limit', json(big, AUTH), 413, 'NORM_ERR_BODY_TOO_LARGE'),
    post('guarded', url, 'msgpack body over the 4 KiB limit', msgpack({ ...big, pad: Buffer.alloc(8192) }, AUTH), 413, 'NORM_ERR_BODY_TOO_LARGE'),
    { ...post('guarded', url, 'a body that stalls', json(body, AUTH), 408, 'NORM_ERR_BODY_STALLED'), stalls: true },
    post('guarded', url, 'a worker that crashes', json(body, { ...AUTH, 'x-test-fault': 'crash-worker' }), 500, 'NORM_ERR_WORKER_FAILED'),
    post('blocking', url, 'a deadline of 20 ms on held work', json(body, { ...AUTH, 'x-test-fault': 'hold', 'x-request-timeout-ms': '20' }), 504, 'NORM_ERR_DEADLINE'),
    post('draining', url, 'while draining', msgpack(body), 503, 'NORM_ERR_SHUTTING_DOWN'),
    { ...post('open', url, 'headers over 16 KiB', json(body, OVERSIZED_HEADERS), 431, 'NORM_ERR_HEADERS_TOO_LARGE'), overHttp: true },
  ];
}

export function corpus(): Probe[] {
  const single = { input: x2x4 };
  return [
    ...normProbes('rmsnorm'),
    ...normProbes('layernorm'),
    ...channelProbes(),
    ...batchProbes(),
    ...guardedProbes('/v1/rmsnorm', single),
    ...guardedProbes('/v1/layernorm', single),
    ...guardedProbes('/v1/batchnorm', { input: x2x4, training: true }),
    ...guardedProbes('/v1/groupnorm', { input: x2x4, num_groups: 2 }),
    ...guardedProbes('/v1/batch', { requests: [{ op: 'layernorm', ...single }] }),
    get('open', '/healthz', 200),
    get('open', '/readyz', 200),
    get('open', '/metrics', 200),
    get('open', '/openapi.json', 200),
    get('open', '/docs', 200),
    get('open', '/docs/api.md', 200),
    { ...get('open', '/docs/nowhere.md', 404), code: 'NORM_ERR_NOT_FOUND' },
    get('guarded', '/docs/api.md', 200),
    // the service endpoints take no query parameter
    ...['/healthz?verbose=1', '/readyz?timeout=5', '/metrics?name[]=x', '/openapi.json?v=2', '/docs?url=x', '/docs/api.md?raw']
      .map((url) => ({ ...get('open', url, 400), code: 'NORM_ERR_FIELD_UNKNOWN' })),
    get('guarded', '/healthz', 200),
    get('guarded', '/openapi.json', 200),
    get('draining', '/readyz', 503),
    get('draining', '/healthz', 200),
    // routes the document does not have
    { ...get('open', '/v1/rmsnorm', 404), code: 'NORM_ERR_NOT_FOUND' },
    { ...post('open', '/v1/softmax', 'no such operation', json(single), 404), code: 'NORM_ERR_NOT_FOUND' },
    { ...get('open', '/nowhere', 404), code: 'NORM_ERR_NOT_FOUND' },
    { name: 'DELETE /healthz (open)', app: 'open', method: 'DELETE', url: '/healthz', headers: {}, status: 404, code: 'NORM_ERR_NOT_FOUND' },
    { ...get('guarded', '/v1/nowhere', 401), code: 'NORM_ERR_UNAUTHORIZED' },
    ...oipProbes(AUTH),
  ];
}
