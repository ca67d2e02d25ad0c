// API.md §8: "the answer is bit-for-bit the same whatever WORKERS is and however the work is split".
// Every tensor of the answer (output, stats, running stats) of all four ops compared byte for byte on
// 1, 2 and 3 workers with everything sent to the pool in blocks of ≥ 1024 elements; batchnorm also
// against a finer split (blocks of ≥ 1 element) and the inline path.
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, okBody, postMsgpack } from '../helpers/http.js';
import { product, randomValues, type Dtype } from '../helpers/tensors.js';
import { batchnormBody, expectBatchnormAnswer, tensorBytes, wire, type BatchnormCase } from './helpers.js';
import type { Config } from '../../src/config.js';

const POOLED: Record<string, Partial<Config>> = {
  'workers 1': { workers: 1, inlineMaxElements: 0, minTaskElements: 1024 },
  'workers 2': { workers: 2, inlineMaxElements: 0, minTaskElements: 1024 },
  'workers 3': { workers: 3, inlineMaxElements: 0, minTaskElements: 1024 },
};
const OTHER_SPLITS: Record<string, Partial<Config>> = {
  'workers 3, blocks of ≥ 1 element': { workers: 3, inlineMaxElements: 0, minTaskElements: 1 },
  inline: { workers: 2, inlineMaxElements: 1e9 },
};

const apps: Record<string, FastifyInstance> = {};
beforeAll(async () => {
  const entries = await Promise.all(Object.entries({ ...POOLED, ...OTHER_SPLITS }).map(async ([name, config]) => [name, await createApp(config)] as const));
  for (const [name, app] of entries) apps[name] = app;
});
afterAll(async () => {
  await Promise.all(Object.values(apps).map((app) => app.close()));
});

/** the answers of every app named, byte for byte the same as the first's; returns the first answer */
async function expectSameBytes(url: string, body: unknown, names: string[]): Promise<Record<string, unknown>> {
  const answers = await Promise.all(names.map(async (name) => okBody(await postMsgpack(apps[name], url, body)) as Record<string, unknown>));
  const first = tensorBytes(answers[0]);
  answers.slice(1).forEach((answer, i) => {
    const bytes = tensorBytes(answer);
    expect(Object.keys(bytes).sort(), names[i + 1]).toEqual(Object.keys(first).sort());
    for (const field of Object.keys(first)) {
      expect(bytes[field].byteLength, `${field} on ${names[i + 1]}`).toBe(first[field].byteLength);
      expect(bytes[field].equals(first[field]), `${field} on ${names[i + 1]} differs from ${names[0]}`).toBe(true);
    }
  });
  return answers[0];
}

const pooled = Object.keys(POOLED);
const everySplit = [...pooled, ...Object.keys(OTHER_SPLITS)];

function batchnormCase(dtype: Dtype, shape: number[], channelAxis: number, training: boolean, seed: number): BatchnormCase {
  const C = shape[channelAxis < 0 ? channelAxis + shape.length : channelAxis];
  return {
    dtype, shape, values: randomValues(seed, product(shape), 2, 0.75), channelAxis, training, returnStats: true, momentum: 0.2,
    runningMean: { dtype, values: randomValues(seed + 1, C, 1) }, runningVar: { dtype, values: randomValues(seed + 2, C, 0.5, 1) },
    weight: { dtype: 'float32', values: randomValues(seed + 3, C, 0.5, 1) }, bias: { dtype: 'float32', values: randomValues(seed + 4, C, 0.5) },
  };
}

describe('large tensors, [16, 8, 64, 64] (512 Ki elements)', () => {
  it.each<[string, number[], number, Dtype]>([
    ['channels-first float32', [16, 8, 64, 64], 1, 'float32'],
    ['channels-first float64', [16, 8, 64, 64], 1, 'float64'],
    ['channels-last float32', [16, 64, 64, 8], -1, 'float32'],
    ['channels-last float64', [16, 64, 64, 8], -1, 'float64'],
  ])('batchnorm training %s: output, mean, rstd, running stats', async (_name, shape, channelAxis, dtype) => {
    const c = batchnormCase(dtype, shape, channelAxis, true, 1);
    const answer = await expectSameBytes('/v1/batchnorm', batchnormBody(c, 'msgpack'), dtype === 'float32' ? everySplit : pooled);
    // and right, so that agreeing on a wrong answer cannot pass
    if (channelAxis === 1) expectBatchnormAnswer(answer as never, c);
  });

  it('batchnorm training channels-last float32 [16, 64, 64, 8], channels of very different scales (large bias, huge and tiny r·γ)', async () => {
    const c = batchnormCase('float32', [16, 64, 64, 8], -1, true, 8);
    c.weight = { dtype: 'float32', values: [1, 1e-30, 1, 1e30, 2, 1, 1e35, 1] };
    c.bias = { dtype: 'float32', values: [0, 100, -1e6, 0, 1e-3, 0, 0, 17] };
    await expectSameBytes('/v1/batchnorm', batchnormBody(c, 'msgpack'), everySplit);
  });

  it('batchnorm inference channels-last float32 [16, 64, 64, 8]', async () => {
    const c = batchnormCase('float32', [16, 64, 64, 8], -1, false, 2);
    await expectSameBytes('/v1/batchnorm', batchnormBody(c, 'msgpack'), everySplit);
  });

  // float64 groupnorm and rmsnorm go through the smaller shapes of the properties below
  it.each<Dtype>(['float32'])('groupnorm %s, 4 groups, weight, bias, return_stats', async (dtype) => {
    const shape = [16, 8, 64, 64];
    await expectSameBytes('/v1/groupnorm', {
      input: wire('msgpack', dtype, shape, randomValues(3, product(shape), 2, 0.5)), num_groups: 4, return_stats: true,
      weight: wire('msgpack', dtype, [8], randomValues(4, 8, 0.5, 1)), bias: wire('msgpack', dtype, [8], randomValues(5, 8, 0.5)),
    }, pooled);
  });

  it.each<Dtype>(['float32'])('rmsnorm %s, partial 0.3, rows of 4096 (axis 2)', async (dtype) => {
    const shape = [16, 8, 64, 64];
    await expectSameBytes('/v1/rmsnorm', { input: wire('msgpack', dtype, shape, randomValues(6, product(shape), 2)), axis: 2, partial: 0.3, return_stats: true }, pooled);
  });

  it('layernorm float32, rows of 64, return_stats', async () => {
    const shape = [16, 8, 64, 64];
    await expectSameBytes('/v1/layernorm', { input: wire('msgpack', 'float32', shape, randomValues(7, product(shape), 2, 3)), return_stats: true }, pooled);
  });
});

describe('property: random shapes, including sizes that are multiples of nothing nice', () => {
  // at most ~20k elements before the first dimension grows, so a run stays in the tens of milliseconds
  const dims = (maxRank: number) => fc.array(fc.integer({ min: 1, max: 37 }), { minLength: 2, maxLength: maxRank }).filter((s) => product(s) <= 20_000);
  const dtype = fc.constantFrom<Dtype>('float32', 'float64');

  it('batchnorm, training and inference, channels-first and channels-last', async () => {
    await fc.assert(fc.asyncProperty(dims(4), dtype, fc.boolean(), fc.boolean(), fc.nat(), async (shape, dt, last, training, seed) => {
      // grow the first dimension so that most shapes span several blocks
      shape[0] = shape[0] * 11 + 3;
      const c = batchnormCase(dt, shape, last ? -1 : 1, training, seed);
      await expectSameBytes('/v1/batchnorm', batchnormBody(c, 'msgpack'), everySplit);
    }), { numRuns: 8, seed: 5, endOnFailure: true });
  });

  it('groupnorm, a group count that divides C', async () => {
    await fc.assert(fc.asyncProperty(dims(4), dtype, fc.nat(), fc.nat(), async (shape, dt, pick, seed) => {
      shape[0] = shape[0] * 7 + 1;
      const C = shape[1];
      const divisors = [...Array(C).keys()].map((i) => i + 1).filter((g) => C % g === 0);
      await expectSameBytes('/v1/groupnorm', {
        input: wire('msgpack', dt, shape, randomValues(seed, product(shape), 2, 0.5)), num_groups: divisors[pick % divisors.length], return_stats: true,
      }, pooled);
    }), { numRuns: 6, seed: 6, endOnFailure: true });
  });

  it('rmsnorm with partial, and layernorm', async () => {
    await fc.assert(fc.asyncProperty(dims(3), dtype, fc.double({ min: 0.5, max: 1, noNaN: true }), fc.nat(), async (shape, dt, p, seed) => {
      shape[0] = shape[0] * 13 + 5;
      const input = wire('msgpack', dt, shape, randomValues(seed, product(shape), 2, 0.5));
      await expectSameBytes('/v1/rmsnorm', { input, partial: p, return_stats: true }, pooled);
      await expectSameBytes('/v1/layernorm', { input, return_stats: true }, pooled);
    }), { numRuns: 6, seed: 7, endOnFailure: true });
  });
});
