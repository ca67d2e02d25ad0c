// API.md §2: every option of /v1/rmsnorm and /v1/layernorm, and the response fields it brings.
import { describe, expect, it } from 'vitest';
import { okBody, postJson, postMsgpack, useFreshApp } from '../helpers/http.js';
import { DEFAULT_EPS, expectClose, reference, type NormCase, type Op } from '../helpers/reference.js';
import { bytesOf, DTYPES, product, randomValues, valuesOf, type Dtype } from '../helpers/tensors.js';

const ctx = useFreshApp();
const OPS: Op[] = ['rmsnorm', 'layernorm'];

/** sends a case as JSON lists, the fields named as on the wire */
function send(c: NormCase, extra: Record<string, unknown> = {}) {
  const body: Record<string, unknown> = { input: { dtype: c.dtype, shape: c.shape, data: c.values }, ...extra };
  if (c.axis !== undefined) body.axis = c.axis;
  if (c.weight) body.weight = { dtype: c.weight.dtype, shape: weightShape(c), data: c.weight.values };
  if (c.bias) body.bias = { dtype: c.bias.dtype, shape: weightShape(c), data: c.bias.values };
  if (c.eps !== undefined) body.eps = c.eps;
  if (c.epsPlacement !== undefined) body.eps_placement = c.epsPlacement;
  if (c.weightOffset !== undefined) body.weight_offset = c.weightOffset;
  if (c.residual) body.residual = { dtype: c.dtype, shape: c.shape, data: c.residual };
  if (c.outputDtype !== undefined) body.output_dtype = c.outputDtype;
  return postJson(ctx.app, `/v1/${c.op}`, body);
}

function weightShape(c: NormCase): number[] {
  const axis = (c.axis ?? -1) < 0 ? (c.axis ?? -1) + c.shape.length : c.axis!;
  return c.shape.slice(axis) as number[];
}

async function expectMatches(c: NormCase, extra: Record<string, unknown> = {}) {
  const body = okBody(await send(c, extra));
  const ref = reference(c);
  const outDtype = c.outputDtype ?? c.dtype;
  expect(body.output.shape).toEqual(c.shape);
  expect(body.output.dtype).toBe(outDtype);
  expectClose(valuesOf(body.output), ref.output, outDtype, ref.largeMean);
  return { body, ref };
}

describe('axis', () => {
  const values = randomValues(31, 24, 2, 0.3);

  it.each(OPS)('%s 2x3x4, axis 1: rows of 12, weight and bias of shape [3, 4]', async (op) => {
    await expectMatches({
      op, dtype: 'float32', shape: [2, 3, 4], values, axis: 1,
      weight: { dtype: 'float32', values: randomValues(32, 12, 1, 1) }, bias: { dtype: 'float32', values: randomValues(33, 12) },
    });
  });

  it.each(OPS)('%s 2x3x4, axis -2 is axis 1', async (op) => {
    const a = okBody(await send({ op, dtype: 'float32', shape: [2, 3, 4], values, axis: -2 }));
    const b = okBody(await send({ op, dtype: 'float32', shape: [2, 3, 4], values, axis: 1 }));
    expect(a).toEqual(b);
    await expectMatches({ op, dtype: 'float32', shape: [2, 3, 4], values, axis: -2 });
  });

  it.each(OPS)('%s 2x3x4, axis 0 (and -3): one row of 24', async (op) => {
    await expectMatches({ op, dtype: 'float32', shape: [2, 3, 4], values, axis: 0 });
    await expectMatches({ op, dtype: 'float32', shape: [2, 3, 4], values, axis: -3 });
  });

  it.each(OPS)('%s 2x3x4, axis 2 and the default -1 agree: rows of 4', async (op) => {
    const a = okBody(await send({ op, dtype: 'float32', shape: [2, 3, 4], values, axis: 2 }));
    const b = okBody(await send({ op, dtype: 'float32', shape: [2, 3, 4], values }));
    expect(a).toEqual(b);
    await expectMatches({ op, dtype: 'float32', shape: [2, 3, 4], values });
  });

  it('rank 8, 1x2x1x2x1x2x1x3, axis 4: rows of 6', async () => {
    await expectMatches({ op: 'layernorm', dtype: 'float64', shape: [1, 2, 1, 2, 1, 2, 1, 3], values, axis: 4 });
  });

  it('a whole-number float axis -1.0 is accepted (JSON)', async () => {
    const res = await postJson(ctx.app, '/v1/rmsnorm', '{"input":{"shape":[2,2],"data":[1,2,3,4]},"axis":-1.0}');
    expectClose(valuesOf(okBody(res).output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 2], values: [1, 2, 3, 4] }).output, 'float32');
  });

  it('a whole-number float64 axis 1.0 and shape [2.0, 2.0] are accepted (msgpack)', async () => {
    // msgpackr packs whole numbers as integers: write the float64s by hand
    const f64 = (v: number) => { const b = Buffer.alloc(9); b[0] = 0xcb; b.writeDoubleBE(v, 1); return b; };
    const str = (s: string) => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s)]);
    const body = Buffer.concat([
      Buffer.from([0x82]), str('axis'), f64(1),
      str('input'), Buffer.from([0x83]), str('dtype'), str('float32'), str('shape'), Buffer.from([0x92]), f64(2), f64(2),
      str('data'), Buffer.from([0xc4, 16]), Buffer.from(bytesOf('float32', [1, 2, 3, 4])),
    ]);
    const out = okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', body)).output;
    expect(out.shape).toEqual([2, 2]);
    expectClose(valuesOf(out), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 2], values: [1, 2, 3, 4] }).output, 'float32');
  });
});

describe('weight and bias', () => {
  const values = randomValues(41, 16, 3, -1);

  it.each(DTYPES)('layernorm 2x8 float32 input, weight and bias in %s', async (dtype) => {
    await expectMatches({
      op: 'layernorm', dtype: 'float32', shape: [2, 8], values,
      weight: { dtype, values: randomValues(42, 8, 1, 1) }, bias: { dtype, values: randomValues(43, 8) },
    });
  });

  it('rmsnorm 2x8 float16 input, float64 weight and bias, sent as bin', async () => {
    const weight = randomValues(44, 8, 1, 1);
    const bias = randomValues(45, 8);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', {
      input: { dtype: 'float16', shape: [2, 8], data: bytesOf('float16', values) },
      weight: { dtype: 'float64', shape: [8], data: bytesOf('float64', weight) },
      bias: { dtype: 'float64', shape: [8], data: bytesOf('float64', bias) },
    });
    const ref = reference({ op: 'rmsnorm', dtype: 'float16', shape: [2, 8], values, weight: { dtype: 'float64', values: weight }, bias: { dtype: 'float64', values: bias } });
    expectClose(valuesOf(okBody(res).output), ref.output, 'float16');
  });

  it('rmsnorm 2x8 with a bias only (weight all ones)', async () => {
    await expectMatches({ op: 'rmsnorm', dtype: 'float32', shape: [2, 8], values, bias: { dtype: 'float32', values: randomValues(46, 8) } });
  });
});

describe('eps', () => {
  // rows of small values, so that eps moves the result well beyond the tolerance
  const small = randomValues(51, 16, 1e-3);

  it.each(OPS)('%s default eps is the contract default', async (op) => {
    const { body } = await expectMatches({ op, dtype: 'float64', shape: [2, 8], values: small });
    const other = reference({ op, dtype: 'float64', shape: [2, 8], values: small, eps: op === 'rmsnorm' ? 1e-5 : 1e-6 });
    const out = valuesOf(body.output);
    expect(Math.max(...out.map((v, i) => Math.abs(v - other.output[i])))).toBeGreaterThan(1e-2);
    expect(DEFAULT_EPS[op]).toBe(op === 'rmsnorm' ? 1e-6 : 1e-5);
  });

  it.each(OPS)('%s eps 0 is allowed', async (op) => {
    await expectMatches({ op, dtype: 'float64', shape: [2, 8], values: small, eps: 0 });
  });

  it.each(OPS)('%s eps 0.5, placement inside and outside differ as the formulas do', async (op) => {
    const inside = await expectMatches({ op, dtype: 'float32', shape: [2, 8], values: randomValues(52, 16), eps: 0.5, epsPlacement: 'inside' });
    const outside = await expectMatches({ op, dtype: 'float32', shape: [2, 8], values: randomValues(52, 16), eps: 0.5, epsPlacement: 'outside' });
    expect(valuesOf(inside.body.output)).not.toEqual(valuesOf(outside.body.output));
  });

  it('eps_placement "inside" is the default', async () => {
    const values = randomValues(53, 8);
    const a = okBody(await send({ op: 'rmsnorm', dtype: 'float32', shape: [1, 8], values, eps: 0.25 }));
    const b = okBody(await send({ op: 'rmsnorm', dtype: 'float32', shape: [1, 8], values, eps: 0.25, epsPlacement: 'inside' }));
    expect(a).toEqual(b);
  });

  it('a duplicated key: the last one wins (eps -1 then 0.5)', async () => {
    const res = await postJson(ctx.app, '/v1/rmsnorm', '{"input":{"shape":[4],"data":[1,2,3,4]},"eps":-1,"eps":0.5}');
    expectClose(valuesOf(okBody(res).output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [4], values: [1, 2, 3, 4], eps: 0.5 }).output, 'float32');
  });
});

describe('weight_offset', () => {
  const values = randomValues(61, 16, 2);
  const centred = randomValues(62, 8, 0.2);

  it.each(OPS)('%s 2x8, weight_offset 1 with a zero-centred weight (Gemma)', async (op) => {
    const gemma = await expectMatches({ op, dtype: 'float32', shape: [2, 8], values, weightOffset: 1, weight: { dtype: 'float32', values: centred } });
    const plain = reference({ op, dtype: 'float32', shape: [2, 8], values, weight: { dtype: 'float64', values: centred.map((g) => 1 + Math.fround(g)) } });
    expectClose(valuesOf(gemma.body.output), plain.output, 'float32');
  });

  it('rmsnorm 2x8, weight_offset 0.5 without weight scales by 1.5', async () => {
    const { body } = await expectMatches({ op: 'rmsnorm', dtype: 'float64', shape: [2, 8], values, weightOffset: 0.5 });
    const unit = reference({ op: 'rmsnorm', dtype: 'float64', shape: [2, 8], values });
    expectClose(valuesOf(body.output), unit.output.map((v) => 1.5 * v), 'float64');
  });

  it('layernorm 2x8, weight_offset -1 with weight ones gives the bias', async () => {
    const bias = randomValues(63, 8);
    const { body } = await expectMatches({
      op: 'layernorm', dtype: 'float32', shape: [2, 8], values, weightOffset: -1,
      weight: { dtype: 'float32', values: new Array(8).fill(1) }, bias: { dtype: 'float32', values: bias },
    });
    expect(valuesOf(body.output)).toEqual([...bias, ...bias].map(Math.fround));
  });
});

describe('residual', () => {
  it.each(DTYPES)('rmsnorm 2x8 %s: response residual is input + residual rounded to %s, and it is what was normalized', async (dtype) => {
    const values = randomValues(71, 16, 2);
    const residual = randomValues(72, 16, 2);
    const { body, ref } = await expectMatches({ op: 'rmsnorm', dtype, shape: [2, 8], values, residual });
    expect(body.residual.dtype).toBe(dtype);
    expect(body.residual.shape).toEqual([2, 8]);
    // one rounding of an exact sum: no tolerance
    expect(valuesOf(body.residual)).toEqual(ref.residual);
  });

  it('layernorm 2x8 float32, residual with output_dtype float16: residual stays float32', async () => {
    const values = randomValues(73, 16, 2);
    const residual = randomValues(74, 16, 2);
    const { body, ref } = await expectMatches({ op: 'layernorm', dtype: 'float32', shape: [2, 8], values, residual, outputDtype: 'float16' });
    expect(body.residual.dtype).toBe('float32');
    expect(valuesOf(body.residual)).toEqual(ref.residual);
  });

  it('no residual sent: no residual in the response', async () => {
    const body = okBody(await send({ op: 'rmsnorm', dtype: 'float32', shape: [4], values: [1, 2, 3, 4] }));
    expect(body).not.toHaveProperty('residual');
  });
});

describe('return_stats', () => {
  const values = randomValues(81, 24, 2, 5);

  it('layernorm 2x3x4, axis -1: mean and rstd float32 of shape [2, 3]', async () => {
    const { body, ref } = await expectMatches({ op: 'layernorm', dtype: 'float64', shape: [2, 3, 4], values }, { return_stats: true });
    expect(Object.keys(body).sort()).toEqual(['mean', 'output', 'rstd']);
    for (const stat of ['mean', 'rstd'] as const) {
      expect(body[stat].dtype).toBe('float32');
      expect(body[stat].shape).toEqual([2, 3]);
      expectClose(valuesOf(body[stat]), ref[stat], 'float32');
    }
  });

  it('rmsnorm 2x3x4, axis 1: rstd only, shape [2]', async () => {
    const { body, ref } = await expectMatches({ op: 'rmsnorm', dtype: 'float32', shape: [2, 3, 4], values, axis: 1 }, { return_stats: true });
    expect(Object.keys(body).sort()).toEqual(['output', 'rstd']);
    expect(body.rstd).toMatchObject({ dtype: 'float32', shape: [2] });
    expectClose(valuesOf(body.rstd), ref.rstd, 'float32');
  });

  it('layernorm 2x4, axis 0: one row, stats of shape [1]', async () => {
    const { body, ref } = await expectMatches({ op: 'layernorm', dtype: 'float32', shape: [2, 4], values: values.slice(0, 8), axis: 0 }, { return_stats: true });
    expect(body.mean.shape).toEqual([1]);
    expect(body.rstd.shape).toEqual([1]);
    expectClose(valuesOf(body.mean), ref.mean, 'float32');
    expectClose(valuesOf(body.rstd), ref.rstd, 'float32');
  });

  it('layernorm 2x4 float64 in msgpack: stats come as float32 bin', async () => {
    const res = await postMsgpack(ctx.app, '/v1/layernorm', { input: { dtype: 'float64', shape: [2, 4], data: bytesOf('float64', values.slice(0, 8)) }, return_stats: true });
    const body = okBody(res);
    const ref = reference({ op: 'layernorm', dtype: 'float64', shape: [2, 4], values: values.slice(0, 8) });
    expect(body.mean.data.byteLength).toBe(8);
    expectClose(valuesOf(body.mean), ref.mean, 'float32');
    expectClose(valuesOf(body.rstd), ref.rstd, 'float32');
  });

  it('return_stats false: no stats', async () => {
    const body = okBody(await send({ op: 'layernorm', dtype: 'float32', shape: [2, 4], values: values.slice(0, 8) }, { return_stats: false }));
    expect(Object.keys(body)).toEqual(['output']);
  });
});

describe('zero rows', () => {
  it.each(OPS)('%s [0, 8] with return_stats, JSON: empty output of shape [0, 8], stats of shape [0]', async (op) => {
    const body = okBody(await postJson(ctx.app, `/v1/${op}`, { input: { shape: [0, 8], data: [] }, return_stats: true, weight: { shape: [8], data: new Array(8).fill(2) } }));
    expect(body.output).toEqual({ dtype: 'float32', shape: [0, 8], data: [] });
    expect(body.rstd).toEqual({ dtype: 'float32', shape: [0], data: [] });
    if (op === 'layernorm') expect(body.mean).toEqual({ dtype: 'float32', shape: [0], data: [] });
  });

  it('rmsnorm [3, 0, 5] float16 bin, axis 2: empty bin output of shape [3, 0, 5]', async () => {
    const body = okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float16', shape: [3, 0, 5], data: new Uint8Array(0) }, axis: 2, output_dtype: 'bfloat16' }));
    expect(body.output.dtype).toBe('bfloat16');
    expect(body.output.shape).toEqual([3, 0, 5]);
    expect(body.output.data.byteLength).toBe(0);
  });

  it('layernorm [0, 4] with a residual: empty output and empty residual', async () => {
    const body = okBody(await postJson(ctx.app, '/v1/layernorm', { input: { shape: [0, 4], data: [] }, residual: { shape: [0, 4], data: [] } }));
    expect(body.output.data).toEqual([]);
    expect(body.residual).toEqual({ dtype: 'float32', shape: [0, 4], data: [] });
  });
});

describe('output_dtype', () => {
  const values = randomValues(91, 16, 3, 1);
  const pairs = DTYPES.flatMap((from) => DTYPES.map((to) => [from, to] as [Dtype, Dtype]));

  it.each(pairs)('layernorm 2x8 %s in, %s out (msgpack bin)', async (from, to) => {
    const res = await postMsgpack(ctx.app, '/v1/layernorm', { input: { dtype: from, shape: [2, 8], data: bytesOf(from, values) }, output_dtype: to });
    const body = okBody(res);
    expect(body.output.dtype).toBe(to);
    expect(body.output.data.byteLength).toBe(product([2, 8]) * (to === 'float64' ? 8 : to === 'float32' ? 4 : 2));
    const ref = reference({ op: 'layernorm', dtype: from, shape: [2, 8], values, outputDtype: to });
    expectClose(valuesOf(body.output), ref.output, to, ref.largeMean);
  });

  it.each(DTYPES)('rmsnorm 2x8 float32 in, %s out (JSON)', async (to) => {
    await expectMatches({ op: 'rmsnorm', dtype: 'float32', shape: [2, 8], values, outputDtype: to });
  });
});
