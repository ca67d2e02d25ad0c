// a msgpack batch's alike items (one op, rows, row length and eps, float32 binary, no weight, bias,
// residual or stats) run as one job (jobs/allocate-items.ts): inline, or split across the workers
// when large. Whatever the mix, each item's answer is the bytes it gets alone, and close to float64.
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, postMsgpack } from '../helpers/http.js';
import { expectClose, reference, type Op } from '../helpers/reference.js';
import { bytesOf, randomValues, valuesFromBytes, type Dtype } from '../helpers/tensors.js';

interface Item {
  op: Op;
  rows: number;
  n: number;
  eps?: number;
  epsPlacement?: 'outside';
  weightOffset?: number;
  /** makes the item unlike the others: a weight, its stats, a float16 input or a float64 output */
  odd?: 'weight' | 'stats' | 'float16' | 'float64';
  seed: number;
}

const item: fc.Arbitrary<Item> = fc.record(
  {
    op: fc.constantFrom<Op>('rmsnorm', 'layernorm'),
    rows: fc.constantFrom(1, 3),
    n: fc.constantFrom(4, 33, 768),
    eps: fc.constantFrom(1e-3, 0),
    epsPlacement: fc.constant('outside' as const),
    weightOffset: fc.constantFrom(0.5, -1),
    odd: fc.constantFrom('weight', 'stats', 'float16', 'float64') as fc.Arbitrary<Item['odd']>,
    seed: fc.integer({ min: 1, max: 1 << 20 }),
  },
  // few kinds, often repeated: most batches hold groups of alike items beside odd ones
  { requiredKeys: ['op', 'rows', 'n', 'seed'] },
);

function body({ op, rows, n, eps, epsPlacement, weightOffset, odd, seed }: Item) {
  const dtype: Dtype = odd === 'float16' ? 'float16' : 'float32';
  const values = randomValues(seed, rows * n, 3, 0.5);
  const fields: Record<string, unknown> = { input: { dtype, shape: [rows, n], data: bytesOf(dtype, values) } };
  if (eps !== undefined) fields.eps = eps;
  if (epsPlacement !== undefined) fields.eps_placement = epsPlacement;
  if (weightOffset !== undefined) fields.weight_offset = weightOffset;
  if (odd === 'weight') fields.weight = { dtype: 'float32', shape: [n], data: bytesOf('float32', randomValues(seed + 1, n, 1, 1)) };
  if (odd === 'stats') fields.return_stats = true;
  if (odd === 'float64') fields.output_dtype = 'float64';
  return { fields, values };
}

type Tensor = { dtype: Dtype; shape: number[]; data: Uint8Array };

async function answerOf(app: FastifyInstance, url: string, payload: unknown): Promise<unknown> {
  const res = await postMsgpack(app, url, payload);
  expect(res.statusCode, res.body).toBe(200);
  return unpack(res.rawPayload);
}

/** each item of the batch answers with its alone answer's bytes, and a plain one close to float64 */
async function expectItemsAsAlone(app: FastifyInstance, items: Item[]): Promise<void> {
  const bodies = items.map(body);
  const { results } = await answerOf(app, '/v1/batch', { requests: items.map(({ op }, i) => ({ op, ...bodies[i].fields })) }) as { results: Record<string, Tensor>[] };
  expect(results).toHaveLength(items.length);
  for (const [i, it] of items.entries()) {
    const alone = await answerOf(app, `/v1/${it.op}`, bodies[i].fields) as Record<string, Tensor>;
    expect(Object.keys(results[i]).sort()).toEqual(Object.keys(alone).sort());
    for (const name of Object.keys(alone)) expect(Buffer.from(results[i][name].data), `requests[${i}].${name}`).toEqual(Buffer.from(alone[name].data));
    if (it.odd === undefined) {
      const ref = reference({
        op: it.op, dtype: 'float32', shape: [it.rows, it.n], values: bodies[i].values, eps: it.eps, epsPlacement: it.epsPlacement, weightOffset: it.weightOffset,
      });
      expectClose(valuesFromBytes('float32', results[i].output.data), ref.output, 'float32');
    }
  }
}

/** the tasks the app has run to the end, by its metrics */
async function tasksOk(app: FastifyInstance): Promise<number> {
  return Number(/norm_tasks_total\{outcome="ok"\} (\d+)/.exec((await app.inject({ url: '/metrics' })).body)?.[1] ?? 0);
}

describe.each([
  ['inline', {}],
  ['split across 2 workers', { inlineMaxElements: 0, minTaskElements: 1, workers: 2 }],
])('alike items of a batch, %s', (_name, config) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await createApp(config);
  });
  afterAll(() => app.close());

  it('any mix of alike and odd items: each answer is the item\'s own, bit for bit', async () => {
    await fc.assert(fc.asyncProperty(fc.array(item, { minLength: 2, maxLength: 10 }).chain((some) =>
      // repeat a few of them (new values): groups of alike items
      fc.array(fc.constantFrom(...some), { minLength: 2, maxLength: 12 }).map((picked) => picked.map((p, i) => ({ ...p, seed: p.seed + i })))), (items) => expectItemsAsAlone(app, items)), { numRuns: 25 });
  });

  it('64 alike 1×768 items, as the load suite sends them, run as one task', async () => {
    const items = Array.from({ length: 64 }, (_, i): Item => ({ op: 'rmsnorm', rows: 1, n: 768, seed: 900 + i }));
    const before = await tasksOk(app);
    const bodies = items.map(body);
    await answerOf(app, '/v1/batch', { requests: bodies.map(({ fields }) => ({ op: 'rmsnorm', ...fields })) });
    // inline one task; split, one a worker
    expect(await tasksOk(app) - before).toBe(Object.keys(config).length === 0 ? 1 : 2);
    await expectItemsAsAlone(app, items.slice(0, 3));
  });

  it('10 kinds of 2 alike items each: the first 8 kinds as a job each, the last 2 kinds\' items one by one', async () => {
    const items = Array.from({ length: 20 }, (_, i): Item => ({ op: 'rmsnorm', rows: 1, n: 8 + (i % 10), seed: 950 + i }));
    const before = await tasksOk(app);
    await expectItemsAsAlone(app, items);
    // the batch's tasks, then one alone for each of the 20 items; split, a group of two is a task a worker
    expect(await tasksOk(app) - before - 20).toBe(Object.keys(config).length === 0 ? 8 + 4 : 8 * 2 + 4);
  });
});
