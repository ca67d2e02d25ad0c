// API.md §8: POST /v1/batchnorm — statistics per channel across the batch, in training and inference,
// any channel axis, every dtype and encoding, checked against the float64 reference (its 400s: batchnorm-errors.test.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectServerTiming, okBody, pack, packTyped, postMsgpack, unpackMaps, useFreshApp } from '../helpers/http.js';
import { expectClose, type Param } from '../helpers/reference.js';
import { bytesOf, DTYPES, product, randomValues, valuesFromBytes, type Dtype } from '../helpers/tensors.js';
import {
  batchnormBody, batchnormReference, ENCODINGS, expectBatchnormAnswer, expectNanOrClose, post, tensorBytes, tensorValues,
  wire, type BatchnormCase,
} from './helpers.js';

const ctx = useFreshApp({}, 'file');
const URL = '/v1/batchnorm';

const param = (dtype: Dtype, values: number[]): Param => ({ dtype, values });

/** values of `shape` whose channel c (on `axis`) is centred on offsets[c] */
function channelValues(seed: number, shape: number[], axis: number, offsets: number[], scale = 1): number[] {
  const inner = product(shape.slice(axis + 1));
  return randomValues(seed, product(shape), scale).map((v, i) => v + offsets[Math.floor(i / inner) % shape[axis]]);
}

async function answer(c: BatchnormCase, encoding: 'json' | 'msgpack' = 'msgpack') {
  return okBody(await post(ctx.app, encoding, URL, batchnormBody(c, encoding)));
}

describe.each(DTYPES)('%s in and out', (dtype) => {
  const shape = [4, 3, 5];
  const values = channelValues(1, shape, 1, [0.5, -2, 3], 2);
  const affine = { weight: param(dtype, randomValues(2, 3, 0.5, 1)), bias: param(dtype, randomValues(3, 3, 0.5)) };
  const running = { runningMean: param(dtype, randomValues(4, 3, 1)), runningVar: param(dtype, randomValues(5, 3, 0.5, 1.5)) };

  describe.each(ENCODINGS)('%s', (encoding) => {
    it('training [4, 3, 5], weight, bias, running stats, return_stats', async () => {
      const c: BatchnormCase = { dtype, shape, values, training: true, ...affine, ...running, returnStats: true };
      expectBatchnormAnswer(await answer(c, encoding), c);
    });

    it('inference [4, 3, 5], weight, bias, running stats, return_stats', async () => {
      const c: BatchnormCase = { dtype, shape, values, training: false, ...affine, ...running, returnStats: true };
      expectBatchnormAnswer(await answer(c, encoding), c);
    });
  });

  it.each(DTYPES)('training [6, 4] → output_dtype %s; float64 running stats stay float64', async (outputDtype) => {
    const c: BatchnormCase = {
      dtype, shape: [6, 4], values: randomValues(6, 24, 2, 1), training: true, outputDtype, returnStats: true,
      runningMean: param('float64', [0, 1, 2, 3]), runningVar: param('float64', [1, 1, 2, 2]),
    };
    expectBatchnormAnswer(await answer(c), c);
  });
});

describe('layouts: the channel axis', () => {
  const shape = [2, 3, 4, 5];
  const x = randomValues(10, product(shape), 2, 0.5);

  it.each<[string, number]>([
    ['channels-first (default 1)', 1],
    ['channel_axis -3 (= 1)', -3],
    ['channel_axis 2', 2],
    ['channels-last, channel_axis -1', -1],
    ['channels-last, channel_axis 3', 3],
    ['channel_axis 0', 0],
  ])('training [2, 3, 4, 5] float32, %s, running stats, return_stats', async (_name, channelAxis) => {
    const C = shape[channelAxis < 0 ? channelAxis + 4 : channelAxis];
    const c: BatchnormCase = {
      dtype: 'float32', shape, values: x, channelAxis, training: true, returnStats: true,
      runningMean: param('float32', randomValues(11, C, 1)), runningVar: param('float32', randomValues(12, C, 0.5, 1)),
      weight: param('float32', randomValues(13, C, 0.5, 1)),
    };
    expectBatchnormAnswer(await answer(c), c);
  });

  it('channel_axis -1 and 3 of a rank-4 input give the same bytes; so do -3 and the default', async () => {
    const base = { dtype: 'float32' as Dtype, shape, values: x, training: true, returnStats: true };
    const last = tensorBytes(await answer({ ...base, channelAxis: -1 }));
    const three = tensorBytes(await answer({ ...base, channelAxis: 3 }));
    const first = tensorBytes(await answer(base));
    const minusThree = tensorBytes(await answer({ ...base, channelAxis: -3 }));
    for (const name of ['output', 'mean', 'rstd']) {
      expect(last[name].equals(three[name]), name).toBe(true);
      expect(first[name].equals(minusThree[name]), name).toBe(true);
    }
  });

  it.each<[string, number[], number]>([
    ['[N, C] = [5, 3]', [5, 3], 1],
    ['[N, C, L] = [3, 2, 7]', [3, 2, 7], 1],
    ['[N, L, C] = [3, 7, 2], channel_axis -1', [3, 7, 2], -1],
    ['rank 8 [2, 1, 2, 1, 2, 1, 3, 2], channel_axis 6', [2, 1, 2, 1, 2, 1, 3, 2], 6],
  ])('training and inference, float64 %s', async (_name, s, channelAxis) => {
    const C = s[channelAxis < 0 ? channelAxis + s.length : channelAxis];
    const values = randomValues(14, product(s), 3, 1);
    const running = { runningMean: param('float64', randomValues(15, C, 1)), runningVar: param('float64', randomValues(16, C, 0.5, 1)) };
    for (const training of [true, false]) {
      const c: BatchnormCase = { dtype: 'float64', shape: s, values, channelAxis, training, ...running, returnStats: true };
      expectBatchnormAnswer(await answer(c), c);
    }
  });
});

describe('options', () => {
  const shape = [6, 3, 4];
  const values = channelValues(20, shape, 1, [1, -1, 4], 1.5);
  const running = { runningMean: param('float32', [0.5, -0.5, 1]), runningVar: param('float32', [2, 0.5, 1]) };

  it('training defaults to false: running stats are inputs only, the answer has output alone (and Server-Timing)', async () => {
    const c: BatchnormCase = { dtype: 'float32', shape, values, ...running };
    const res = await postMsgpack(ctx.app, URL, batchnormBody(c, 'msgpack'));
    expectServerTiming(res);
    const body = okBody(res);
    expect(Object.keys(body)).toEqual(['output']);
    expectBatchnormAnswer(body, c);
  });

  it('inference return_stats: mean is running_mean, rstd is 1/sqrt(running_var + eps)', async () => {
    const c: BatchnormCase = { dtype: 'float32', shape, values, training: false, ...running, eps: 0.25, returnStats: true };
    const body = await answer(c);
    expectClose(tensorValues(body.mean, 'float32', [3]), [0.5, -0.5, 1], 'float32');
    expectClose(tensorValues(body.rstd, 'float32', [3]), [2, 0.5, 1].map((v) => 1 / Math.sqrt(v + 0.25)), 'float32');
    expectBatchnormAnswer(body, c);
  });

  it('training without running stats: output (and stats), no running stats', async () => {
    const c: BatchnormCase = { dtype: 'float32', shape, values, training: true, returnStats: true };
    const body = await answer(c);
    expect(Object.keys(body).sort()).toEqual(['mean', 'output', 'rstd']);
    expectBatchnormAnswer(body, c);
  });

  it('training, momentum 0: the running stats come back exactly as sent', async () => {
    const c: BatchnormCase = { dtype: 'float32', shape, values, training: true, momentum: 0, ...running };
    const body = await answer(c);
    expect(tensorValues(body.running_mean, 'float32', [3])).toEqual([0.5, -0.5, 1]);
    expect(tensorValues(body.running_var, 'float32', [3])).toEqual([2, 0.5, 1]);
    expectBatchnormAnswer(body, c);
  });

  it('training, momentum 1: running_mean is the batch mean, running_var the unbiased batch variance', async () => {
    const c: BatchnormCase = { dtype: 'float64', shape, values, training: true, momentum: 1, runningMean: param('float64', [9, 9, 9]), runningVar: param('float64', [9, 9, 9]) };
    const ref = batchnormReference(c);
    const body = await answer(c);
    const M = 24;
    expectClose(tensorValues(body.running_mean, 'float64', [3]), ref.mean, 'float64');
    expectClose(tensorValues(body.running_var, 'float64', [3]), ref.variance.map((v) => (v * M) / (M - 1)), 'float64');
  });

  it('training, momentum 0.25, running_mean float16, running_var float64, weight bfloat16, bias float64: each comes back in its dtype', async () => {
    const c: BatchnormCase = {
      dtype: 'float32', shape, values, training: true, momentum: 0.25, returnStats: true,
      runningMean: param('float16', [0.1, 0.2, -0.3]), runningVar: param('float64', [1.1, 0.9, 2]),
      weight: param('bfloat16', [1.5, -0.5, 2]), bias: param('float64', [0.25, 0, -1]),
    };
    expectBatchnormAnswer(await answer(c, 'json'), c);
    expectBatchnormAnswer(await answer(c, 'msgpack'), c);
  });

  it.each([0, 1])('training and inference, eps %d', async (eps) => {
    for (const training of [true, false]) {
      const c: BatchnormCase = { dtype: 'float32', shape, values, training, eps, ...running, returnStats: true };
      expectBatchnormAnswer(await answer(c), c);
    }
  });

  it('running stats and weight as msgpackr Float64Array / Float32Array extensions', async () => {
    const c: BatchnormCase = {
      dtype: 'float32', shape, values, training: true, returnStats: true,
      runningMean: param('float64', [0.5, -0.5, 1]), runningVar: param('float64', [2, 0.5, 1]), weight: param('float32', [1, 2, 3]),
    };
    const res = await postMsgpack(ctx.app, URL, packTyped({
      input: { dtype: 'float32', shape, data: new Float32Array(values) }, training: true, return_stats: true,
      running_mean: { shape: [3], data: new Float64Array([0.5, -0.5, 1]) }, running_var: { dtype: 'float64', shape: [3], data: new Float64Array([2, 0.5, 1]) },
      weight: { shape: [3], data: new Float32Array([1, 2, 3]) },
    }));
    expectBatchnormAnswer(okBody(res), c);
  });

  it('a whole-number float channel_axis (-1.0 as a msgpack float64) is accepted', async () => {
    const c: BatchnormCase = { dtype: 'float32', shape: [3, 2, 4], values: randomValues(21, 24, 2), channelAxis: -1, training: true };
    const head = Buffer.from([0x83, 0xa5, ...Buffer.from('input')]);
    const input = pack(wire('msgpack', 'float32', [3, 2, 4], c.values));
    const training = Buffer.from([0xa8, ...Buffer.from('training'), 0xc3]);
    const axis = Buffer.from([0xac, ...Buffer.from('channel_axis'), 0xcb, 0xbf, 0xf0, 0, 0, 0, 0, 0, 0]);
    expectBatchnormAnswer(okBody(await postMsgpack(ctx.app, URL, Buffer.concat([head, input, training, axis]))), c);
  });

  it('msgpack-numpy ndarray input: every tensor of the answer (running stats and stats too) in the ndarray form', async () => {
    const key = (name: string) => Buffer.from(name);
    const input = new Map<Buffer, unknown>([
      [key('nd'), true], [key('type'), '<f4'], [key('kind'), Buffer.alloc(0)], [key('shape'), shape], [key('data'), bytesOf('float32', values)],
    ]);
    const c: BatchnormCase = { dtype: 'float32', shape, values, training: true, ...running, returnStats: true };
    const res = await postMsgpack(ctx.app, URL, { ...batchnormBody(c, 'msgpack'), input });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const body = unpackMaps(res.rawPayload) as Map<string, Map<Uint8Array, unknown>>;
    expect([...body.keys()].sort()).toEqual(['mean', 'output', 'rstd', 'running_mean', 'running_var']);
    const ref = batchnormReference(c);
    const expected: Record<string, [number[], number[]]> = {
      output: [shape, ref.output], running_mean: [[3], ref.runningMean!], running_var: [[3], ref.runningVar!], mean: [[3], ref.mean], rstd: [[3], ref.rstd],
    };
    for (const [name, tensor] of body) {
      const fields = new Map([...tensor].map(([k, v]) => [Buffer.from(k).toString(), v]));
      expect([...fields.keys()], name).toEqual(['nd', 'type', 'kind', 'shape', 'data']);
      expect(fields.get('type'), name).toBe('<f4');
      expect(fields.get('shape'), name).toEqual(expected[name][0]);
      expectClose(valuesFromBytes('float32', fields.get('data') as Uint8Array), expected[name][1], 'float32');
    }
  });
});

describe('empty tensors', () => {
  const running = (C: number) => ({ runningMean: param('float32', new Array(C).fill(0.5)), runningVar: param('float32', new Array(C).fill(2)) });

  it('inference with N = 0: [0, 3, 4] → empty output; stats are the running ones', async () => {
    const c: BatchnormCase = { dtype: 'float32', shape: [0, 3, 4], values: [], ...running(3), returnStats: true };
    const body = await answer(c, 'json');
    expect(tensorValues(body.output, 'float32', [0, 3, 4])).toEqual([]);
    expectBatchnormAnswer(body, c);
  });

  it.each<[string, number[], boolean, number]>([
    ['training [4, 0, 3]', [4, 0, 3], true, 1],
    ['inference [4, 0, 3]', [4, 0, 3], false, 1],
    ['training [0, 0] (no group, so no M ≤ 1 check)', [0, 0], true, 1],
    ['training [3, 5, 0] channels-last', [3, 5, 0], true, -1],
    ['inference [0, 0, 2]', [0, 0, 2], false, 1],
  ])('C = 0, %s → empty output, empty stats', async (_name, shape, training, channelAxis) => {
    for (const encoding of ENCODINGS) {
      const c: BatchnormCase = { dtype: 'float32', shape, values: [], channelAxis, training, ...running(0), returnStats: true };
      const body = await answer(c, encoding);
      expect(tensorValues(body.output, 'float32', shape)).toEqual([]);
      expect(tensorValues(body.mean, 'float32', [0])).toEqual([]);
      expect(tensorValues(body.rstd, 'float32', [0])).toEqual([]);
      if (training) {
        expect(tensorValues(body.running_mean, 'float32', [0])).toEqual([]);
        expect(tensorValues(body.running_var, 'float32', [0])).toEqual([]);
      }
      expectBatchnormAnswer(body, c);
    }
  });

  it('training C = 0 without running stats and without return_stats → output only', async () => {
    const body = await answer({ dtype: 'float64', shape: [2, 0], values: [], training: true }, 'json');
    expect(Object.keys(body)).toEqual(['output']);
    expect(tensorValues(body.output, 'float64', [2, 0])).toEqual([]);
  });
});

describe('special values', () => {
  const shape = [4, 3, 5];
  const running = { runningMean: param('float32', [0.1, 0.2, 0.3]), runningVar: param('float32', [1, 2, 3]) };
  /** positions of channel c of [4, 3, 5] */
  const ofChannel = (c: number) => [...Array(60).keys()].filter((i) => Math.floor(i / 5) % 3 === c);
  const pick = (xs: readonly number[], idx: number[]) => idx.map((i) => xs[i]);

  it.each<[string, number]>([['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity]])(
    'training, %s in channel 1: that channel NaN or the IEEE formula, channels 0 and 2 exact (output, stats, running stats)', async (_name, special) => {
      const values = randomValues(30, 60, 2);
      values[5 * 3 * 2 + 5 + 3] = special; // sample 2, channel 1, position 3
      const c: BatchnormCase = { dtype: 'float32', shape, values, training: true, ...running, returnStats: true };
      const ref = batchnormReference(c);
      const body = await answer(c, 'json');
      const out = tensorValues(body.output, 'float32', shape);
      for (const ch of [0, 2]) expectClose(pick(out, ofChannel(ch)), pick(ref.output, ofChannel(ch)), 'float32');
      expectNanOrClose(pick(out, ofChannel(1)), pick(ref.output, ofChannel(1)), 'float32');
      for (const [name, expected] of [['mean', ref.mean], ['rstd', ref.rstd], ['running_mean', ref.runningMean!], ['running_var', ref.runningVar!]] as const) {
        const got = tensorValues(body[name], 'float32', [3]);
        expectClose(pick(got, [0, 2]), pick(expected, [0, 2]), 'float32');
        expectNanOrClose(pick(got, [1]), pick(expected, [1]), 'float32');
      }
    });

  it('inference, NaN in one element of channel 2: that element NaN, the rest NaN or the formula, other channels exact', async () => {
    const values = randomValues(31, 60, 2);
    values[10 + 1] = NaN; // sample 0, channel 2, position 1
    const c: BatchnormCase = { dtype: 'float32', shape, values, ...running };
    const ref = batchnormReference(c);
    const out = tensorValues((await answer(c)).output, 'float32', shape);
    expect(out[11]).toBeNaN();
    for (const ch of [0, 1]) expectClose(pick(out, ofChannel(ch)), pick(ref.output, ofChannel(ch)), 'float32');
    expectNanOrClose(pick(out, ofChannel(2)), pick(ref.output, ofChannel(2)), 'float32');
  });

  it('inference with a negative running_var: that channel NaN (not checked, no error), the others exact', async () => {
    const values = randomValues(32, 60, 2);
    const c: BatchnormCase = { dtype: 'float32', shape, values, runningMean: param('float32', [0, 0, 0]), runningVar: param('float32', [1, -4, 1]), returnStats: true };
    const ref = batchnormReference(c);
    const body = await answer(c, 'json');
    const out = tensorValues(body.output, 'float32', shape);
    expect(pick(out, ofChannel(1))).toEqual(new Array(20).fill(NaN));
    for (const ch of [0, 2]) expectClose(pick(out, ofChannel(ch)), pick(ref.output, ofChannel(ch)), 'float32');
    expect(tensorValues(body.rstd, 'float32', [3])[1]).toBeNaN();
  });

  it('training, eps 0, a constant channel: that channel NaN (0 · ∞), the others exact', async () => {
    const values = randomValues(33, 60, 2);
    for (const i of ofChannel(0)) values[i] = 0.75;
    const c: BatchnormCase = { dtype: 'float32', shape, values, training: true, eps: 0 };
    const ref = batchnormReference(c);
    const out = tensorValues((await answer(c)).output, 'float32', shape);
    expect(pick(out, ofChannel(0))).toEqual(new Array(20).fill(NaN));
    for (const ch of [1, 2]) expectClose(pick(out, ofChannel(ch)), pick(ref.output, ofChannel(ch)), 'float32');
  });
});

describe('hard inputs', () => {
  it.each<[Dtype, number]>([['float32', 1], ['float64', 1], ['float32', -1], ['float64', -1]])(
    'groups whose mean is ~1e6 × their std: %s, channel_axis %d, training with running stats and stats', async (dtype, channelAxis) => {
      const shape = channelAxis === 1 ? [16, 3, 32] : [16, 32, 3];
      const axis = channelAxis === 1 ? 1 : 2;
      // uniform on ±1 has std 0.577: means of 5e5 are ~0.9e6 std
      const values = channelValues(40, shape, axis, [5e5, -5e5, 2.5e5], 1);
      const c: BatchnormCase = {
        dtype, shape, values, channelAxis, training: true, returnStats: true,
        runningMean: param('float64', [0, 0, 0]), runningVar: param('float64', [1, 1, 1]),
      };
      expectBatchnormAnswer(await answer(c), c);
    });

  it.each<Dtype>(['float32', 'float64'])('inference with running_mean 5e5 and a group of std ~0.6 around it: %s', async (dtype) => {
    const shape = [16, 2, 32];
    const values = channelValues(41, shape, 1, [5e5, -5e5], 1);
    const c: BatchnormCase = { dtype, shape, values, runningMean: param('float64', [5e5, -5e5]), runningVar: param('float64', [1 / 3, 1 / 3]), returnStats: true };
    expectBatchnormAnswer(await answer(c), c);
  });

  it.each<[string, number, number]>([
    ['near 1e30', 1e30, 1e-5],
    ['near 1e-30 (eps 0)', 1e-30, 0],
  ])('float32 values %s: squares leave float32 but not float64; float64 running stats', async (_name, scale, eps) => {
    const shape = [8, 3, 6];
    const values = channelValues(42, shape, 1, [scale, -2 * scale, 0], scale);
    for (const training of [true, false]) {
      const c: BatchnormCase = {
        dtype: 'float32', shape, values, training, eps, returnStats: true,
        runningMean: param('float64', [scale, -2 * scale, 0]), runningVar: param('float64', [scale * scale, scale * scale / 3, scale * scale]),
      };
      expectBatchnormAnswer(await answer(c), c);
    }
  });
});

describe('float32 values near 1e36, a running mean there and r ~ 1e-30', () => {
  it.each([false, true])('training %s, float64 running stats', async (training) => {
    const shape = [6, 2, 5];
    const values = channelValues(43, shape, 1, [1e36, -3e35], 1e30);
    const c: BatchnormCase = {
      dtype: 'float32', shape, values, training, returnStats: true,
      runningMean: param('float64', [1e36, -3e35]), runningVar: param('float64', [1e60, 4e59]), bias: param('float32', [1, -2]),
    };
    expectBatchnormAnswer(await answer(c), c);
  });
});

describe('large tensors go through the worker pool (> 128 Ki elements)', () => {
  it.each<[string, number[], number, Dtype, Dtype, boolean]>([
    ['training [8, 4, 96, 96] float32 channels-first', [8, 4, 96, 96], 1, 'float32', 'float32', true],
    ['training [8, 96, 96, 4] float32 channels-last', [8, 96, 96, 4], -1, 'float32', 'float32', true],
    ['training [4, 5, 33, 257] float64, 5 channels, odd sizes', [4, 5, 33, 257], 1, 'float64', 'float64', true],
    ['inference [8, 4, 96, 96] float16 → float32', [8, 4, 96, 96], 1, 'float16', 'float32', false],
  ])('%s', async (_name, shape, channelAxis, dtype, outputDtype, training) => {
    const axis = channelAxis < 0 ? channelAxis + shape.length : channelAxis;
    const C = shape[axis];
    const values = channelValues(50, shape, axis, [3, -1, 0.5, 100, -7].slice(0, C), 2);
    const c: BatchnormCase = {
      dtype, shape, values, channelAxis, training, outputDtype, returnStats: true, momentum: 0.3,
      runningMean: param('float32', randomValues(51, C, 1)), runningVar: param('float32', randomValues(52, C, 0.5, 2)),
      weight: param('float32', randomValues(53, C, 0.5, 1)), bias: param('float32', randomValues(54, C, 1)),
    };
    expectBatchnormAnswer(await answer(c), c);
  });
});

describe('large groups whose mean is ~1e6 × their std, through the pool (partial statistics per block, then combined)', () => {
  it.each<[string, number[], number, Dtype]>([
    ['float32 [32, 2, 96, 48], channels-first', [32, 2, 96, 48], 1, 'float32'],
    ['float64 [32, 96, 48, 2], channels-last', [32, 96, 48, 2], -1, 'float64'],
  ])('training %s, running stats and stats', async (_name, shape, channelAxis, dtype) => {
    const axis = channelAxis < 0 ? channelAxis + shape.length : channelAxis;
    const c: BatchnormCase = {
      dtype, shape, values: channelValues(60, shape, axis, [5e5, -2.5e5], 1), channelAxis, training: true, returnStats: true,
      runningMean: param('float64', [5e5, 0]), runningVar: param('float64', [1, 1]),
    };
    expectBatchnormAnswer(await answer(c), c);
  });
});

describe('channels of very different scales in one tensor (large bias, tiny or huge r·γ beside ordinary ones)', () => {
  it.each<[string, number[], number]>([
    ['channels-last [8, 96, 48, 8] float32, through the pool', [8, 96, 48, 8], -1],
    ['channels-first [8, 8, 96, 48] float32, through the pool', [8, 8, 96, 48], 1],
    ['channels-last [4, 5, 8] float32, inline', [4, 5, 8], -1],
  ])('%s, training and inference', async (_name, shape, channelAxis) => {
    const axis = channelAxis < 0 ? channelAxis + shape.length : channelAxis;
    const values = channelValues(70, shape, axis, [0, 3, -1e4, 2, 0.5, 1e20, -7, 1], 2);
    for (const training of [true, false]) {
      const c: BatchnormCase = {
        dtype: 'float32', shape, values, channelAxis, training, returnStats: true,
        runningMean: param('float32', [0, 3, -1e4, 2, 0.5, 1e20, -7, 1]), runningVar: param('float32', [1, 1, 1, 1e-20, 1e20, 1e38, 1, 1]),
        weight: param('float32', [1, 1e-30, 1, 1e30, 2, 1, 1e35, 1]), bias: param('float32', [0, 100, -1e6, 0, 1e-3, 0, 0, 17]),
      };
      expectBatchnormAnswer(await answer(c), c);
    }
  });
});

describe('property: random shapes, channel axes and modes', () => {
  it('answers the reference, or the M ≤ 1 400 in training', async () => {
    const arb = fc.record({
      shape: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 2, maxLength: 4 }),
      axisPick: fc.nat(),
      negative: fc.boolean(),
      training: fc.boolean(),
      dtype: fc.constantFrom<Dtype>(...DTYPES),
      statDtype: fc.constantFrom<Dtype>(...DTYPES),
      seed: fc.nat(),
    });
    await fc.assert(fc.asyncProperty(arb, async ({ shape, axisPick, negative, training, dtype, statDtype, seed }) => {
      const axis = axisPick % shape.length;
      const channelAxis = negative ? axis - shape.length : axis;
      const C = shape[axis];
      const size = product(shape);
      const c: BatchnormCase = {
        dtype, shape, values: randomValues(seed, size, 2, 0.5), channelAxis, training, returnStats: true,
        runningMean: param(statDtype, randomValues(seed + 1, C, 1)), runningVar: param(statDtype, randomValues(seed + 2, C, 0.5, 1)),
      };
      const res = await postMsgpack(ctx.app, URL, batchnormBody(c, 'msgpack'));
      if (training && C > 0 && size / C <= 1) {
        expect(res.json()).toEqual({
          statusCode: 400, code: 'NORM_ERR_TOO_FEW_VALUES', error: 'Bad Request',
          message: `input.shape: [${shape.join(', ')}] gives ${size / C} value(s) per channel; training needs at least 2`,
        });
        return;
      }
      expectBatchnormAnswer(okBody(res), c);
    }), { numRuns: 50, seed: 8, endOnFailure: true });
  });
});
