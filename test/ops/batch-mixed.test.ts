// API.md §3 with all four operations: results in order, each op with its own defaults and its own
// fields (an rmsnorm item with channel_axis is a 400), and all-or-nothing validation.
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { expectServerTiming, okBody, postJson, postMsgpack, unpackMaps, useFreshApp } from '../helpers/http.js';
import { expectClose, reference, type Param } from '../helpers/reference.js';
import { bytesOf, randomValues, valuesFromBytes, type Dtype } from '../helpers/tensors.js';
import {
  asMsgpack, batchnormBody, batchnormReference, expectBatchnormAnswer, expectErrorBoth, expectGroupnormAnswer, groupnormBody, partialReference,
  post, tensorBytes, tensorValues, wire, type BatchnormCase, type Encoding, type GroupnormCase,
} from './helpers.js';

const ctx = useFreshApp({}, 'file');
const param = (dtype: Dtype, values: number[]): Param => ({ dtype, values });

// small values make eps matter: rmsnorm's default 1e-6 and the others' 1e-5 give visibly different answers
const tiny = (seed: number, count: number) => randomValues(seed, count, 2e-3);

const bnTraining: BatchnormCase = {
  dtype: 'float32', shape: [4, 3, 5], values: tiny(1, 60), training: true, returnStats: true,
  runningMean: param('float32', [0.1, 0.2, 0.3]), runningVar: param('float64', [1, 2, 3]),
};
const bnInference: BatchnormCase = {
  dtype: 'float64', shape: [2, 4, 3], values: randomValues(2, 24, 2), channelAxis: -1, outputDtype: 'float16',
  runningMean: param('float32', [0.1, -0.2, 0.3]), runningVar: param('float32', [1, 2, 0.5]), weight: param('bfloat16', [1, 2, -1]),
};
const gn: GroupnormCase = { dtype: 'float64', shape: [2, 6, 4], values: tiny(3, 48), numGroups: 3, returnStats: true, bias: param('float32', [0, 1, 2, 3, 4, 5]) };
const gnEmpty: GroupnormCase = { dtype: 'float32', shape: [0, 4, 2], values: [], numGroups: 2, returnStats: true };
const rmsValues = tiny(4, 24);
const lnValues = randomValues(5, 12, 2, 3);

function items(encoding: Encoding) {
  return [
    { op: 'rmsnorm', input: wire(encoding, 'float32', [3, 8], rmsValues), partial: 0.5, return_stats: true },
    { op: 'batchnorm', ...batchnormBody(bnTraining, encoding) },
    { op: 'groupnorm', ...groupnormBody(gn, encoding) },
    { op: 'layernorm', input: wire(encoding, 'float32', [2, 6], lnValues), return_stats: true },
    { op: 'batchnorm', ...batchnormBody(bnInference, encoding) },
    { op: 'rmsnorm', input: wire(encoding, 'float16', [3, 8], rmsValues) },
    { op: 'groupnorm', ...groupnormBody(gnEmpty, encoding) },
  ];
}

describe('results in order, each by its own op and defaults', () => {
  it.each<Encoding>(['json', 'msgpack'])('7 items of the four ops (%s)', async (encoding) => {
    const res = await post(ctx.app, encoding, '/v1/batch', { requests: items(encoding) });
    expectServerTiming(res);
    const { results } = okBody(res);
    expect(results).toHaveLength(7);

    const rms = partialReference({ dtype: 'float32', shape: [3, 8], values: rmsValues, partial: 0.5 });
    expect(Object.keys(results[0]).sort()).toEqual(['output', 'rstd']);
    expectClose(tensorValues(results[0].output, 'float32', [3, 8]), rms.output, 'float32');
    expectClose(tensorValues(results[0].rstd, 'float32', [3]), rms.rstd, 'float32');

    expectBatchnormAnswer(results[1], bnTraining);
    expectGroupnormAnswer(results[2], gn);

    const ln = reference({ op: 'layernorm', dtype: 'float32', shape: [2, 6], values: lnValues });
    expect(Object.keys(results[3]).sort()).toEqual(['mean', 'output', 'rstd']);
    expectClose(tensorValues(results[3].output, 'float32', [2, 6]), ln.output, 'float32');
    expectClose(tensorValues(results[3].mean, 'float32', [2]), ln.mean, 'float32');

    expectBatchnormAnswer(results[4], bnInference);
    const rms16 = reference({ op: 'rmsnorm', dtype: 'float16', shape: [3, 8], values: rmsValues });
    expectClose(tensorValues(results[5].output, 'float16', [3, 8]), rms16.output, 'float16');
    expectGroupnormAnswer(results[6], gnEmpty);
  });

  it('the default eps is each op\'s own: rmsnorm 1e-6, batchnorm and groupnorm 1e-5 (a 1e-6 would be far off here)', async () => {
    const { results } = okBody(await postJson(ctx.app, '/v1/batch', { requests: items('json').slice(0, 3) }));
    const wrongBn = batchnormReference({ ...bnTraining, eps: 1e-6 });
    const bnOut = tensorValues(results[1].output, 'float32', bnTraining.shape);
    expect(Math.max(...bnOut.map((v, i) => Math.abs(v - wrongBn.output[i])))).toBeGreaterThan(1e-2);
    const wrongRms = partialReference({ dtype: 'float32', shape: [3, 8], values: rmsValues, partial: 0.5, eps: 1e-5 });
    const rmsOut = tensorValues(results[0].output, 'float32', [3, 8]);
    expect(Math.max(...rmsOut.map((v, i) => Math.abs(v - wrongRms.output[i])))).toBeGreaterThan(1e-2);
  });

  it('a batchnorm item gives the same bytes as POST /v1/batchnorm', async () => {
    const alone = tensorBytes(okBody(await postMsgpack(ctx.app, '/v1/batchnorm', batchnormBody(bnTraining, 'msgpack'))));
    const { results } = okBody(await postMsgpack(ctx.app, '/v1/batch', { requests: items('msgpack') }));
    const inBatch = tensorBytes(results[1]);
    for (const name of Object.keys(alone)) expect(inBatch[name].equals(alone[name]), name).toBe(true);
  });

  it('48 items cycling the four ops with distinct data: result i answers item i', async () => {
    const requests: Record<string, unknown>[] = [];
    const check: ((result: any) => void)[] = [];
    for (let i = 0; i < 48; i++) {
      const values = randomValues(100 + i, 12, 1 + i / 8, i);
      switch (i % 4) {
        case 0:
          requests.push({ op: 'rmsnorm', input: { shape: [2, 6], data: values }, partial: 0.5 });
          check.push((r) => expectClose(tensorValues(r.output, 'float32', [2, 6]), partialReference({ dtype: 'float32', shape: [2, 6], values, partial: 0.5 }).output, 'float32'));
          break;
        case 1: {
          const c: BatchnormCase = { dtype: 'float32', shape: [4, 3], values, training: true };
          requests.push({ op: 'batchnorm', ...batchnormBody(c, 'json') });
          check.push((r) => expectBatchnormAnswer(r, c));
          break;
        }
        case 2: {
          const c: GroupnormCase = { dtype: 'float32', shape: [2, 2, 3], values, numGroups: 2 };
          requests.push({ op: 'groupnorm', ...groupnormBody(c, 'json') });
          check.push((r) => expectGroupnormAnswer(r, c));
          break;
        }
        default:
          requests.push({ op: 'layernorm', input: { shape: [3, 4], data: values } });
          check.push((r) => expectClose(tensorValues(r.output, 'float32', [3, 4]), reference({ op: 'layernorm', dtype: 'float32', shape: [3, 4], values }).output, 'float32'));
      }
    }
    const { results } = okBody(await postMsgpack(ctx.app, '/v1/batch', { requests }));
    expect(results).toHaveLength(48);
    results.forEach((r: unknown, i: number) => check[i](r));
  });

  it('msgpack-numpy: a batchnorm item with an ndarray input answers ndarrays, the groupnorm item beside it ordinary maps', async () => {
    const key = (name: string) => Buffer.from(name);
    const c: BatchnormCase = { dtype: 'float32', shape: [4, 3, 5], values: randomValues(6, 60, 2), training: true, runningMean: param('float32', [0, 0, 0]), runningVar: param('float32', [1, 1, 1]) };
    const nd = new Map<Buffer, unknown>([[key('nd'), true], [key('type'), '<f4'], [key('kind'), Buffer.alloc(0)], [key('shape'), c.shape], [key('data'), bytesOf('float32', c.values)]]);
    const res = await postMsgpack(ctx.app, '/v1/batch', { requests: [{ op: 'batchnorm', ...batchnormBody(c, 'msgpack'), input: nd }, { op: 'groupnorm', ...groupnormBody(gn, 'msgpack') }] });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const results = (unpackMaps(res.rawPayload) as Map<string, Map<string, Map<unknown, unknown>>[]>).get('results')!;
    const ref = batchnormReference(c);
    for (const [name, expected] of [['output', ref.output], ['running_mean', ref.runningMean!], ['running_var', ref.runningVar!]] as const) {
      const tensor = new Map([...results[0].get(name)!].map(([k, v]) => [Buffer.from(k as Uint8Array).toString(), v]));
      expect([...results[0].get(name)!.keys()].every((k) => k instanceof Uint8Array), name).toBe(true);
      expect(tensor.get('type')).toBe('<f4');
      expectClose(valuesFromBytes('float32', tensor.get('data') as Uint8Array), expected, 'float32');
    }
    expect([...results[1].get('output')!.keys()]).toEqual(['dtype', 'shape', 'data']);
  });
});

async function computedCounters(app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  return res.body.split('\n').filter((line) => /^norm_(rows|bytes|tasks)_total/.test(line)).join('\n');
}

describe('an invalid item makes the whole batch a 400 naming it; nothing is computed', () => {
  const input = { shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] };
  const rms = { op: 'rmsnorm', input };
  const ln = { op: 'layernorm', input };
  const bn = { op: 'batchnorm', input, training: true };
  const bnInf = { op: 'batchnorm', input, running_mean: { shape: [4], data: [0, 0, 0, 0] }, running_var: { shape: [4], data: [1, 1, 1, 1] } };
  const gnItem = { op: 'groupnorm', input, num_groups: 2 };
  const ops = '"rmsnorm", "layernorm", "batchnorm", "groupnorm"';

  it.each<[string, unknown[], string, string]>([
    ['rmsnorm item with channel_axis', [{ ...rms, channel_axis: 1 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[0].channel_axis: unknown field'],
    ['rmsnorm item with num_groups', [bn, gnItem, { ...rms, num_groups: 2 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[2].num_groups: unknown field'],
    ['rmsnorm item with training', [ln, { ...rms, training: true }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[1].training: unknown field'],
    ['layernorm item with partial', [rms, bn, gnItem, { ...ln, partial: 1 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[3].partial: unknown field'],
    ['layernorm item with momentum', [{ ...ln, momentum: 0.1 }, rms], 'NORM_ERR_FIELD_UNKNOWN', 'requests[0].momentum: unknown field'],
    ['batchnorm item with num_groups', [gnItem, { ...bn, num_groups: 2 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[1].num_groups: unknown field'],
    ['batchnorm item with axis', [rms, ln, { ...bn, axis: -1 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[2].axis: unknown field'],
    ['batchnorm item with partial', [{ ...bn, partial: 1 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[0].partial: unknown field'],
    ['batchnorm item with eps_placement', [rms, { ...bn, eps_placement: 'inside' }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[1].eps_placement: unknown field'],
    ['batchnorm item with residual', [rms, { ...bn, residual: input }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[1].residual: unknown field'],
    ['groupnorm item with channel_axis', [bn, { ...gnItem, channel_axis: 1 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[1].channel_axis: unknown field'],
    ['groupnorm item with running_var', [{ ...gnItem, running_var: { shape: [4], data: [1, 1, 1, 1] } }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[0].running_var: unknown field'],
    ['groupnorm item with weight_offset', [rms, ln, bn, { ...gnItem, weight_offset: 1 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[3].weight_offset: unknown field'],
    ['groupnorm item without num_groups', [bn, { op: 'groupnorm', input }], 'NORM_ERR_FIELD_MISSING', 'requests[1].num_groups: required field is missing'],
    ['groupnorm item, num_groups 0', [{ ...gnItem, num_groups: 0 }], 'NORM_ERR_FIELD_INVALID', 'requests[0].num_groups: must be >= 1'],
    ['groupnorm item, num_groups 3 for 8 channels', [rms, bn, { op: 'groupnorm', input: { shape: [1, 8], data: [1, 2, 3, 4, 5, 6, 7, 8] }, num_groups: 3 }],
      'NORM_ERR_FIELD_INVALID', 'requests[2].num_groups: 3 does not divide the 8 channels of input.shape[1]'],
    ['groupnorm item of rank 1', [gnItem, { op: 'groupnorm', input: { shape: [4], data: [1, 2, 3, 4] }, num_groups: 1 }], 'NORM_ERR_SHAPE_MISMATCH', 'requests[1].input.shape: rank 1; groupnorm needs rank ≥ 2'],
    ['groupnorm item with C = 0', [{ op: 'groupnorm', input: { shape: [2, 0, 3], data: [] }, num_groups: 1 }, gnItem], 'NORM_ERR_EMPTY_ROW', 'requests[0].input.shape: the normalized dimensions [0, 3] hold no elements'],
    ['batchnorm inference item without running stats', [rms, { op: 'batchnorm', input }], 'NORM_ERR_FIELD_MISSING', 'requests[1].running_mean: required when training is false'],
    ['batchnorm training item with running_mean alone', [rms, ln, gnItem, { ...bn, running_mean: bnInf.running_mean }], 'NORM_ERR_FIELD_MISSING', 'requests[3].running_var: required when running_mean is sent'],
    ['batchnorm item with M = 1', [bnInf, { op: 'batchnorm', input: { shape: [1, 4], data: [1, 2, 3, 4] }, training: true }],
      'NORM_ERR_TOO_FEW_VALUES', 'requests[1].input.shape: [1, 4] gives 1 value(s) per channel; training needs at least 2'],
    ['batchnorm item of rank 1', [rms, ln, { op: 'batchnorm', input: { shape: [4], data: [1, 2, 3, 4] }, training: true }], 'NORM_ERR_SHAPE_MISMATCH', 'requests[2].input.shape: rank 1; batchnorm needs rank ≥ 2'],
    ['batchnorm item, channel_axis 3 of rank 2', [{ ...bn, channel_axis: 3 }], 'NORM_ERR_AXIS_RANGE', 'requests[0].channel_axis: 3 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)'],
    ['batchnorm item, weight [3] for C = 4', [bnInf, { ...bn, weight: { shape: [3], data: [1, 1, 1] } }], 'NORM_ERR_SHAPE_MISMATCH', 'requests[1].weight.shape: [3] must be [4]'],
    ['batchnorm item, momentum 2', [gnItem, { ...bn, momentum: 2 }], 'NORM_ERR_FIELD_INVALID', 'requests[1].momentum: must be <= 1'],
    ['op instancenorm', [rms, { ...gnItem, op: 'instancenorm' }], 'NORM_ERR_FIELD_INVALID', `requests[1].op: must be one of ${ops}`],
  ])('%s', async (_name, requests, code, message) => {
    await expectErrorBoth(ctx.app, '/v1/batch', { requests }, code, message);
  });

  it('an ndarray item input with strides → requests[1].input.strides: unknown field', async () => {
    const key = (name: string) => Buffer.from(name);
    const nd = new Map<Buffer, unknown>([[key('nd'), true], [key('type'), '<f4'], [key('shape'), [2, 4]], [key('data'), bytesOf('float32', input.data)], [key('strides'), [16, 4]]]);
    const res = await postMsgpack(ctx.app, '/v1/batch', { requests: [asMsgpack(bn), { ...gnItem, input: nd }] });
    expect(res.json()).toEqual({ statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'requests[1].input.strides: unknown field' });
    expect(res.statusCode).toBe(400);
  });

  it('large valid batchnorm and groupnorm items before a bad one: 400, and no rows, bytes or tasks counted', async () => {
    const big = randomValues(7, 8 * 4 * 64 * 64, 2);
    const requests = [
      { op: 'batchnorm', input: wire('msgpack', 'float32', [8, 4, 64, 64], big), training: true },
      { op: 'groupnorm', input: wire('msgpack', 'float32', [8, 4, 64, 64], big), num_groups: 2 },
      { op: 'rmsnorm', input: wire('msgpack', 'float32', [8, 4, 64, 64], big), partial: 0.5 },
      { op: 'groupnorm', input: wire('msgpack', 'float32', [2, 4], input.data), num_groups: 2, training: true },
    ];
    const before = await computedCounters(ctx.app);
    const res = await postMsgpack(ctx.app, '/v1/batch', { requests });
    expect(res.json()).toEqual({ statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'requests[3].training: unknown field' });
    expect(await computedCounters(ctx.app)).toBe(before);

    // and the counters do move when the same items are valid, so the comparison above means something
    const good = okBody(await postMsgpack(ctx.app, '/v1/batch', { requests: requests.slice(0, 3) }));
    expect(good.results).toHaveLength(3);
    expect(await computedCounters(ctx.app)).not.toBe(before);
  });

  it('a JSON batch whose last item is bad answers 400 JSON naming it, and the good items alone answer 200', async () => {
    const requests = [rms, ln, bn, bnInf, gnItem];
    expect(okBody(await postJson(ctx.app, '/v1/batch', { requests })).results).toHaveLength(5);
    await expectErrorBoth(ctx.app, '/v1/batch', { requests: [...requests, { ...bnInf, training: 'no' }] }, 'NORM_ERR_FIELD_INVALID', 'requests[5].training: must be boolean');
  });
});
