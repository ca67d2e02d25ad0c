// the common small request's own path (src/jobs/lone-inline.ts): a lone row-wise request without
// weight, bias, residual or statistics, computed inline and answered straight from memory. Its answer
// must be byte for byte what the general path gives (here: the same request on the workers, the
// inline limit at 0, where the lone path never runs), right against the float64 reference, and it
// must count the same metrics.
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, okBody, postMsgpack } from '../helpers/http.js';
import { expectClose } from '../helpers/reference.js';
import { randomValues } from '../helpers/tensors.js';
import { referenceLayernorm, referenceRmsnorm } from '../reference/norm-reference.js';
import { tensorBytes, wire } from './helpers.js';

let lone: FastifyInstance;
let pooled: FastifyInstance;
beforeAll(async () => {
  [lone, pooled] = await Promise.all([createApp({ workers: 2 }), createApp({ workers: 2, inlineMaxElements: 0, minTaskElements: 1 })]);
});
afterAll(async () => {
  await Promise.all([lone.close(), pooled.close()]);
});

const metric = async (app: FastifyInstance, pattern: RegExp) => Number(pattern.exec((await app.inject({ url: '/metrics' })).body)?.[1] ?? 0);

describe('a lone small row request', () => {
  it('answers byte for byte as the general path on the workers, and right (fast-check)', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom('rmsnorm' as const, 'layernorm' as const), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 700 }),
      fc.constantFrom(1e-6, 1e-5, 0.5), fc.constantFrom('inside' as const, 'outside' as const), fc.constantFrom(0, 1, -0.5), fc.integer({ min: 1, max: 1e6 }),
      async (op, rows, n, eps, placement, weightOffset, seed) => {
        const values = randomValues(seed, rows * n, 3, 0.25);
        const body = { input: wire('msgpack', 'float32', [rows, n], values), eps, eps_placement: placement, weight_offset: weightOffset };
        const [a, b] = await Promise.all([lone, pooled].map(async (app) => okBody(await postMsgpack(app, `/v1/${op}`, body)) as Record<string, unknown>));
        expect(tensorBytes(a).output.equals(tensorBytes(b).output)).toBe(true);
        const got = Array.from(new Float32Array(new Uint8Array(tensorBytes(a).output).buffer));
        const f32 = Array.from(new Float32Array(values));
        const scale = new Array<number>(n).fill(weightOffset + 1);
        const reference = (row: number[]) => (op === 'rmsnorm' ? referenceRmsnorm : referenceLayernorm)(row, { eps, epsOutside: placement === 'outside', scale, bias: null }).y;
        const expected = Array.from({ length: rows }, (_, r) => reference(f32.slice(r * n, (r + 1) * n))).flat();
        expectClose(got, expected, 'float32');
      },
    ), { numRuns: 60 });
  });

  it('counts what the general path counts: a task, its rows, elements and bytes', async () => {
    const count = () => Promise.all([
      metric(lone, /^norm_tasks_total\{outcome="ok"\} (\d+)/m),
      metric(lone, /^norm_rows_total\{op="rmsnorm",dtype="float32"\} (\d+)/m),
      metric(lone, /^norm_elements_total\{op="rmsnorm",dtype="float32"\} (\d+)/m),
      metric(lone, /^norm_bytes_total\{op="rmsnorm",dtype="float32"\} (\d+)/m),
      metric(lone, /^norm_task_run_seconds_count (\d+)/m),
    ]);
    const before = await count();
    const res = await postMsgpack(lone, '/v1/rmsnorm', { input: wire('msgpack', 'float32', [3, 100], randomValues(7, 300)) });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['server-timing'])).toMatch(/^decode;dur=\d+\.\d{3}, queue;dur=0\.000, compute;dur=\d+\.\d{3}, encode;dur=\d+\.\d{3}$/);
    const after = await count();
    expect(after.map((v, i) => v - before[i])).toEqual([1, 3, 300, 1200, 1]);
  });
});
