// the rows of one tensor computed inline, or split across worker threads, give the same bytes.
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, okBody, postMsgpack } from '../helpers/http.js';
import { expectClose, reference, type Op } from '../helpers/reference.js';
import { bytesOf, randomValues, valuesFromBytes, type Dtype } from '../helpers/tensors.js';

const INLINE = { inlineMaxElements: 1e9 };
const SPLIT = { inlineMaxElements: 0, minTaskElements: 1 };

let apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

async function outputBytes(config: Record<string, number>, url: string, body: unknown): Promise<Record<string, Buffer>> {
  const app = await createApp(config);
  apps.push(app);
  const result = okBody(await postMsgpack(app, url, body));
  return Object.fromEntries(Object.entries(result).map(([name, t]) => [name, Buffer.from((t as { data: Uint8Array }).data)]));
}

interface Split { op: Op; dtype: Dtype; rows: number; n: number; workers: number; outputDtype?: Dtype; extra?: Record<string, unknown> }

const cases: Split[] = [
  { op: 'rmsnorm', dtype: 'float32', rows: 512, n: 1024, workers: 2 },
  { op: 'layernorm', dtype: 'float32', rows: 512, n: 1024, workers: 2, extra: { return_stats: true } },
  { op: 'layernorm', dtype: 'float16', rows: 509, n: 1024, workers: 3, outputDtype: 'bfloat16', extra: { return_stats: true } },
  { op: 'rmsnorm', dtype: 'float64', rows: 257, n: 512, workers: 4, extra: { return_stats: true } },
  { op: 'rmsnorm', dtype: 'bfloat16', rows: 511, n: 768, workers: 2, extra: { return_stats: true } },
];

describe('inline and split across workers agree bitwise', () => {
  it.each(cases)('$op $rows×$n $dtype on $workers workers', async ({ op, dtype, rows, n, workers, outputDtype, extra }) => {
    const values = randomValues(301, rows * n, 3, 0.5);
    const residual = randomValues(302, rows * n, 1);
    const weight = randomValues(303, n, 0.5, 1);
    const body = {
      input: { dtype, shape: [rows, n], data: bytesOf(dtype, values) },
      residual: { dtype, shape: [rows, n], data: bytesOf(dtype, residual) },
      weight: { dtype: 'float32', shape: [n], data: bytesOf('float32', weight) },
      ...(outputDtype ? { output_dtype: outputDtype } : {}),
      ...extra,
    };
    const url = `/v1/${op}`;
    const [inline, split] = await Promise.all([outputBytes({ ...INLINE, workers }, url, body), outputBytes({ ...SPLIT, workers }, url, body)]);
    expect(Object.keys(split).sort()).toEqual(Object.keys(inline).sort());
    for (const name of Object.keys(inline)) {
      expect(split[name].byteLength, name).toBe(inline[name].byteLength);
      expect(split[name].equals(inline[name]), `${name} differs between inline and split`).toBe(true);
    }

    // and both right: spot-check the first, a middle and the last row against the reference
    const out = outputDtype ?? dtype;
    const itemsize = out === 'float64' ? 8 : out === 'float32' ? 4 : 2;
    const inputItemsize = dtype === 'float64' ? 8 : dtype === 'float32' ? 4 : 2;
    for (const row of [0, rows >> 1, rows - 1]) {
      const slice = (xs: number[]) => xs.slice(row * n, (row + 1) * n);
      const h = valuesFromBytes(dtype, inline.residual.subarray(row * n * inputItemsize, (row + 1) * n * inputItemsize));
      const ref = reference({ op, dtype, shape: [1, n], values: h, weight: { dtype: 'float32', values: weight }, outputDtype: out });
      expectClose(valuesFromBytes(out, inline.output.subarray(row * n * itemsize, (row + 1) * n * itemsize)), ref.output, out, ref.largeMean);
      // h itself is input + residual rounded to the input dtype
      const exact = reference({ op, dtype, shape: [1, n], values: slice(values), residual: slice(residual) });
      expect(h).toEqual(exact.residual);
    }
  });
});
