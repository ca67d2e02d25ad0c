// API.md §5 and §8: every 400 of POST /v1/batchnorm with its whole body, in JSON and in msgpack.
import { describe, expect, it } from 'vitest';
import { okBody, postJson, postMsgpack, useFreshApp } from '../helpers/http.js';
import { bytesOf } from '../helpers/tensors.js';
import { asMsgpack, expectErrorBoth, tensorValues, wire } from './helpers.js';

const ctx = useFreshApp({}, 'file');
const URL = '/v1/batchnorm';

describe('400, whole body, in JSON and msgpack', () => {
  const data8 = [1, 2, 3, 4, 5, 6, 7, 8];
  const input = { shape: [2, 4], data: data8 };
  const rm = { shape: [4], data: [0, 0, 0, 0] };
  const rv = { shape: [4], data: [1, 1, 1, 1] };
  const ok = { input, running_mean: rm, running_var: rv };
  const DTYPE_LIST = '"float32", "float64", "float16", "bfloat16"';
  const fewer = (shape: number[], m: number) => `input.shape: [${shape.join(', ')}] gives ${m} value(s) per channel; training needs at least 2`;

  it.each<[string, Record<string, unknown>, string, string]>([
    ['input missing', { training: true }, 'NORM_ERR_FIELD_MISSING', 'input: required field is missing'],
    ['rank 1, training', { input: { shape: [4], data: [1, 2, 3, 4] }, training: true }, 'NORM_ERR_SHAPE_MISMATCH', 'input.shape: rank 1; batchnorm needs rank ≥ 2'],
    ['rank 1, inference with running stats', { input: { shape: [4], data: [1, 2, 3, 4] }, running_mean: rm, running_var: rv }, 'NORM_ERR_SHAPE_MISMATCH', 'input.shape: rank 1; batchnorm needs rank ≥ 2'],
    ['channel_axis 2 of rank 2', { input, training: true, channel_axis: 2 }, 'NORM_ERR_AXIS_RANGE', 'channel_axis: 2 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)'],
    ['channel_axis -3 of rank 2', { input, training: true, channel_axis: -3 }, 'NORM_ERR_AXIS_RANGE', 'channel_axis: -3 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)'],
    ['channel_axis 4 of rank 4', { input: { shape: [2, 2, 1, 2], data: data8 }, training: true, channel_axis: 4 }, 'NORM_ERR_AXIS_RANGE', 'channel_axis: 4 is out of range for an input of rank 4 (needs -4 ≤ axis < 4)'],
    ['channel_axis 0.5', { input, training: true, channel_axis: 0.5 }, 'NORM_ERR_FIELD_INVALID', 'channel_axis: must be integer'],
    ['channel_axis "1" (no coercion)', { input, training: true, channel_axis: '1' }, 'NORM_ERR_FIELD_INVALID', 'channel_axis: must be integer'],
    ['channel_axis null', { input, training: true, channel_axis: null }, 'NORM_ERR_FIELD_INVALID', 'channel_axis: must be integer'],
    ['training "true" (no coercion)', { input, training: 'true' }, 'NORM_ERR_FIELD_INVALID', 'training: must be boolean'],
    ['training 1', { input, training: 1 }, 'NORM_ERR_FIELD_INVALID', 'training: must be boolean'],
    ['training null', { ...ok, training: null }, 'NORM_ERR_FIELD_INVALID', 'training: must be boolean'],
    ['momentum 1.5', { input, training: true, momentum: 1.5 }, 'NORM_ERR_FIELD_INVALID', 'momentum: must be <= 1'],
    ['momentum -0.1', { input, training: true, momentum: -0.1 }, 'NORM_ERR_FIELD_INVALID', 'momentum: must be >= 0'],
    ['momentum "0.1" (no coercion)', { input, training: true, momentum: '0.1' }, 'NORM_ERR_FIELD_INVALID', 'momentum: must be number'],
    ['eps -1e-5', { ...ok, eps: -1e-5 }, 'NORM_ERR_FIELD_INVALID', 'eps: must be >= 0'],
    ['return_stats 1', { ...ok, return_stats: 1 }, 'NORM_ERR_FIELD_INVALID', 'return_stats: must be boolean'],
    ['output_dtype int8', { ...ok, output_dtype: 'int8' }, 'NORM_ERR_DTYPE_UNKNOWN', `output_dtype: must be one of ${DTYPE_LIST}`],
    ['running_mean null', { ...ok, running_mean: null }, 'NORM_ERR_FIELD_INVALID', 'running_mean: must be object'],
    ['weight null', { ...ok, weight: null }, 'NORM_ERR_FIELD_INVALID', 'weight: must be object'],
    ['momentum null', { input, training: true, momentum: null }, 'NORM_ERR_FIELD_INVALID', 'momentum: must be number'],
    ['running_mean.dtype int8', { ...ok, running_mean: { ...rm, dtype: 'int8' } }, 'NORM_ERR_DTYPE_UNKNOWN', `running_mean.dtype: must be one of ${DTYPE_LIST}`],
    ['no running stats, training absent', { input }, 'NORM_ERR_FIELD_MISSING', 'running_mean: required when training is false'],
    ['no running stats, training false', { input, training: false }, 'NORM_ERR_FIELD_MISSING', 'running_mean: required when training is false'],
    ['running_var missing, training false', { input, training: false, running_mean: rm }, 'NORM_ERR_FIELD_MISSING', 'running_var: required when training is false'],
    ['running_mean missing, training absent', { input, running_var: rv }, 'NORM_ERR_FIELD_MISSING', 'running_mean: required when training is false'],
    ['training with running_mean alone', { input, training: true, running_mean: rm }, 'NORM_ERR_FIELD_MISSING', 'running_var: required when running_mean is sent'],
    ['training with running_var alone', { input, training: true, running_var: rv }, 'NORM_ERR_FIELD_MISSING', 'running_mean: required when running_var is sent'],
    ['weight [3] for C = 4', { ...ok, weight: { shape: [3], data: [1, 1, 1] } }, 'NORM_ERR_SHAPE_MISMATCH', 'weight.shape: [3] must be [4]'],
    ['bias [1, 4]', { ...ok, bias: { shape: [1, 4], data: [0, 0, 0, 0] } }, 'NORM_ERR_SHAPE_MISMATCH', 'bias.shape: [1, 4] must be [4]'],
    ['running_mean [2]', { ...ok, running_mean: { shape: [2], data: [0, 0] } }, 'NORM_ERR_SHAPE_MISMATCH', 'running_mean.shape: [2] must be [4]'],
    ['running_var [4, 1], training', { ...ok, training: true, running_var: { shape: [4, 1], data: [1, 1, 1, 1] } }, 'NORM_ERR_SHAPE_MISMATCH', 'running_var.shape: [4, 1] must be [4]'],
    ['running_mean of the whole input shape', { ...ok, running_mean: input }, 'NORM_ERR_SHAPE_MISMATCH', 'running_mean.shape: [2, 4] must be [4]'],
    ['channels-last [2, 3, 4] with weight [3]', { input: { shape: [2, 3, 4], data: new Array(24).fill(1) }, training: true, channel_axis: -1, weight: { shape: [3], data: [1, 1, 1] } },
      'NORM_ERR_SHAPE_MISMATCH', 'weight.shape: [3] must be [4]'],
    ['channel_axis 0 of [2, 4] with weight [4]', { input, training: true, channel_axis: 0, weight: { shape: [4], data: [1, 1, 1, 1] } }, 'NORM_ERR_SHAPE_MISMATCH', 'weight.shape: [4] must be [2]'],
    ['running_mean data shorter than its shape', { ...ok, running_mean: { shape: [4], data: [0, 0] } }, 'NORM_ERR_DATA_LENGTH', 'running_mean.data: 2 numbers, but shape [4] needs 4'],
    ['training [1, 4]: M = 1', { input: { shape: [1, 4], data: [1, 2, 3, 4] }, training: true }, 'NORM_ERR_TOO_FEW_VALUES', fewer([1, 4], 1)],
    ['training [1, 4] with running stats', { input: { shape: [1, 4], data: [1, 2, 3, 4] }, training: true, running_mean: rm, running_var: rv }, 'NORM_ERR_TOO_FEW_VALUES', fewer([1, 4], 1)],
    ['training [0, 3]: N = 0', { input: { shape: [0, 3], data: [] }, training: true }, 'NORM_ERR_TOO_FEW_VALUES', fewer([0, 3], 0)],
    ['training [0, 3, 5]', { input: { shape: [0, 3, 5], data: [] }, training: true }, 'NORM_ERR_TOO_FEW_VALUES', fewer([0, 3, 5], 0)],
    ['training [2, 3, 0]: a zero spatial dimension', { input: { shape: [2, 3, 0], data: [] }, training: true }, 'NORM_ERR_TOO_FEW_VALUES', fewer([2, 3, 0], 0)],
    ['training [1, 3, 1]', { input: { shape: [1, 3, 1], data: [1, 2, 3] }, training: true }, 'NORM_ERR_TOO_FEW_VALUES', fewer([1, 3, 1], 1)],
    ['training [1, 1, 3] channels-last', { input: { shape: [1, 1, 3], data: [1, 2, 3] }, training: true, channel_axis: -1 }, 'NORM_ERR_TOO_FEW_VALUES', fewer([1, 1, 3], 1)],
    ['training [3, 1], channel_axis 0', { input: { shape: [3, 1], data: [1, 2, 3] }, training: true, channel_axis: 0 }, 'NORM_ERR_TOO_FEW_VALUES', fewer([3, 1], 1)],
    ['unknown field axis', { ...ok, axis: 1 }, 'NORM_ERR_FIELD_UNKNOWN', 'axis: unknown field'],
    ['unknown field num_groups', { ...ok, num_groups: 2 }, 'NORM_ERR_FIELD_UNKNOWN', 'num_groups: unknown field'],
    ['unknown field partial', { ...ok, partial: 1 }, 'NORM_ERR_FIELD_UNKNOWN', 'partial: unknown field'],
    ['unknown field residual', { ...ok, residual: input }, 'NORM_ERR_FIELD_UNKNOWN', 'residual: unknown field'],
    ['unknown field weight_offset', { ...ok, weight_offset: 1 }, 'NORM_ERR_FIELD_UNKNOWN', 'weight_offset: unknown field'],
    ['unknown field eps_placement', { ...ok, eps_placement: 'inside' }, 'NORM_ERR_FIELD_UNKNOWN', 'eps_placement: unknown field'],
    ['unknown field epsilon', { ...ok, epsilon: 1e-5 }, 'NORM_ERR_FIELD_UNKNOWN', 'epsilon: unknown field'],
    ['unknown field running_mean.strides', { ...ok, running_mean: { ...rm, strides: [1] } }, 'NORM_ERR_FIELD_UNKNOWN', 'running_mean.strides: unknown field'],
  ])('%s', async (_name, body, code, message) => {
    await expectErrorBoth(ctx.app, URL, body, code, message);
  });

  it('a msgpack-numpy ndarray with a strides key → 400 naming it (input.strides, running_mean.strides)', async () => {
    const key = (name: string) => Buffer.from(name);
    const nd = (shape: number[], values: number[]) => new Map<Buffer, unknown>([
      [key('nd'), true], [key('type'), '<f4'], [key('kind'), Buffer.alloc(0)], [key('shape'), shape], [key('strides'), [4]], [key('data'), bytesOf('float32', values)],
    ]);
    const res = await postMsgpack(ctx.app, URL, { input: nd([2, 4], data8), training: true });
    expect(res.json()).toEqual({ statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'input.strides: unknown field' });
    expect(res.statusCode).toBe(400);
    const running = await postMsgpack(ctx.app, URL, { input: wire('msgpack', 'float32', [2, 4], data8), running_mean: nd([4], [0, 0, 0, 0]), running_var: asMsgpack(rv) });
    expect(running.json()).toEqual({ statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'running_mean.strides: unknown field' });
    expect(running.statusCode).toBe(400);
  });

  it('JSON list data also works for a valid body (sanity: the error cases differ from it in one field)', async () => {
    const body = okBody(await postJson(ctx.app, URL, ok));
    expect(tensorValues(body.output, 'float32', [2, 4])).toHaveLength(8);
  });
});
