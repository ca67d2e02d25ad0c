// through a real socket: the TypeScript client (src/client.ts) against a listening app.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, NormServiceError } from '../../src/client.js';
import { createApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { float16FromBits, randomValues } from '../helpers/tensors.js';
import { referenceBatchnorm, referenceGroupnorm } from '../reference/channel-norm-reference.js';

let app: FastifyInstance | null = null;
afterEach(async () => {
  await app?.close();
  app = null;
});

async function listen(config: Parameters<typeof createApp>[0] = {}): Promise<string> {
  app = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe('the TypeScript client', () => {
  it('rmsnorm 4x16 float32 with weight and return_stats', async () => {
    const client = createClient({ baseUrl: await listen() });
    const values = randomValues(401, 64, 2);
    const weight = randomValues(402, 16, 0.5, 1);
    const result = await client.rmsnorm(
      { dtype: 'float32', shape: [4, 16], data: new Float32Array(values) },
      { weight: { dtype: 'float32', shape: [16], data: new Float32Array(weight) }, returnStats: true, eps: 1e-5 },
    );
    const ref = reference({ op: 'rmsnorm', dtype: 'float32', shape: [4, 16], values, weight: { dtype: 'float32', values: weight }, eps: 1e-5 });
    expect(result.output.dtype).toBe('float32');
    expect(result.output.shape).toEqual([4, 16]);
    expect(result.output.data).toBeInstanceOf(Float32Array);
    expectClose([...result.output.data], ref.output, 'float32');
    expect(result.rstd?.shape).toEqual([4]);
    expectClose([...result.rstd!.data], ref.rstd, 'float32');
    expect(result.mean).toBeUndefined();
  });

  it('layernorm 2x8 float64 with residual, bias, eps outside and output_dtype float16', async () => {
    const client = createClient({ baseUrl: await listen() });
    const values = randomValues(403, 16, 2, 10);
    const residual = randomValues(404, 16, 1);
    const bias = randomValues(405, 8, 0.1);
    const result = await client.layernorm(
      { dtype: 'float64', shape: [2, 8], data: new Float64Array(values) },
      {
        residual: { dtype: 'float64', shape: [2, 8], data: new Float64Array(residual) },
        bias: { dtype: 'float64', shape: [8], data: new Float64Array(bias) },
        epsPlacement: 'outside', eps: 0.01, weightOffset: 0.5, outputDtype: 'float16', returnStats: true,
      },
    );
    const ref = reference({
      op: 'layernorm', dtype: 'float64', shape: [2, 8], values, residual, bias: { dtype: 'float64', values: bias },
      epsPlacement: 'outside', eps: 0.01, weightOffset: 0.5, outputDtype: 'float16',
    });
    expect(result.output.dtype).toBe('float16');
    expect(result.output.data).toBeInstanceOf(Uint16Array);
    expectClose([...(result.output.data as Uint16Array)].map(float16FromBits), ref.output, 'float16');
    expect([...result.residual!.data]).toEqual(ref.residual);
    expectClose([...result.mean!.data], ref.mean, 'float32');
  });

  it('batch of rmsnorm and layernorm, results in order', async () => {
    const client = createClient({ baseUrl: await listen() });
    const a = randomValues(406, 8, 2);
    const b = randomValues(407, 12, 2);
    const results = await client.batch([
      { op: 'rmsnorm', input: { dtype: 'float32', shape: [2, 4], data: new Float32Array(a) } },
      { op: 'layernorm', input: { dtype: 'float32', shape: [2, 3, 2], data: new Float32Array(b) }, axis: 1, returnStats: true },
    ]);
    expect(results).toHaveLength(2);
    expectClose([...results[0].output.data], reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values: a }).output, 'float32');
    const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [2, 3, 2], values: b, axis: 1 });
    expectClose([...results[1].output.data], ref.output, 'float32');
    expect(results[1].mean?.shape).toEqual([2]);
  });

  it('batchnorm 6x3 float64 channels-last training step: running statistics come back updated', async () => {
    const client = createClient({ baseUrl: await listen() });
    const values = randomValues(408, 18, 3, 1);
    const f64 = (data: number[]) => ({ dtype: 'float64' as const, shape: [data.length], data: new Float64Array(data) });
    const result = await client.batchnorm(
      { dtype: 'float64', shape: [6, 3], data: new Float64Array(values) },
      { channelAxis: -1, training: true, runningMean: f64([0, 1, 2]), runningVar: f64([1, 2, 3]), momentum: 0.25, returnStats: true },
    );
    const ref = referenceBatchnorm({
      x: values, shape: [6, 3], channelAxis: -1, training: true, runningMean: [0, 1, 2], runningVar: [1, 2, 3],
      momentum: 0.25, weight: null, bias: null, eps: 1e-5,
    });
    expectClose([...result.output.data], ref.output, 'float64');
    expectClose([...result.runningMean!.data], ref.runningMean!, 'float64');
    expectClose([...result.runningVar!.data], ref.runningVar!, 'float64');
    expectClose([...result.rstd!.data], ref.rstd, 'float32');
  });

  it('groupnorm 2x4x3 float32 in 2 groups, and rmsnorm 2x10 with partial 0.3 (k = 3)', async () => {
    const client = createClient({ baseUrl: await listen() });
    const values = randomValues(409, 24, 2, 3);
    const group = await client.groupnorm({ dtype: 'float32', shape: [2, 4, 3], data: new Float32Array(values) }, { numGroups: 2, returnStats: true });
    const ref = referenceGroupnorm({ x: [...new Float32Array(values)], shape: [2, 4, 3], numGroups: 2, weight: null, bias: null, eps: 1e-5 });
    expectClose([...group.output.data], ref.output, 'float32');
    expect(group.mean?.shape).toEqual([2, 2]);
    const rows = randomValues(410, 20, 2);
    const partial = await client.rmsnorm({ dtype: 'float64', shape: [2, 10], data: new Float64Array(rows) }, { partial: 0.3 });
    expectClose([...partial.output.data], reference({ op: 'rmsnorm', dtype: 'float64', shape: [2, 10], values: rows, partial: 0.3 }).output, 'float64');
  });

  it('a bad request throws NormServiceError with the status, code and message', async () => {
    const client = createClient({ baseUrl: await listen() });
    const error = await client
      .rmsnorm({ dtype: 'float32', shape: [2, 4], data: new Float32Array(8) }, { weight: { dtype: 'float32', shape: [3], data: new Float32Array(3) } })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(NormServiceError);
    expect(error).toMatchObject({ statusCode: 400, code: 'NORM_ERR_SHAPE_MISMATCH', message: 'weight.shape: [3] must be [4]' });
  });

  it('a batch item error names the item', async () => {
    const client = createClient({ baseUrl: await listen() });
    const error = await client
      .batch([
        { op: 'rmsnorm', input: { dtype: 'float32', shape: [4], data: new Float32Array(4) } },
        { op: 'layernorm', input: { dtype: 'float32', shape: [4], data: new Float32Array(4) }, axis: 1 },
      ])
      .catch((err: unknown) => err);
    expect(error).toMatchObject({ statusCode: 400, code: 'NORM_ERR_AXIS_RANGE', message: 'requests[1].axis: 1 is out of range for an input of rank 1 (needs -1 ≤ axis < 1)' });
  });
});
