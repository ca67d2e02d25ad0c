// long JSON answers are written by the workers (the event loop would otherwise hold for the whole
// text) and come out byte for byte as JSON.stringify / OIP's join would write the same values:
// checked against the msgpack (or binary) answer to the same request, an encoder the text path never touches.
import type { FastifyInstance } from 'fastify';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { pack, unpack, useFreshApp } from '../helpers/http.js';
import { bytesOf, randomValues, valuesFromBytes, type Dtype } from '../helpers/tensors.js';
import { binaryBody, binaryInput, infer } from '../v2/oip.js';

const ctx = useFreshApp({ workers: 2 }, 'file');

async function tasksDone(app: FastifyInstance): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(/^norm_tasks_total\{outcome="ok"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

/** rows×n values with a NaN, an Infinity and a -Infinity in the input: their rows come out NaN */
function inputValues(rows: number, n: number): number[] {
  const values = randomValues(41, rows * n, 2, 0.1);
  values[3 * n + 5] = NaN;
  values[7 * n] = Infinity;
  values[(rows - 1) * n + 1] = -Infinity;
  return values;
}

/** the answer to the same msgpack request twice: Accept JSON, and msgpack; and the pool tasks the JSON one ran beyond the msgpack one */
async function bothAnswers(url: string, body: unknown): Promise<{ json: string; msgpack: any; contentLength: number; extraTasks: number }> {
  const post = (accept: string) => ctx.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/msgpack', accept }, payload: pack(body) });
  const t0 = await tasksDone(ctx.app);
  const msgpackRes = await post('application/msgpack');
  const t1 = await tasksDone(ctx.app);
  const jsonRes = await post('application/json');
  const t2 = await tasksDone(ctx.app);
  expect(msgpackRes.statusCode, msgpackRes.body.slice(0, 300)).toBe(200);
  expect(jsonRes.statusCode, jsonRes.body.slice(0, 300)).toBe(200);
  expect(jsonRes.headers['content-type']).toMatch(/^application\/json/);
  return { json: jsonRes.body, msgpack: unpack(msgpackRes.rawPayload), contentLength: Number(jsonRes.headers['content-length']), extraTasks: (t2 - t1) - (t1 - t0) };
}

/** JSON.stringify of a /v1 answer's tensors, non-finite values as the strings the contract gives */
function v1Json(tensors: Record<string, { dtype: Dtype; shape: number[]; data: Uint8Array }>): string {
  const json = (v: number) => (Number.isFinite(v) ? v : String(v));
  return JSON.stringify(Object.fromEntries(Object.entries(tensors).map(([name, t]) => [name, { dtype: t.dtype, shape: t.shape, data: valuesFromBytes(t.dtype, t.data).map(json) }])));
}

describe('/v1 JSON answers too long to write inline', () => {
  it.each([
    { op: 'rmsnorm', dtype: 'float32' as Dtype, extra: {} },
    { op: 'layernorm', dtype: 'float32' as Dtype, extra: { return_stats: true } },
    { op: 'rmsnorm', dtype: 'float64' as Dtype, extra: {} },
    { op: 'layernorm', dtype: 'bfloat16' as Dtype, extra: { output_dtype: 'float16', return_stats: true } },
  ])('$op $dtype $extra: written by the workers, exactly the text JSON.stringify writes', async ({ op, dtype, extra }) => {
    const rows = 64;
    const n = 2048;
    const body = { input: { dtype, shape: [rows, n], data: bytesOf(dtype, inputValues(rows, n)) }, ...extra };
    const { json, msgpack, contentLength, extraTasks } = await bothAnswers(`/v1/${op}`, body);
    expect(json).toBe(v1Json(msgpack));
    expect(contentLength).toBe(Buffer.byteLength(json));
    expect(json).toContain('"NaN"');
    expect(extraTasks, 'pool tasks that wrote the text').toBeGreaterThanOrEqual(1);
  });

  it('a batch: {results: […]} with a long item beside short ones', async () => {
    const items = [
      { op: 'rmsnorm', input: { dtype: 'float32', shape: [2, 8], data: bytesOf('float32', randomValues(5, 16)) } },
      { op: 'layernorm', input: { dtype: 'float32', shape: [64, 1024], data: bytesOf('float32', inputValues(64, 1024)) }, return_stats: true },
      { op: 'rmsnorm', input: { dtype: 'float16', shape: [1, 4], data: bytesOf('float16', [1, 2, 3, 4]) } },
    ];
    const { json, msgpack, extraTasks } = await bothAnswers('/v1/batch', { requests: items });
    expect(json).toBe(`{"results":[${msgpack.results.map(v1Json).join(',')}]}`);
    expect(extraTasks).toBeGreaterThanOrEqual(1);
  });
});

describe('/v2 JSON outputs too long to write inline', () => {
  const rows = 64;
  const n = 2048;
  const values = inputValues(rows, n);

  it('data as OIP writes it (bare NaN tokens), beside a binary output; the header length counts the JSON', async () => {
    const ask = (outputs: unknown[]) => {
      const body = binaryBody({ parameters: { return_stats: true }, outputs }, [binaryInput('input', 'FP32', [rows, n], values)]);
      return infer(ctx.app, 'layernorm', body.payload, { 'inference-header-content-length': String(body.headerLength) });
    };
    const binary = await ask([{ name: 'output', parameters: { binary_data: true } }]);
    expect(binary.statusCode, binary.body.slice(0, 300)).toBe(200);
    const expectedValues = valuesFromBytes('float32', binary.rawPayload.subarray(Number(binary.headers['inference-header-content-length'])));
    expect(expectedValues).toHaveLength(rows * n);

    const mixed = await ask([{ name: 'output', parameters: { binary_data: false } }, { name: 'rstd', parameters: { binary_data: true } }]);
    expect(mixed.statusCode, mixed.body.slice(0, 300)).toBe(200);
    const header = Number(mixed.headers['inference-header-content-length']);
    const text = mixed.rawPayload.subarray(0, header).toString('latin1');
    const rstdBytes = mixed.rawPayload.subarray(header);
    expect(rstdBytes.length).toBe(rows * 4);
    expect(text).toBe(`{"model_name":"layernorm","model_version":"1","outputs":[{"name":"output","datatype":"FP32","shape":[${rows},${n}],"data":[${expectedValues.join(',')}]},`
      + `{"name":"rstd","datatype":"FP32","shape":[${rows}],"parameters":{"binary_data_size":${rows * 4}}}]}`);
    expect(Number(mixed.headers['content-length'])).toBe(mixed.rawPayload.length);
  });
});

describe('an answer cut short', () => {
  it('a client that leaves while a long JSON answer is being sent: its slabs are given back', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    const inUse = async () => Number(/^norm_tensor_memory_in_use_bytes (\d+)/m.exec((await ctx.app.inject({ method: 'GET', url: '/metrics' })).body)![1]);
    const body = pack({ input: { dtype: 'float32', shape: [256, 4096], data: bytesOf('float32', randomValues(8, 256 * 4096)) } });
    // ~20 MB of text: far more than the socket buffers, so most of it is still to send when the client leaves
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`POST /v1/rmsnorm HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\nAccept: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
        socket.write(body);
      });
      socket.once('data', () => {
        socket.destroy();
        resolve();
      });
      socket.on('error', reject);
    });
    await vi.waitFor(async () => expect(await inUse()).toBe(0), { timeout: 30_000, interval: 20 });
  });
});
