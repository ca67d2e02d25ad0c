// the /v2 requests of the contract corpus (OIP.md): every route of the Open Inference Protocol and every
// answer the document lists for it; JSON and binary bodies, sent as Triton's Python client sends them
// (no Content-Type) and with one; error answers with their whole {"error"} body.
import { binaryBody, binaryInput, jsonInput, X } from '../v2/oip.js';
import { OVERSIZED_HEADERS, type Probe } from './corpus.js';

type Headers = Record<string, string>;

const MODELS = ['rmsnorm', 'layernorm', 'batchnorm', 'groupnorm'];
const UNAUTHORIZED = 'Authorization: a valid "Bearer <key>" is required';
const UNKNOWN_MODEL = 'model softmax: unknown; the models are rmsnorm, layernorm, batchnorm, groupnorm';
const JSON_TYPE = { 'content-type': 'application/json' };
const OCTET_TYPE = { 'content-type': 'application/octet-stream' };

const get = (app: Probe['app'], url: string, status: number, error?: string, headers: Headers = {}): Probe =>
  ({ name: `GET ${url} (${app})`, app, method: 'GET', url, headers, status, ...(error === undefined ? {} : { error }) });

/** a POST whose body is JSON text (objects are stringified) or a binary body with its header length */
function post(app: Probe['app'], url: string, name: string, body: unknown, status: number, headers: Headers = {}, error?: string): Probe {
  const framed = typeof body === 'object' && body !== null && 'headerLength' in body ? body as { payload: Buffer; headerLength: number } : undefined;
  return {
    name: `${url} ${name}`,
    app,
    method: 'POST',
    url,
    headers: framed ? { 'inference-header-content-length': String(framed.headerLength), ...headers } : headers,
    payload: framed ? framed.payload : typeof body === 'string' ? body : JSON.stringify(body),
    status,
    ...(error === undefined ? {} : { error }),
  };
}

const x2x4 = [1, 2, 3, 4, -5, 6, -7, 8];

/** the answers of one infer route (`prefix` with or without /versions/1) */
function inferProbes(prefix: string, auth: Headers): Probe[] {
  const url = (model: string) => `${prefix.replace('{model}', model)}/infer`;
  const rms = url('rmsnorm');
  const p = (name: string, body: unknown, status: number, headers: Headers = {}, error?: string) => post('open', rms, name, body, status, headers, error);
  const g = (name: string, body: unknown, status: number, headers: Headers, error?: string) =>
    post(headers['x-test-fault'] === 'hold' ? 'blocking' : 'guarded', rms, name, body, status, { ...auth, ...headers }, error);
  const big = { inputs: [jsonInput('input', 'FP32', [1024], new Array(1024).fill(1.5))] };
  return [
    p('JSON, Content-Type application/json', { id: 'a', inputs: X }, 200, JSON_TYPE),
    p('JSON, no Content-Type (the Python client)', { inputs: X, parameters: { eps: 0, return_stats: true } }, 200),
    p('bare NaN and Infinity tokens in and out', '{"inputs":[{"name":"input","datatype":"FP64","shape":[2,2],"data":[1,NaN,Infinity,2]}],"parameters":{"return_stats":true}}', 200),
    p('JSON, axis 0 with stats', { inputs: X, parameters: { axis: 0, return_stats: true } }, 200),
    p('rank 1 with stats, FP16 out', { inputs: [jsonInput('input', 'FP32', [4], [1, 2, 3, 4])], parameters: { return_stats: true, output_dtype: 'FP16' } }, 200),
    p('zero rows [0, 4]', { inputs: [jsonInput('input', 'FP32', [0, 4], [])] }, 200),
    p('an empty outputs list', { inputs: X, outputs: [] }, 200),
    p('binary inputs FP32 and BF16, JSON answer', binaryBody({}, [binaryInput('input', 'FP32', [2, 4], x2x4), binaryInput('weight', 'BF16', [4], [1, 2, 1, 2])]), 200),
    p('binary input, binary_data_output: the answer binary', binaryBody({ parameters: { binary_data_output: true } }, [binaryInput('input', 'FP16', [2, 4], x2x4)]), 200, OCTET_TYPE),
    p('output binary, rstd in JSON', binaryBody({ parameters: { return_stats: true }, outputs: [{ name: 'output', parameters: { binary_data: true } }, { name: 'rstd' }] }, [
      binaryInput('input', 'FP64', [2, 4], x2x4), jsonInput('residual', 'FP64', [2, 4], x2x4),
    ]), 200),
    post('open', url('layernorm'), 'stats binary, FP64 out', { inputs: X, parameters: { return_stats: true, output_dtype: 'FP64' }, outputs: [{ name: 'mean', parameters: { binary_data: true } }, { name: 'output' }] }, 200),
    post('open', url('batchnorm'), 'training with running statistics, all binary', binaryBody({ parameters: { training: true, binary_data_output: true } }, [
      binaryInput('input', 'FP32', [4, 2], x2x4), binaryInput('running_mean', 'FP32', [2], [0, 0]), binaryInput('running_var', 'FP32', [2], [1, 1]),
    ]), 200),
    post('open', url('groupnorm'), 'nested data, num_groups 2', { inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 4, 2], data: [[[1, 2], [3, 4], [5, 6], [7, 8]]] }], parameters: { num_groups: 2 } }, 200, JSON_TYPE),
    p('a misspelled epsilon', { inputs: X, parameters: { epsilon: 0 } }, 400, {}, 'parameters.epsilon: unknown field'),
    p('datatype INT8', { inputs: [{ ...X[0], datatype: 'INT8' }] }, 400, JSON_TYPE, 'input datatype INT8: must be one of FP32, FP64, FP16, BF16'),
    p('malformed JSON', '{"inputs":', 400),
    p('an output it does not produce', { inputs: X, outputs: [{ name: 'mean' }] }, 400, {}, 'outputs[0].name: "mean" is not an output of this model (output, residual, rstd)'),
    p('Inference-Header-Content-Length "abc"', { inputs: X }, 400, { 'inference-header-content-length': 'abc' },
      `Inference-Header-Content-Length: "abc" must be a whole number from 1 to the body's ${JSON.stringify({ inputs: X }).length} bytes`),
    p('bad X-Request-Timeout-Ms', { inputs: X }, 400, { 'x-request-timeout-ms': '1.5' }, 'X-Request-Timeout-Ms: "1.5" must be a whole number of milliseconds ≥ 1'),
    post('open', url('softmax'), 'an unknown model', { inputs: X }, 404, {}, UNKNOWN_MODEL),
    p('Content-Encoding gzip', { inputs: X }, 415, { 'content-encoding': 'gzip' }, 'Content-Encoding: gzip is not supported; send the body as it is (identity)'),
    g('with a valid key', { inputs: X }, 200, {}),
    post('guarded', rms, 'without Authorization', { inputs: X }, 401, {}, UNAUTHORIZED),
    g('JSON body over the 4 KiB limit', big, 413, JSON_TYPE, 'body: larger than the byte limit'),
    g('binary body over the 4 KiB limit', binaryBody({}, [binaryInput('input', 'FP32', [1024], new Array(1024).fill(1))]), 413, {}, 'body: larger than the byte limit'),
    // chunked, as a client streaming its body sends it: with no Content-Type (not consulted) and no
    // length, fastify would take the request for one without a body
    { ...g('a body that stalls', { inputs: X }, 408, { 'transfer-encoding': 'chunked' }, 'body: no bytes arrived for 50 ms'), stalls: true },
    g('a worker that crashes', { inputs: X }, 500, { 'x-test-fault': 'crash-worker' }),
    g('held work, parameters.timeout 20 ms', { inputs: X, parameters: { timeout: 20_000 } }, 504, { 'x-test-fault': 'hold' }, 'the request deadline passed before its result was ready'),
    g('held work, X-Request-Timeout-Ms 20', { inputs: X }, 504, { 'x-test-fault': 'hold', 'x-request-timeout-ms': '20' }),
    post('draining', rms, 'while draining', { inputs: X }, 503, {}, 'the server is shutting down; retry on another instance'),
    // the HTTP parser answers before any route: the service's form, not OIP's
    { ...p('headers over 16 KiB', { inputs: X }, 431, OVERSIZED_HEADERS), code: 'NORM_ERR_HEADERS_TOO_LARGE', overHttp: true },
  ];
}

/** metadata and readiness of one model path (`prefix` with or without /versions/1) */
function modelProbes(prefix: string, auth: Headers): Probe[] {
  const at = (model: string, rest = '') => `${prefix.replace('{model}', model)}${rest}`;
  return [
    ...MODELS.flatMap((model) => [get('open', at(model), 200), get('open', at(model, '/ready'), 200)]),
    get('open', at('softmax'), 404, UNKNOWN_MODEL),
    get('open', at('softmax', '/ready'), 404, UNKNOWN_MODEL),
    get('guarded', at('rmsnorm'), 200, undefined, auth),
    get('guarded', at('rmsnorm'), 401, UNAUTHORIZED),
    get('guarded', at('rmsnorm', '/ready'), 401, UNAUTHORIZED),
    get('draining', at('groupnorm', '/ready'), 503),
  ];
}

export function oipProbes(auth: Headers): Probe[] {
  return [
    get('open', '/v2', 200),
    get('guarded', '/v2', 200, undefined, auth),
    get('guarded', '/v2', 401, UNAUTHORIZED),
    get('open', '/v2/health/live', 200),
    get('guarded', '/v2/health/live', 200),
    get('draining', '/v2/health/live', 200),
    get('open', '/v2/health/ready', 200),
    get('guarded', '/v2/health/ready', 200),
    get('draining', '/v2/health/ready', 503),
    get('open', '/v2/health/live?verbose=1', 400, '?verbose: unknown field'),
    get('open', '/v2/health/ready?timeout=5', 400, '?timeout: unknown field'),
    ...modelProbes('/v2/models/{model}', auth),
    ...modelProbes('/v2/models/{model}/versions/1', auth),
    get('open', '/v2/models/rmsnorm/versions/2', 404, 'model rmsnorm version 2: unknown; the one version is 1'),
    get('open', '/v2/models/layernorm/versions/latest/ready', 404, 'model layernorm version latest: unknown; the one version is 1'),
    post('open', '/v2/models/rmsnorm/versions/2/infer', 'an unknown version', { inputs: X }, 404, {}, 'model rmsnorm version 2: unknown; the one version is 1'),
    ...inferProbes('/v2/models/{model}', auth),
    ...inferProbes('/v2/models/{model}/versions/1', auth),
    // paths under /v2 the document does not have: {"error"} bodies too
    get('open', '/v2/nowhere', 404, 'GET /v2/nowhere: no such route'),
    get('open', '/v2/models/rmsnorm/infer', 404, 'GET /v2/models/rmsnorm/infer: no such route'),
    get('guarded', '/v2/nowhere', 401, UNAUTHORIZED),
  ];
}
