// API.md §9: POST /v1/groupnorm — every group of channels of every sample normalized on its own, in
// every dtype and encoding, checked against the float64 reference; every 400 whole.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectServerTiming, okBody, pack, postMsgpack, useFreshApp } from '../helpers/http.js';
import { expectClose, type Param } from '../helpers/reference.js';
import { bytesOf, DTYPES, product, randomValues, type Dtype } from '../helpers/tensors.js';
import {
  ENCODINGS, expectErrorBoth, expectGroupnormAnswer, expectNanOrClose, groupnormBody, groupnormReference, post, tensorValues,
  type GroupnormCase,
} from './helpers.js';

const ctx = useFreshApp({}, 'file');
const URL = '/v1/groupnorm';

const param = (dtype: Dtype, values: number[]): Param => ({ dtype, values });

async function answer(c: GroupnormCase, encoding: 'json' | 'msgpack' = 'msgpack') {
  return okBody(await post(ctx.app, encoding, URL, groupnormBody(c, encoding)));
}

/** values of [N, C, …] whose group (n, g) is centred on offsets[(n·G + g) mod offsets.length] */
function groupValues(seed: number, shape: number[], G: number, offsets: number[], scale = 1): number[] {
  const rowLength = product(shape.slice(1)) / G;
  return randomValues(seed, product(shape), scale).map((v, i) => v + offsets[Math.floor(i / rowLength) % offsets.length]);
}

describe.each(DTYPES)('%s in and out', (dtype) => {
  const shape = [2, 6, 5];
  const values = groupValues(1, shape, 3, [0.5, -2, 3, 1], 2);
  const affine = { weight: param(dtype, randomValues(2, 6, 0.5, 1)), bias: param(dtype, randomValues(3, 6, 0.5)) };

  it.each(ENCODINGS)('[2, 6, 5], 3 groups, weight, bias, return_stats, %s', async (encoding) => {
    const c: GroupnormCase = { dtype, shape, values, numGroups: 3, ...affine, returnStats: true };
    expectGroupnormAnswer(await answer(c, encoding), c);
  });

  it.each(DTYPES)('[3, 4, 2, 2], 2 groups → output_dtype %s', async (outputDtype) => {
    const c: GroupnormCase = { dtype, shape: [3, 4, 2, 2], values: randomValues(4, 48, 2, 1), numGroups: 2, outputDtype, returnStats: true };
    expectGroupnormAnswer(await answer(c), c);
  });
});

describe('groups', () => {
  const shape = [3, 8, 4, 3];
  const values = groupValues(10, shape, 8, [1, -3, 0.5, 2, 7, -1], 1.5);
  const weight = param('float32', randomValues(11, 8, 0.5, 1));
  const bias = param('float64', randomValues(12, 8, 0.5));

  it.each([1, 2, 4, 8])('[3, 8, 4, 3] float32, num_groups %d, per-channel weight and bias, return_stats', async (numGroups) => {
    const c: GroupnormCase = { dtype: 'float32', shape, values, numGroups, weight, bias, returnStats: true };
    expectGroupnormAnswer(await answer(c), c);
  });

  it('num_groups = C is InstanceNorm: each (n, c) normalized on its own', async () => {
    const c: GroupnormCase = { dtype: 'float64', shape: [2, 3, 7], values: randomValues(13, 42, 2, 1), numGroups: 3, returnStats: true };
    const body = await answer(c);
    const out = tensorValues(body.output, 'float64', [2, 3, 7]);
    for (let row = 0; row < 6; row++) {
      const y = out.slice(row * 7, row * 7 + 7);
      const mean = y.reduce((a, b) => a + b, 0) / 7;
      expect(Math.abs(mean)).toBeLessThan(1e-12);
    }
    expectGroupnormAnswer(body, c);
  });

  it('num_groups 1 is a LayerNorm over [C, d…] with a per-channel affine: same values as /v1/layernorm axis 1 with the weight broadcast', async () => {
    const s = [2, 4, 3];
    const x = randomValues(14, 24, 2, 0.5);
    const w = randomValues(15, 4, 0.5, 1);
    const group = await answer({ dtype: 'float64', shape: s, values: x, numGroups: 1, weight: param('float64', w) });
    const broadcast = w.flatMap((v) => [v, v, v]);
    const layer = okBody(await postMsgpack(ctx.app, '/v1/layernorm', {
      input: { dtype: 'float64', shape: s, data: bytesOf('float64', x) }, axis: 1, eps: 1e-5,
      weight: { dtype: 'float64', shape: [4, 3], data: bytesOf('float64', broadcast) },
    }));
    expectClose(tensorValues(group.output, 'float64', s), tensorValues(layer.output, 'float64', s), 'float64');
  });

  it('rank 2 [5, 6]: no spatial dimensions, 3 groups of 2 channels (and Server-Timing)', async () => {
    const c: GroupnormCase = { dtype: 'float32', shape: [5, 6], values: randomValues(16, 30, 2), numGroups: 3, weight: param('float16', randomValues(17, 6, 0.5, 1)), returnStats: true };
    const res = await post(ctx.app, 'json', URL, groupnormBody(c, 'json'));
    expectServerTiming(res);
    expectGroupnormAnswer(okBody(res), c);
  });

  it('rank 8 [2, 4, 1, 2, 1, 3, 1, 2], 2 groups', async () => {
    const shape8 = [2, 4, 1, 2, 1, 3, 1, 2];
    const c: GroupnormCase = { dtype: 'float32', shape: shape8, values: randomValues(18, product(shape8), 2), numGroups: 2, returnStats: true };
    expectGroupnormAnswer(await answer(c), c);
  });

  it.each([0, 1])('eps %d', async (eps) => {
    const c: GroupnormCase = { dtype: 'float32', shape: [2, 4, 5], values: randomValues(19, 40, 2), numGroups: 2, eps, returnStats: true };
    expectGroupnormAnswer(await answer(c), c);
  });

  it('a whole-number float num_groups (2.0 in msgpack) is accepted', async () => {
    const x = randomValues(20, 16, 2);
    const c: GroupnormCase = { dtype: 'float32', shape: [2, 4, 2], values: x, numGroups: 2 };
    // 0xcb: a msgpack float64 2.0 where an integer is expected
    const float2 = Buffer.from([0xcb, 0x40, 0x00, 0, 0, 0, 0, 0, 0]);
    const head = Buffer.from([0x82, 0xa5, ...Buffer.from('input')]);
    const input = pack({ dtype: 'float32', shape: [2, 4, 2], data: bytesOf('float32', x) });
    const groups = Buffer.from([0xaa, ...Buffer.from('num_groups')]);
    const res = await postMsgpack(ctx.app, URL, Buffer.concat([head, input, groups, float2]));
    expectGroupnormAnswer(okBody(res), c);
  });
});

describe('empty tensors', () => {
  it.each<[number[], number]>([
    [[0, 4, 3], 2],
    [[0, 4], 4],
    [[0, 0, 3], 1],
    [[0, 6, 0, 2], 3],
  ])('N = 0: %j with %d groups → empty output, mean and rstd of shape [0, G]', async (shape, numGroups) => {
    for (const encoding of ENCODINGS) {
      const body = await answer({ dtype: 'float32', shape, values: [], numGroups, returnStats: true }, encoding);
      expect(tensorValues(body.output, 'float32', shape)).toEqual([]);
      expect(tensorValues(body.mean, 'float32', [0, numGroups])).toEqual([]);
      expect(tensorValues(body.rstd, 'float32', [0, numGroups])).toEqual([]);
    }
  });
});

describe('special values', () => {
  const shape = [2, 4, 3];
  const pick = (xs: readonly number[], from: number, to: number) => xs.slice(from, to);

  it.each<[string, number]>([['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity]])(
    '%s in group (1, 0) of [2, 4, 3] with 2 groups: that row NaN or the formula, the other three rows exact', async (_name, special) => {
      const values = randomValues(30, 24, 2);
      values[12 + 4] = special; // sample 1, channel 1 (group 0), position 1
      const c: GroupnormCase = { dtype: 'float32', shape, values, numGroups: 2, returnStats: true };
      const ref = groupnormReference(c);
      const body = await answer(c, 'json');
      const out = tensorValues(body.output, 'float32', shape);
      // rows of 6: (0,0) 0-5, (0,1) 6-11, (1,0) 12-17, (1,1) 18-23
      for (const row of [0, 1, 3]) expectClose(pick(out, row * 6, row * 6 + 6), pick(ref.output, row * 6, row * 6 + 6), 'float32');
      expectNanOrClose(pick(out, 12, 18), pick(ref.output, 12, 18), 'float32');
      for (const name of ['mean', 'rstd'] as const) {
        const got = tensorValues(body[name], 'float32', [2, 2]);
        expectClose([got[0], got[1], got[3]], [ref[name][0], ref[name][1], ref[name][3]], 'float32');
        expectNanOrClose([got[2]], [ref[name][2]], 'float32');
      }
    });

  it('eps 0, a constant group: that row NaN, the others exact', async () => {
    const values = randomValues(31, 24, 2);
    values.fill(0.5, 6, 12);
    const c: GroupnormCase = { dtype: 'float32', shape, values, numGroups: 2, eps: 0 };
    const out = tensorValues((await answer(c)).output, 'float32', shape);
    expect(out.slice(6, 12)).toEqual(new Array(6).fill(NaN));
    const ref = groupnormReference(c);
    expectClose([...out.slice(0, 6), ...out.slice(12)], [...ref.output.slice(0, 6), ...ref.output.slice(12)], 'float32');
  });
});

describe('hard inputs', () => {
  it.each<Dtype>(['float32', 'float64'])('groups whose mean is ~1e6 × their std: %s [4, 4, 16, 16], 2 groups', async (dtype) => {
    const shape = [4, 4, 16, 16];
    const values = groupValues(40, shape, 2, [5e5, -5e5, 2.5e5], 1);
    const c: GroupnormCase = { dtype, shape, values, numGroups: 2, weight: param('float32', [1, -2, 0.5, 3]), returnStats: true };
    expectGroupnormAnswer(await answer(c), c);
  });

  it.each<[string, number, number]>([
    ['near 1e30', 1e30, 1e-5],
    ['near 1e-30 (eps 0)', 1e-30, 0],
  ])('float32 values %s: squares leave float32 but not float64', async (_name, scale, eps) => {
    const shape = [3, 4, 10];
    const values = groupValues(41, shape, 2, [scale, -2 * scale, 0], scale);
    const c: GroupnormCase = { dtype: 'float32', shape, values, numGroups: 2, eps, returnStats: true };
    expectGroupnormAnswer(await answer(c), c);
  });
});

describe('large tensors go through the worker pool (> 128 Ki elements)', () => {
  it.each<[string, number[], number, Dtype, Dtype]>([
    ['[16, 8, 48, 48] float32, 4 groups', [16, 8, 48, 48], 4, 'float32', 'float32'],
    ['[3, 6, 129, 131] float64, 3 groups, odd sizes', [3, 6, 129, 131], 3, 'float64', 'float64'],
    ['[1, 2, 256, 300] bfloat16 → float32, 1 group (one row of 153600)', [1, 2, 256, 300], 1, 'bfloat16', 'float32'],
  ])('%s', async (_name, shape, numGroups, dtype, outputDtype) => {
    const C = shape[1];
    const c: GroupnormCase = {
      dtype, shape, values: groupValues(50, shape, numGroups, [3, -1, 0.5, 100, -7], 2), numGroups, outputDtype, returnStats: true,
      weight: param('float32', randomValues(51, C, 0.5, 1)), bias: param('float32', randomValues(52, C, 1)),
    };
    expectGroupnormAnswer(await answer(c), c);
  });
});

describe('large rows whose mean is ~1e6 × their std, through the pool', () => {
  it.each<[string, number[], number, Dtype]>([
    ['float32 [1, 2, 320, 320], 1 group: one row of 204800', [1, 2, 320, 320], 1, 'float32'],
    ['float64 [2, 4, 160, 160], 2 groups', [2, 4, 160, 160], 2, 'float64'],
  ])('%s', async (_name, shape, numGroups, dtype) => {
    const c: GroupnormCase = { dtype, shape, values: groupValues(60, shape, numGroups, [5e5, -2.5e5, 1e5], 1), numGroups, returnStats: true };
    expectGroupnormAnswer(await answer(c), c);
  });
});

describe('property: random shapes and group counts', () => {
  it('answers the reference, or the 400 of a G that does not divide C', async () => {
    const arb = fc.record({
      n: fc.integer({ min: 1, max: 3 }),
      groups: fc.integer({ min: 1, max: 4 }),
      perGroup: fc.integer({ min: 1, max: 3 }),
      spatial: fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 2 }),
      misfit: fc.boolean(),
      dtype: fc.constantFrom<Dtype>(...DTYPES),
      seed: fc.nat(),
    });
    await fc.assert(fc.asyncProperty(arb, async ({ n, groups, perGroup, spatial, misfit, dtype, seed }) => {
      const C = groups * perGroup + (misfit && groups > 1 ? 1 : 0);
      const shape = [n, C, ...spatial];
      const c: GroupnormCase = { dtype, shape, values: randomValues(seed, product(shape), 2, 0.5), numGroups: groups, weight: param('float32', randomValues(seed + 1, C, 0.5, 1)), returnStats: true };
      const res = await postMsgpack(ctx.app, URL, groupnormBody(c, 'msgpack'));
      if (C % groups !== 0) {
        expect(res.json()).toEqual({
          statusCode: 400, code: 'NORM_ERR_FIELD_INVALID', error: 'Bad Request',
          message: `num_groups: ${groups} does not divide the ${C} channels of input.shape[1]`,
        });
        return;
      }
      expectGroupnormAnswer(okBody(res), c);
    }), { numRuns: 50, seed: 9, endOnFailure: true });
  });
});

describe('400, whole body, in JSON and msgpack', () => {
  const input = { shape: [2, 8], data: new Array(16).fill(0).map((_, i) => i) };
  const ok = { input, num_groups: 2 };
  const DTYPE_LIST = '"float32", "float64", "float16", "bfloat16"';
  const empty = (dims: string) => `input.shape: the normalized dimensions [${dims}] hold no elements`;

  it.each<[string, Record<string, unknown>, string, string]>([
    ['input missing', { num_groups: 2 }, 'NORM_ERR_FIELD_MISSING', 'input: required field is missing'],
    ['num_groups missing', { input }, 'NORM_ERR_FIELD_MISSING', 'num_groups: required field is missing'],
    ['num_groups 0', { input, num_groups: 0 }, 'NORM_ERR_FIELD_INVALID', 'num_groups: must be >= 1'],
    ['num_groups -2', { input, num_groups: -2 }, 'NORM_ERR_FIELD_INVALID', 'num_groups: must be >= 1'],
    ['num_groups 1.5', { input, num_groups: 1.5 }, 'NORM_ERR_FIELD_INVALID', 'num_groups: must be integer'],
    ['num_groups "2" (no coercion)', { input, num_groups: '2' }, 'NORM_ERR_FIELD_INVALID', 'num_groups: must be integer'],
    ['num_groups null', { input, num_groups: null }, 'NORM_ERR_FIELD_INVALID', 'num_groups: must be integer'],
    ['num_groups 3 for 8 channels', { input, num_groups: 3 }, 'NORM_ERR_FIELD_INVALID', 'num_groups: 3 does not divide the 8 channels of input.shape[1]'],
    ['num_groups 16 for 8 channels', { input, num_groups: 16 }, 'NORM_ERR_FIELD_INVALID', 'num_groups: 16 does not divide the 8 channels of input.shape[1]'],
    ['num_groups 3 for 8 channels of [2, 8, 2]', { input: { shape: [2, 8, 2], data: new Array(32).fill(1) }, num_groups: 3 }, 'NORM_ERR_FIELD_INVALID', 'num_groups: 3 does not divide the 8 channels of input.shape[1]'],
    ['rank 1', { input: { shape: [8], data: input.data.slice(0, 8) }, num_groups: 1 }, 'NORM_ERR_SHAPE_MISMATCH', 'input.shape: rank 1; groupnorm needs rank ≥ 2'],
    ['weight [4] for 8 channels', { ...ok, weight: { shape: [4], data: [1, 1, 1, 1] } }, 'NORM_ERR_SHAPE_MISMATCH', 'weight.shape: [4] must be [8]'],
    ['bias of the whole input shape', { ...ok, bias: input }, 'NORM_ERR_SHAPE_MISMATCH', 'bias.shape: [2, 8] must be [8]'],
    ['weight [8, 1]', { input: { shape: [1, 8, 2], data: new Array(16).fill(1) }, num_groups: 4, weight: { shape: [8, 1], data: new Array(8).fill(1) } },
      'NORM_ERR_SHAPE_MISMATCH', 'weight.shape: [8, 1] must be [8]'],
    ['bias null', { ...ok, bias: null }, 'NORM_ERR_FIELD_INVALID', 'bias: must be object'],
    ['eps null', { ...ok, eps: null }, 'NORM_ERR_FIELD_INVALID', 'eps: must be number'],
    ['eps -1', { ...ok, eps: -1 }, 'NORM_ERR_FIELD_INVALID', 'eps: must be >= 0'],
    ['return_stats "yes"', { ...ok, return_stats: 'yes' }, 'NORM_ERR_FIELD_INVALID', 'return_stats: must be boolean'],
    ['output_dtype float8', { ...ok, output_dtype: 'float8' }, 'NORM_ERR_DTYPE_UNKNOWN', `output_dtype: must be one of ${DTYPE_LIST}`],
    ['C = 0: [2, 0, 3], 1 group', { input: { shape: [2, 0, 3], data: [] }, num_groups: 1 }, 'NORM_ERR_EMPTY_ROW', empty('0, 3')],
    ['C = 0: [2, 0], 1 group', { input: { shape: [2, 0], data: [] }, num_groups: 1 }, 'NORM_ERR_EMPTY_ROW', empty('0')],
    ['C = 0: [1, 0, 2, 2], 2 groups', { input: { shape: [1, 0, 2, 2], data: [] }, num_groups: 2 }, 'NORM_ERR_EMPTY_ROW', empty('0, 2, 2')],
    ['a zero spatial dimension: [2, 4, 0], 2 groups', { input: { shape: [2, 4, 0], data: [] }, num_groups: 2 }, 'NORM_ERR_EMPTY_ROW', empty('2, 0')],
    ['a zero spatial dimension: [2, 4, 3, 0], 4 groups', { input: { shape: [2, 4, 3, 0], data: [] }, num_groups: 4 }, 'NORM_ERR_EMPTY_ROW', empty('1, 3, 0')],
    ['unknown field channel_axis', { ...ok, channel_axis: 1 }, 'NORM_ERR_FIELD_UNKNOWN', 'channel_axis: unknown field'],
    ['unknown field axis', { ...ok, axis: 1 }, 'NORM_ERR_FIELD_UNKNOWN', 'axis: unknown field'],
    ['unknown field training', { ...ok, training: true }, 'NORM_ERR_FIELD_UNKNOWN', 'training: unknown field'],
    ['unknown field running_mean', { ...ok, running_mean: { shape: [8], data: new Array(8).fill(0) } }, 'NORM_ERR_FIELD_UNKNOWN', 'running_mean: unknown field'],
    ['unknown field partial', { ...ok, partial: 0.5 }, 'NORM_ERR_FIELD_UNKNOWN', 'partial: unknown field'],
    ['unknown field momentum', { ...ok, momentum: 0.1 }, 'NORM_ERR_FIELD_UNKNOWN', 'momentum: unknown field'],
    ['unknown field groups', { ...ok, groups: 2 }, 'NORM_ERR_FIELD_UNKNOWN', 'groups: unknown field'],
    ['unknown field weight.strides', { ...ok, weight: { shape: [8], data: new Array(8).fill(1), strides: [1] } }, 'NORM_ERR_FIELD_UNKNOWN', 'weight.strides: unknown field'],
  ])('%s', async (_name, body, code, message) => {
    await expectErrorBoth(ctx.app, URL, body, code, message);
  });

  it('a msgpack-numpy ndarray input with a strides key → 400 input.strides: unknown field', async () => {
    const key = (name: string) => Buffer.from(name);
    const nd = new Map<Buffer, unknown>([
      [key('nd'), true], [key('type'), '<f8'], [key('kind'), Buffer.alloc(0)], [key('shape'), [2, 8]], [key('data'), bytesOf('float64', input.data)], [key('strides'), [64, 8]],
    ]);
    const res = await postMsgpack(ctx.app, URL, { input: nd, num_groups: 2 });
    expect(res.json()).toEqual({ statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'input.strides: unknown field' });
    expect(res.statusCode).toBe(400);
  });

  it('the same body without the fault is a 200 (the cases differ from it in one field)', async () => {
    const body = await answer({ dtype: 'float32', shape: [2, 8], values: input.data, numGroups: 2 }, 'json');
    expect(tensorValues(body.output, 'float32', [2, 8])).toHaveLength(16);
  });
});
