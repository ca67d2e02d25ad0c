// API.md §1: msgpack-numpy ndarrays (bin keys) in, and the same form back; numpy scalars as numbers.
import { describe, expect, it } from 'vitest';
import { expectError, expectServerTiming, okBody, postMsgpack, unpackMaps, useFreshApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { bytesOf, randomValues, valuesFromBytes, valuesOf, type Dtype } from '../helpers/tensors.js';

const ctx = useFreshApp();

const key = (name: string) => Buffer.from(name);
const NUMPY_TYPE: Partial<Record<Dtype, string>> = { float32: '<f4', float64: '<f8', float16: '<f2' };

/** an ndarray as msgpack-numpy packs it: every key bin, kind an empty bin */
function ndarray(dtype: Dtype, shape: number[], values: number[]): Map<Buffer, unknown> {
  return new Map<Buffer, unknown>([
    [key('nd'), true], [key('type'), NUMPY_TYPE[dtype]], [key('kind'), Buffer.alloc(0)], [key('shape'), shape], [key('data'), bytesOf(dtype, values)],
  ]);
}

/** a numpy scalar: `{nd: false, type, data}` with bin keys */
function scalar(type: string, data: Uint8Array): Map<Buffer, unknown> {
  return new Map<Buffer, unknown>([[key('nd'), false], [key('type'), type], [key('data'), data]]);
}

const f64 = (v: number) => bytesOf('float64', [v]);

/** a response tensor in numpy form: a Map whose keys are all bin, in msgpack-numpy's order */
function expectNumpyForm(tensor: unknown, dtype: Dtype, shape: number[]): number[] {
  expect(tensor).toBeInstanceOf(Map);
  const map = tensor as Map<unknown, unknown>;
  const keys = [...map.keys()];
  for (const k of keys) expect(k).toBeInstanceOf(Uint8Array);
  expect(keys.map((k) => Buffer.from(k as Uint8Array).toString())).toEqual(['nd', 'type', 'kind', 'shape', 'data']);
  const field = (name: string) => [...map].find(([k]) => Buffer.from(k as Uint8Array).toString() === name)![1];
  expect(field('nd')).toBe(true);
  expect(field('type')).toBe(NUMPY_TYPE[dtype]);
  expect(Buffer.from(field('kind') as Uint8Array)).toEqual(Buffer.alloc(0));
  expect(field('shape')).toEqual(shape);
  return valuesFromBytes(dtype, field('data') as Uint8Array);
}

/** a response tensor in the ordinary form: string keys */
function expectOrdinaryForm(tensor: unknown, dtype: Dtype, shape: number[]): number[] {
  expect(tensor).toBeInstanceOf(Map);
  const map = tensor as Map<unknown, unknown>;
  expect([...map.keys()]).toEqual(['dtype', 'shape', 'data']);
  expect(map.get('dtype')).toBe(dtype);
  expect(map.get('shape')).toEqual(shape);
  return valuesFromBytes(dtype, map.get('data') as Uint8Array);
}

describe('ndarray in, ndarray out', () => {
  it.each(['float32', 'float64', 'float16'] as Dtype[])('layernorm 2x4 %s ndarray → output ndarray with bin keys', async (dtype) => {
    const values = randomValues(101, 8, 2, 1);
    const res = await postMsgpack(ctx.app, '/v1/layernorm', { input: ndarray(dtype, [2, 4], values) });
    expect(res.statusCode).toBe(200);
    expectServerTiming(res);
    const body = unpackMaps(res.rawPayload) as Map<string, unknown>;
    expect([...body.keys()]).toEqual(['output']);
    const out = expectNumpyForm(body.get('output'), dtype, [2, 4]);
    const ref = reference({ op: 'layernorm', dtype, shape: [2, 4], values });
    expectClose(out, ref.output, dtype, ref.largeMean);
  });

  it('rmsnorm 2x4 float32 ndarray with residual and return_stats: output, residual and rstd all ndarrays', async () => {
    const values = randomValues(102, 8, 2);
    const residual = randomValues(103, 8, 2);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: ndarray('float32', [2, 4], values), residual: ndarray('float32', [2, 4], residual), return_stats: true });
    const body = unpackMaps(res.rawPayload) as Map<string, unknown>;
    const ref = reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values, residual });
    expectClose(expectNumpyForm(body.get('output'), 'float32', [2, 4]), ref.output, 'float32');
    expect(expectNumpyForm(body.get('residual'), 'float32', [2, 4])).toEqual(ref.residual);
    expectClose(expectNumpyForm(body.get('rstd'), 'float32', [2]), ref.rstd, 'float32');
  });

  it('layernorm 2x4 float16 ndarray, output_dtype bfloat16: output in the ordinary form, mean and rstd ndarrays', async () => {
    const values = randomValues(104, 8, 2);
    const res = await postMsgpack(ctx.app, '/v1/layernorm', { input: ndarray('float16', [2, 4], values), output_dtype: 'bfloat16', return_stats: true });
    const body = unpackMaps(res.rawPayload) as Map<string, unknown>;
    const ref = reference({ op: 'layernorm', dtype: 'float16', shape: [2, 4], values, outputDtype: 'bfloat16' });
    expectClose(expectOrdinaryForm(body.get('output'), 'bfloat16', [2, 4]), ref.output, 'bfloat16');
    expectClose(expectNumpyForm(body.get('mean'), 'float32', [2]), ref.mean, 'float32');
    expectClose(expectNumpyForm(body.get('rstd'), 'float32', [2]), ref.rstd, 'float32');
  });

  it('rmsnorm 2x4 ndarray with str keys and no kind → ndarray with bin keys', async () => {
    const values = randomValues(105, 8, 2);
    const input = new Map<string, unknown>([['nd', true], ['type', '<f8'], ['shape', [2, 4]], ['data', bytesOf('float64', values)]]);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input });
    const body = unpackMaps(res.rawPayload) as Map<string, unknown>;
    expectClose(expectNumpyForm(body.get('output'), 'float64', [2, 4]), reference({ op: 'rmsnorm', dtype: 'float64', shape: [2, 4], values }).output, 'float64');
  });

  it('rmsnorm 2x4 ordinary input with ndarray weight → ordinary output (the input decides)', async () => {
    const values = randomValues(106, 8, 2);
    const weight = randomValues(107, 4, 1, 1);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float32', shape: [2, 4], data: bytesOf('float32', values) }, weight: ndarray('float64', [4], weight) });
    const body = unpackMaps(res.rawPayload) as Map<string, unknown>;
    const ref = reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values, weight: { dtype: 'float64', values: weight } });
    expectClose(expectOrdinaryForm(body.get('output'), 'float32', [2, 4]), ref.output, 'float32');
  });

  it('ndarray input answered in JSON (Accept: application/json) → ordinary JSON tensor', async () => {
    const values = randomValues(108, 8, 2);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: ndarray('float32', [2, 4], values) }, { accept: 'application/json' });
    const body = okBody(res);
    expect(body.output.dtype).toBe('float32');
    expectClose(valuesOf(body.output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values }).output, 'float32');
  });

  it('layernorm [0, 4] ndarray → empty ndarray output', async () => {
    const res = await postMsgpack(ctx.app, '/v1/layernorm', { input: ndarray('float32', [0, 4], []) });
    const body = unpackMaps(res.rawPayload) as Map<string, unknown>;
    expect(expectNumpyForm(body.get('output'), 'float32', [0, 4])).toEqual([]);
  });
});

describe('numpy scalars count as numbers', () => {
  const values = randomValues(111, 8, 2);

  it('eps as {nd: false, type: "<f8", data: 8 bytes}: same as eps 0.5', async () => {
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: ndarray('float32', [2, 4], values), eps: scalar('<f8', f64(0.5)) });
    const body = unpackMaps(res.rawPayload) as Map<string, unknown>;
    const ref = reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values, eps: 0.5 });
    expectClose(expectNumpyForm(body.get('output'), 'float32', [2, 4]), ref.output, 'float32');
  });

  it('weight_offset as a "<f4" scalar and axis as an "<i8" scalar', async () => {
    const axis = new Uint8Array(8);
    new DataView(axis.buffer).setBigInt64(0, -1n, true);
    const res = await postMsgpack(ctx.app, '/v1/layernorm', {
      input: { dtype: 'float32', shape: [2, 4], data: bytesOf('float32', values) },
      weight_offset: scalar('<f4', bytesOf('float32', [0.25])), axis: scalar('<i8', axis),
    });
    const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [2, 4], values, weightOffset: 0.25 });
    expectClose(valuesOf(okBody(res).output), ref.output, 'float32');
  });

  it('a scalar "<f8" -0.5 for eps is still a negative eps → 400', async () => {
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: ndarray('float32', [2, 4], values), eps: scalar('<f8', f64(-0.5)) });
    expectError(res, 400, 'NORM_ERR_FIELD_INVALID', 'eps: must be >= 0');
  });
});
