// API.md §1 and §4: tensors in every encoding and dtype, and the values that come back,
// checked against the float64 reference within the contract's tolerances.
import { describe, expect, it } from 'vitest';
import { bodyOf, expectServerTiming, okBody, pack, packTyped, postJson, postMsgpack, useFreshApp } from '../helpers/http.js';
import { expectClose, reference, type Op } from '../helpers/reference.js';
import { bytesOf, DTYPES, ITEMSIZE, jsonData, randomValues, valuesOf, type Dtype } from '../helpers/tensors.js';

const ctx = useFreshApp();

describe('JSON', () => {
  it('rmsnorm 2x4 float32, list in, list out, default options', async () => {
    const values = [1, 2, 3, 4, -5, 6, -7, 8];
    const res = await postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [2, 4], data: values } });
    const body = okBody(res);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(body)).toEqual(['output']);
    expect(body.output.dtype).toBe('float32');
    expect(body.output.shape).toEqual([2, 4]);
    expectClose(valuesOf(body.output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values }).output, 'float32');
    expectServerTiming(res);
  });

  it('layernorm 3x4 with "NaN" and "Infinity" in: those rows give NaN or the formula, the other row is unaffected', async () => {
    const data = [1, 2, 3, 4, 5, 'NaN', 7, 8, 'Infinity', 10, 11, 12];
    const res = await postJson(ctx.app, '/v1/layernorm', { input: { shape: [3, 4], data } });
    const out = valuesOf(okBody(res).output);
    const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [1, 4], values: [1, 2, 3, 4] });
    expectClose(out.slice(0, 4), ref.output, 'float32');
    // IEEE: a NaN or an infinite element makes μ non-finite, so the whole row is NaN
    expect(out.slice(4)).toEqual(new Array(8).fill(NaN));
    expect(okBody(res).output.data.slice(4)).toEqual(new Array(8).fill('NaN'));
  });

  it('rmsnorm 1x4 with "-Infinity" in: each position is NaN or the IEEE formula', async () => {
    const res = await postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [1, 4], data: [1, '-Infinity', 3, 4] } });
    const data = okBody(res).output.data;
    // s = ∞, r = 0: finite xᵢ give 0, the infinite one ∞·0 = NaN
    data.forEach((v: unknown, i: number) => expect(v === 'NaN' || (i !== 1 && v === 0)).toBe(true));
  });

  it('"Infinity" and "-Infinity" come back as strings: rmsnorm 2x4 with an infinite bias', async () => {
    const values = [1, 2, 3, 4, 5, 6, 7, 8];
    const bias = ['Infinity', 0, 0, '-Infinity'];
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [2, 4], data: values }, bias: { shape: [4], data: bias } }));
    expect(body.output.data[0]).toBe('Infinity');
    expect(body.output.data[3]).toBe('-Infinity');
    expect(body.output.data[4]).toBe('Infinity');
    expect(body.output.data[7]).toBe('-Infinity');
    const ref = reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values, bias: { dtype: 'float32', values: [Infinity, 0, 0, -Infinity] } });
    expectClose(valuesOf(body.output), ref.output, 'float32');
  });

  it('"NaN" comes back as a string: rmsnorm 2x4, eps 0, an all-zero row', async () => {
    const values = [0, 0, 0, 0, 1, 2, 3, 4];
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [2, 4], data: values }, eps: 0 }));
    expect(body.output.data.slice(0, 4)).toEqual(['NaN', 'NaN', 'NaN', 'NaN']);
    expectClose(valuesOf(body.output).slice(4), reference({ op: 'rmsnorm', dtype: 'float32', shape: [1, 4], values: [1, 2, 3, 4], eps: 0 }).output, 'float32');
  });

  it('float16 output beyond its range becomes "Infinity": rmsnorm 1x4, weight_offset 1e5', async () => {
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', {
      input: { shape: [1, 4], data: [1, 1, -1, 1e-3] }, weight_offset: 1e5, output_dtype: 'float16',
    }));
    expect(body.output.data.slice(0, 3)).toEqual(['Infinity', 'Infinity', '-Infinity']);
    expect(typeof body.output.data[3]).toBe('number');
  });
});

type Encoding = 'JSON list' | 'msgpack bin' | 'msgpack list';
const ENCODINGS: Encoding[] = ['JSON list', 'msgpack bin', 'msgpack list'];

function tensor(encoding: Encoding, dtype: Dtype, shape: number[], values: number[]) {
  if (encoding === 'msgpack bin') return { dtype, shape, data: bytesOf(dtype, values) };
  return { dtype, shape, data: encoding === 'JSON list' ? jsonData(values) : values };
}

describe.each(DTYPES)('%s in and out', (dtype) => {
  const shape = [3, 8];
  const values = randomValues(7, 24, 3, 0.5);
  const weight = randomValues(8, 8, 1, 1);
  const bias = randomValues(9, 8, 0.5);

  describe.each(ENCODINGS)('%s', (encoding) => {
    it.each(['rmsnorm', 'layernorm'] as Op[])('%s 3x8 with weight and bias, output in the request encoding', async (op) => {
      const request = {
        input: tensor(encoding, dtype, shape, values),
        weight: tensor(encoding, dtype, [8], weight),
        bias: tensor(encoding, dtype, [8], bias),
      };
      const res = encoding === 'JSON list' ? await postJson(ctx.app, `/v1/${op}`, request) : await postMsgpack(ctx.app, `/v1/${op}`, request);
      const body = okBody(res);
      expectServerTiming(res);
      expect(body.output.dtype).toBe(dtype);
      expect(body.output.shape).toEqual(shape);
      if (encoding === 'JSON list') {
        expect(Array.isArray(body.output.data)).toBe(true);
      } else {
        expect(body.output.data).toBeInstanceOf(Uint8Array);
        expect(body.output.data.byteLength).toBe(24 * ITEMSIZE[dtype]);
      }
      const ref = reference({ op, dtype, shape, values, weight: { dtype, values: weight }, bias: { dtype, values: bias } });
      expectClose(valuesOf(body.output), ref.output, dtype, ref.largeMean);
    });
  });
});

describe('msgpackr typed-array extensions', () => {
  it('rmsnorm 2x4 from a Float32Array extension without dtype → float32 bin out', async () => {
    const values = randomValues(11, 8, 2);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', packTyped({ input: { shape: [2, 4], data: new Float32Array(values) } }));
    const body = okBody(res);
    expect(body.output.dtype).toBe('float32');
    expect(body.output.data).toBeInstanceOf(Uint8Array);
    expectClose(valuesOf(body.output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values }).output, 'float32');
  });

  it('layernorm 2x4 from a Float64Array extension with dtype float64, Float32Array weight → float64 bin out', async () => {
    const values = randomValues(12, 8, 2, 100);
    const weight = randomValues(13, 4, 1, 1);
    const res = await postMsgpack(ctx.app, '/v1/layernorm', packTyped({
      input: { dtype: 'float64', shape: [2, 4], data: new Float64Array(values) },
      weight: { shape: [4], data: new Float32Array(weight) },
    }));
    const body = okBody(res);
    expect(body.output.dtype).toBe('float64');
    const ref = reference({ op: 'layernorm', dtype: 'float64', shape: [2, 4], values, weight: { dtype: 'float32', values: weight } });
    expectClose(valuesOf(body.output), ref.output, 'float64', ref.largeMean);
  });

  it('a Float32Array packed without moreTypes is its raw bytes only with a byte view', async () => {
    const values = [1, 2, 3, 4];
    const f32 = new Float32Array(values);
    const body = okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float32', shape: [4], data: new Uint8Array(f32.buffer) } }));
    expectClose(valuesOf(body.output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [4], values }).output, 'float32');
  });
});

describe('bin data at any byte offset of the body', () => {
  // where the bin payload starts in the body depends on what precedes it; eps (a float64) shifts it by 13 bytes
  it.each(['float16', 'bfloat16', 'float32', 'float64'] as Dtype[])('%s 2x4 gives the same output at an odd and an even offset', async (dtype) => {
    const values = randomValues(21, 8, 4);
    const data = bytesOf(dtype, values);
    const offsets = new Set<number>();
    const outputs: number[][] = [];
    for (const withEps of [false, true]) {
      const fields = withEps ? { eps: 1e-6, input: { dtype, shape: [2, 4], data } } : { input: { dtype, shape: [2, 4], data } };
      const payload = pack(fields);
      offsets.add(payload.indexOf(Buffer.from(data)) % 2);
      outputs.push(valuesOf(okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', payload)).output));
    }
    expect(offsets).toEqual(new Set([0, 1]));
    expect(outputs[1]).toEqual(outputs[0]);
    expectClose(outputs[0], reference({ op: 'rmsnorm', dtype, shape: [2, 4], values }).output, dtype);
  });
});

describe('list values are rounded once to the input dtype', () => {
  it('float16 list 1x4 [1 + 2^-11, 1 + 3·2^-11, 2049, 65520] is read as [1, 1 + 2^-9, 2048, Infinity]', async () => {
    // ties go to even; 65520 is the first value that rounds past float16's largest finite 65504
    const data = [1 + 2 ** -11, 1 + 3 * 2 ** -11, 2049, 65520];
    const res = await postJson(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float16', shape: [1, 4], data }, residual: { dtype: 'float16', shape: [1, 4], data: [0, 0, 0, 0] } });
    expect(bodyOf(res).residual.data).toEqual([1, 1 + 2 ** -9, 2048, 'Infinity']);
  });

  it('bfloat16 list 1x3 [1 + 2^-8, 1 + 3·2^-8, 3.4e38] is read as [1, 1 + 2^-6, Infinity]', async () => {
    const data = [1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4e38];
    const res = await postJson(ctx.app, '/v1/rmsnorm', { input: { dtype: 'bfloat16', shape: [1, 3], data }, residual: { dtype: 'bfloat16', shape: [1, 3], data: [0, 0, 0] } });
    expect(bodyOf(res).residual.data).toEqual([1, 1 + 2 ** -6, 'Infinity']);
  });

  it('float32 list value 1 + 2^-24 (a tie) is read as 1, not rounded twice', async () => {
    const res = await postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [2], data: [1 + 2 ** -24, 1 + 3 * 2 ** -24] }, residual: { shape: [2], data: [0, 0] } });
    expect(bodyOf(res).residual.data).toEqual([1, 1 + 2 ** -22]);
  });
});
