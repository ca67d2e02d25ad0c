// long JSON bodies are parsed on a worker and their long data lists cross back as float64 arrays:
// the answer is the one the same values get as msgpack bytes, the errors those of a body parsed here.
import { describe, expect, it } from 'vitest';
import { expectError, pack, postJson, unpack, useFreshApp } from '../helpers/http.js';
import { bytesOf, randomValues, type Dtype } from '../helpers/tensors.js';
import { infer } from '../v2/oip.js';

const ctx = useFreshApp({ workers: 2 }, 'file');
const NOT_JSON = "body: Body is not valid JSON but content-type is set to 'application/json'";

const ROWS = 32;
const N = 2048; // 65,536 numbers: about 1.3 MB of JSON, parsed on a worker

/** the JSON for a value: numbers as they are, non-finite ones as the contract's strings */
const jsonValue = (v: number) => (Number.isFinite(v) ? v : String(v));

function values(seed: number): number[] {
  const v = randomValues(seed, ROWS * N, 2, 0.1).map((x) => Math.fround(x));
  v[N + 3] = NaN;
  v[5 * N] = Infinity;
  return v;
}

/** the output bytes of the same request sent as msgpack (its tensors as float32 bytes) */
async function msgpackOutput(url: string, body: Record<string, unknown>): Promise<Buffer> {
  const res = await ctx.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/msgpack', accept: 'application/msgpack' }, payload: pack(body) });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return Buffer.from(unpack(res.rawPayload).output.data);
}

function parsedOnWorkers(): number {
  return (ctx.app as unknown as { engine: { pool: { piscina: { completed: number } } } }).engine.pool.piscina.completed;
}

describe('/v1 long JSON bodies', () => {
  it.each<{ dtype: Dtype; extra: Record<string, unknown> }>([
    { dtype: 'float32', extra: {} },
    { dtype: 'float64', extra: { weight: { dtype: 'float64', shape: [N], data: randomValues(9, N, 0.5, 1) } } },
    { dtype: 'bfloat16', extra: { output_dtype: 'float32' } },
  ])('$dtype: the answer of the same values sent as msgpack bytes, the body parsed on a worker', async ({ dtype, extra }) => {
    const x = values(3);
    const before = parsedOnWorkers();
    const res = await ctx.app.inject({
      method: 'POST', url: '/v1/rmsnorm', headers: { 'content-type': 'application/json', accept: 'application/msgpack' },
      payload: JSON.stringify({ input: { dtype, shape: [ROWS, N], data: x.map(jsonValue) }, ...extra }),
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(parsedOnWorkers() - before, 'pool tasks (the parse among them)').toBeGreaterThanOrEqual(1);
    const fromJson = Buffer.from(unpack(res.rawPayload).output.data);
    const weight = extra.weight as { data: number[] } | undefined;
    const asBytes = {
      input: { dtype, shape: [ROWS, N], data: bytesOf(dtype, x) },
      ...extra,
      ...(weight ? { weight: { dtype: 'float64', shape: [N], data: bytesOf('float64', weight.data) } } : {}),
    };
    expect(fromJson.equals(await msgpackOutput('/v1/rmsnorm', asBytes))).toBe(true);
  });

  it('a long list with one bad item: the 400 names it, as for a short body', async () => {
    const data: unknown[] = values(4).map(jsonValue);
    data[60_000] = 'nan';
    const res = await postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [ROWS, N], data } });
    expectError(res, 400, 'NORM_ERR_DATA_INVALID', 'input.data[60000]: must be a number or one of "NaN", "Infinity", "-Infinity"');
  });

  it('1e400 in a long list overflows: 400 naming the item', async () => {
    const text = JSON.stringify({ input: { shape: [ROWS, N], data: values(5).map(jsonValue) } }).replace(/"data":\[([^,]*),/, '"data":[$1,1e400,').replace(/,[^,\]]*\]/, ']');
    const res = await postJson(ctx.app, '/v1/rmsnorm', text);
    expectError(res, 400, 'NORM_ERR_DATA_INVALID', 'input.data[1]: must be a number or one of "NaN", "Infinity", "-Infinity"');
  });

  it('not JSON, or poisoned: the errors of a short body', async () => {
    const long = JSON.stringify({ input: { shape: [ROWS, N], data: values(6) } });
    expectError(await postJson(ctx.app, '/v1/rmsnorm', long.slice(0, -3)), 400, 'NORM_ERR_BODY_MALFORMED', NOT_JSON);
    expectError(await postJson(ctx.app, '/v1/rmsnorm', '{"input":'), 400, 'NORM_ERR_BODY_MALFORMED', NOT_JSON);
    expectError(await postJson(ctx.app, '/v1/rmsnorm', `{"__proto__":{"x":1},${long.slice(1)}`), 400, 'NORM_ERR_BODY_MALFORMED', NOT_JSON);
    expectError(await postJson(ctx.app, '/v1/rmsnorm', '{"__proto__":{"x":1},"input":{"shape":[1],"data":[1]}}'), 400, 'NORM_ERR_BODY_MALFORMED', NOT_JSON);
  });
});

describe('/v2 long JSON bodies', () => {
  it('bare NaN tokens and nested data: the answer of the same values as binary', async () => {
    const x = values(7);
    const flatText = `{"inputs":[{"name":"input","datatype":"FP32","shape":[${ROWS},${N}],"data":[${x.join(',')}]}],"outputs":[{"name":"output","parameters":{"binary_data":true}}]}`;
    const rows = Array.from({ length: ROWS }, (_, r) => `[${x.slice(r * N, (r + 1) * N).join(',')}]`);
    const nestedText = flatText.replace(/"data":\[[^\]]*\]/, `"data":[${rows.join(',')}]`);
    const flat = await infer(ctx.app, 'rmsnorm', flatText, { 'content-type': 'application/json' });
    const nested = await infer(ctx.app, 'rmsnorm', nestedText, { 'content-type': 'application/json' });
    expect(flat.statusCode, flat.body.slice(0, 300)).toBe(200);
    expect(nested.statusCode, nested.body.slice(0, 300)).toBe(200);
    const bytes = (res: typeof flat) => res.rawPayload.subarray(Number(res.headers['inference-header-content-length']));
    const expected = await msgpackOutput('/v1/rmsnorm', { input: { dtype: 'float32', shape: [ROWS, N], data: bytesOf('float32', x) } });
    expect(bytes(flat).equals(expected)).toBe(true);
    expect(bytes(nested).equals(expected)).toBe(true);
  });

  it('a long body that is not JSON: 400 as for a short one', async () => {
    const res = await infer(ctx.app, 'rmsnorm', `{"inputs":[{"name":"input","datatype":"FP32","shape":[${ROWS},${N}],"data":[${values(8).join(',')}]}`, { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^body: /);
  });
});
