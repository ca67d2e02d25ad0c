// API.md §2, `partial` (pRMSNorm): s over the first k = ⌊n·p⌋ elements of each row (n·p in float64),
// every element scaled by r; checked against the float64 reference in every dtype and encoding.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { okBody, postJson, postMsgpack, useFreshApp } from '../helpers/http.js';
import { expectClose } from '../helpers/reference.js';
import { bytesOf, DTYPES, product, randomValues, type Dtype } from '../helpers/tensors.js';
import { partialCount } from '../reference/channel-norm-reference.js';
import {
  ENCODINGS, expectErrorBoth, expectNanOrClose, partialReference, post, tensorBytes, tensorValues, wire, type PartialCase,
} from './helpers.js';

const ctx = useFreshApp({}, 'file');

describe('k = ⌊n·p⌋ evaluated in float64, as Python int(n * p)', () => {
  it.each([
    [10, 0.3, 3], // 3.0000000000000004
    [10, 0.7, 7], // 7.000000000000001
    [100, 0.29, 28], // 28.999999999999996
    [3, 0.1, 0], // 0.30000000000000004
    [4, 0.2, 0],
    [6, 0.5, 3],
    [100, 0.57, 56], // 56.99999999999999
  ])('the reference: n %d, p %d → k %d', (n, p, k) => {
    expect(partialCount(n, p)).toBe(k);
  });

  it.each([
    [10, 0.3],
    [10, 0.7],
    [100, 0.29],
    [100, 0.57],
  ])('float64 1×%d, p %d: only the first k elements count', async (n, p) => {
    const values = randomValues(1000 + n, n, 2, 0.5);
    // the element just past k is huge: if it were counted, r would be tiny
    values[partialCount(n, p)] = 1e6;
    const c: PartialCase = { dtype: 'float64', shape: [1, n], values, partial: p };
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: wire('json', 'float64', [1, n], values), partial: p, return_stats: true }));
    const ref = partialReference(c);
    expectClose(tensorValues(body.output, 'float64', [1, n]), ref.output, 'float64');
    expectClose(tensorValues(body.rstd, 'float32', [1]), ref.rstd, 'float32');
  });
});

describe.each(DTYPES)('%s in and out', (dtype) => {
  describe.each(ENCODINGS)('%s', (encoding) => {
    it('rmsnorm 3x10, partial 0.3, weight and bias, return_stats', async () => {
      const shape = [3, 10];
      const values = randomValues(1, 30, 3, 0.5);
      const weight = randomValues(2, 10, 0.5, 1);
      const bias = randomValues(3, 10, 0.5);
      const res = await post(ctx.app, encoding, '/v1/rmsnorm', {
        input: wire(encoding, dtype, shape, values), weight: wire(encoding, dtype, [10], weight), bias: wire(encoding, dtype, [10], bias),
        partial: 0.3, return_stats: true,
      });
      const body = okBody(res);
      expect(Object.keys(body).sort()).toEqual(['output', 'rstd']);
      const ref = partialReference({ dtype, shape, values, partial: 0.3, weight: { dtype, values: weight }, bias: { dtype, values: bias } });
      expectClose(tensorValues(body.output, dtype, shape), ref.output, dtype);
      expectClose(tensorValues(body.rstd, 'float32', [3]), ref.rstd, 'float32');
    });
  });

  it.each(DTYPES)('rmsnorm 4x6 partial 0.5 → output_dtype %s', async (outputDtype) => {
    const values = randomValues(4, 24, 2);
    const body = okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', { input: wire('msgpack', dtype, [4, 6], values), partial: 0.5, output_dtype: outputDtype }));
    const ref = partialReference({ dtype, shape: [4, 6], values, partial: 0.5 });
    expectClose(tensorValues(body.output, outputDtype, [4, 6]), ref.output, outputDtype);
  });
});

describe('every option with partial', () => {
  const shape = [2, 3, 4];
  const values = randomValues(10, 24, 2, 0.25);

  it.each<[string, Record<string, unknown>, Partial<PartialCase>]>([
    ['axis 1 of [2, 3, 4] (rows of 12, k = 3: the first 3 in C order)', { axis: 1, partial: 0.25 }, { axis: 1, partial: 0.25 }],
    ['axis 0 (one row of 24, k = 17)', { axis: 0, partial: 0.71 }, { axis: 0, partial: 0.71 }],
    ['axis -1 (rows of 4), partial 0.5', { axis: -1, partial: 0.5 }, { partial: 0.5 }],
    ['eps 0', { partial: 0.5, eps: 0 }, { partial: 0.5, eps: 0 }],
    ['eps 0.5 outside', { partial: 0.75, eps: 0.5, eps_placement: 'outside' }, { partial: 0.75, eps: 0.5, epsPlacement: 'outside' }],
    ['weight_offset 1', { partial: 0.5, weight_offset: 1, weight: { dtype: 'float32', shape: [4], data: [0.1, -0.2, 0.3, 0] } },
      { partial: 0.5, weightOffset: 1, weight: { dtype: 'float32', values: [0.1, -0.2, 0.3, 0] } }],
    ['partial 1 sent explicitly', { partial: 1 }, { partial: 1 }],
    ['partial 0.25: k = 1 of 4', { partial: 0.25 }, { partial: 0.25 }],
  ])('float32 [2, 3, 4], %s', async (_name, fields, extra) => {
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: { shape, data: values }, return_stats: true, ...fields }));
    const ref = partialReference({ dtype: 'float32', shape, values, ...extra });
    expectClose(tensorValues(body.output, 'float32', shape), ref.output, 'float32');
    expectClose(tensorValues(body.rstd, 'float32', ref.rowShape.length > 0 ? ref.rowShape : [1]), ref.rstd, 'float32');
  });

  it('residual: h = input + residual comes back, and s is taken over the first k of h', async () => {
    const residual = randomValues(11, 24, 2);
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: { shape, data: values }, residual: { shape, data: residual }, partial: 0.5 }));
    const ref = partialReference({ dtype: 'float32', shape, values, residual, partial: 0.5 });
    expect(tensorValues(body.residual, 'float32', shape)).toEqual(ref.residual);
    expectClose(tensorValues(body.output, 'float32', shape), ref.output, 'float32');
  });

  it('partial 1 is the default: the same bytes as no partial', async () => {
    const input = wire('msgpack', 'float32', shape, values);
    const without = tensorBytes(okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', { input, return_stats: true })));
    const withOne = tensorBytes(okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', { input, return_stats: true, partial: 1 })));
    expect(withOne.output.equals(without.output)).toBe(true);
    expect(withOne.rstd.equals(without.rstd)).toBe(true);
  });

  it('a zero-row tensor [0, 8] with partial 0.5 → empty output', async () => {
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [0, 8], data: [] }, partial: 0.5 }));
    expect(tensorValues(body.output, 'float32', [0, 8])).toEqual([]);
  });
});

describe('special values', () => {
  it('NaN past the first k leaves s finite: that position is NaN, the others NaN or the formula; other rows exact', async () => {
    const values = randomValues(20, 16, 2);
    values[6] = NaN; // row 0, position 6 ≥ k = 4
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: wire('json', 'float32', [2, 8], values), partial: 0.5, return_stats: true }));
    const out = tensorValues(body.output, 'float32', [2, 8]);
    const ref = partialReference({ dtype: 'float32', shape: [2, 8], values, partial: 0.5 });
    expect(out[6]).toBeNaN();
    expectNanOrClose(out.slice(0, 8), ref.output.slice(0, 8), 'float32');
    expectClose(out.slice(8), ref.output.slice(8), 'float32');
    const rstd = tensorValues(body.rstd, 'float32', [2]);
    expectNanOrClose(rstd.slice(0, 1), ref.rstd.slice(0, 1), 'float32');
    expectClose(rstd.slice(1), ref.rstd.slice(1), 'float32');
  });

  it('NaN inside the first k makes the row NaN; the other row is exact', async () => {
    const values = randomValues(21, 16, 2);
    values[9] = NaN; // row 1, position 1 < k = 4
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: wire('json', 'float32', [2, 8], values), partial: 0.5 }));
    const out = tensorValues(body.output, 'float32', [2, 8]);
    expect(out.slice(8)).toEqual(new Array(8).fill(NaN));
    expectClose(out.slice(0, 8), partialReference({ dtype: 'float32', shape: [2, 8], values, partial: 0.5 }).output.slice(0, 8), 'float32');
  });

  it('an element past k near float32 max is scaled, not squared into s: float32 1x8, partial 0.5', async () => {
    const values = [1, 2, 3, 4, 3e38, -3e38, 1e-30, 0];
    const body = okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', { input: wire('msgpack', 'float32', [1, 8], values), partial: 0.5 }));
    expectClose(tensorValues(body.output, 'float32', [1, 8]), partialReference({ dtype: 'float32', shape: [1, 8], values, partial: 0.5 }).output, 'float32');
  });

  it.each([
    ['near 1e30', 1e30, 1e-6],
    ['near 1e-30, eps 0', 1e-30, 0],
  ])('float32 values %s: squares leave float32 but not float64', async (_name, scale, eps) => {
    const values = randomValues(22, 40, scale, scale / 4);
    const body = okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', { input: wire('msgpack', 'float32', [4, 10], values), partial: 0.7, eps, return_stats: true }));
    const ref = partialReference({ dtype: 'float32', shape: [4, 10], values, partial: 0.7, eps });
    expectClose(tensorValues(body.output, 'float32', [4, 10]), ref.output, 'float32');
    expectClose(tensorValues(body.rstd, 'float32', [4]), ref.rstd, 'float32');
  });

  it('eps 0, the first k all zero, the rest not → that row NaN or the IEEE formula (0·∞ = NaN, x·∞ = ±∞)', async () => {
    const values = [0, 0, 1, -2, 1, 2, 3, 4];
    const body = okBody(await postJson(ctx.app, '/v1/rmsnorm', { input: wire('json', 'float32', [2, 4], values), partial: 0.5, eps: 0 }));
    const out = tensorValues(body.output, 'float32', [2, 4]);
    const ref = partialReference({ dtype: 'float32', shape: [2, 4], values, partial: 0.5, eps: 0 });
    out.slice(0, 4).forEach((v, i) => expect(Number.isNaN(v) || Object.is(v, ref.output[i]), `position ${i}: ${v}`).toBe(true));
    expectClose(out.slice(4), ref.output.slice(4), 'float32');
  });
});

describe('large tensors go through the worker pool', () => {
  it.each<[Dtype, number]>([
    ['float32', 0.37],
    ['bfloat16', 0.5],
  ])('rmsnorm 256x1024 %s, partial %d, residual, weight, return_stats', async (dtype, p) => {
    const shape = [256, 1024];
    const values = randomValues(30, product(shape), 2, 0.3);
    const residual = randomValues(32, product(shape), 1);
    const weight = randomValues(31, 1024, 0.5, 1);
    const body = okBody(await postMsgpack(ctx.app, '/v1/rmsnorm', {
      input: wire('msgpack', dtype, shape, values), residual: wire('msgpack', dtype, shape, residual),
      weight: wire('msgpack', 'float32', [1024], weight), partial: p, return_stats: true,
    }));
    const ref = partialReference({ dtype, shape, values, residual, partial: p, weight: { dtype: 'float32', values: weight } });
    expect(tensorValues(body.residual, dtype, shape)).toEqual(ref.residual);
    expectClose(tensorValues(body.output, dtype, shape), ref.output, dtype);
    expectClose(tensorValues(body.rstd, 'float32', [256]), ref.rstd, 'float32');
  });
});

describe('property: random shapes, axes and p', () => {
  it('k ≥ 1 answers the reference, k = 0 is the 400 naming partial', async () => {
    const arb = fc.record({
      shape: fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 3 }),
      axisPick: fc.nat(),
      p: fc.double({ min: Number.MIN_VALUE, max: 1, noNaN: true }),
      seed: fc.nat(),
    });
    await fc.assert(fc.asyncProperty(arb, async ({ shape, axisPick, p, seed }) => {
      const axis = axisPick % shape.length;
      const n = product(shape.slice(axis));
      const values = randomValues(seed, product(shape), 2);
      const res = await postJson(ctx.app, '/v1/rmsnorm', { input: wire('json', 'float64', shape, values), axis, partial: p, return_stats: true });
      if (partialCount(n, p) === 0) {
        expect(res.json()).toEqual({
          statusCode: 400, code: 'NORM_ERR_EMPTY_ROW', error: 'Bad Request',
          message: `partial: keeps ⌊${n} × ${String(p)}⌋ = 0 elements of each row; needs at least 1`,
        });
        return;
      }
      const body = okBody(res);
      const ref = partialReference({ dtype: 'float64', shape, values, axis, partial: p });
      expectClose(tensorValues(body.output, 'float64', shape), ref.output, 'float64');
      expectClose(tensorValues(body.rstd, 'float32', axis === 0 ? [1] : shape.slice(0, axis)), ref.rstd, 'float32');
    }), { numRuns: 40, seed: 20240601, endOnFailure: true });
  });
});

describe('400 naming partial', () => {
  const input = { shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] };
  const keeps = (n: number, p: string) => `partial: keeps ⌊${n} × ${p}⌋ = 0 elements of each row; needs at least 1`;

  it.each<[string, Record<string, unknown>, string, string]>([
    ['partial 0', { input, partial: 0 }, 'NORM_ERR_FIELD_INVALID', 'partial: must be > 0'],
    ['partial -0.5', { input, partial: -0.5 }, 'NORM_ERR_FIELD_INVALID', 'partial: must be > 0'],
    ['partial 1.5', { input, partial: 1.5 }, 'NORM_ERR_FIELD_INVALID', 'partial: must be <= 1'],
    ['partial 1.0000000000000002', { input, partial: 1.0000000000000002 }, 'NORM_ERR_FIELD_INVALID', 'partial: must be <= 1'],
    ['partial "0.5" (no coercion)', { input, partial: '0.5' }, 'NORM_ERR_FIELD_INVALID', 'partial: must be number'],
    ['partial null', { input, partial: null }, 'NORM_ERR_FIELD_INVALID', 'partial: must be number'],
    ['partial true', { input, partial: true }, 'NORM_ERR_FIELD_INVALID', 'partial: must be number'],
    ['k = ⌊4 × 0.2⌋ = 0', { input, partial: 0.2 }, 'NORM_ERR_EMPTY_ROW', keeps(4, '0.2')],
    ['k = ⌊4 × 1e-7⌋ = 0', { input, partial: 1e-7 }, 'NORM_ERR_EMPTY_ROW', keeps(4, '1e-7')],
    ['k = ⌊4 × 5e-324⌋ = 0 (the least positive double)', { input, partial: 5e-324 }, 'NORM_ERR_EMPTY_ROW', keeps(4, '5e-324')],
    ['k = ⌊3 × 0.33⌋ = 0 (0.99)', { input: { shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }, partial: 0.33 }, 'NORM_ERR_EMPTY_ROW', keeps(3, '0.33')],
    ['k = ⌊3 × 0.1⌋ = 0', { input: { shape: [3], data: [1, 2, 3] }, partial: 0.1 }, 'NORM_ERR_EMPTY_ROW', keeps(3, '0.1')],
    ['axis 1 of [2, 3, 4]: n = 12, k = ⌊12 × 0.05⌋ = 0', { input: { shape: [2, 3, 4], data: new Array(24).fill(1) }, axis: 1, partial: 0.05 }, 'NORM_ERR_EMPTY_ROW', keeps(12, '0.05')],
  ])('rmsnorm, %s', async (_name, body, code, message) => {
    await expectErrorBoth(ctx.app, '/v1/rmsnorm', body, code, message);
  });

  it.each<[string, unknown]>([
    ['partial 1', 1],
    ['partial 0.5', 0.5],
    ['partial 0 (an invalid value is still an unknown field)', 0],
    ['partial "x"', 'x'],
  ])('layernorm with %s → 400 partial: unknown field', async (_name, partial) => {
    await expectErrorBoth(ctx.app, '/v1/layernorm', { input, partial }, 'NORM_ERR_FIELD_UNKNOWN', 'partial: unknown field');
  });

  it('rmsnorm with partial and a msgpack-numpy ndarray input carrying strides → 400 input.strides: unknown field', async () => {
    const key = (name: string) => Buffer.from(name);
    const nd = new Map<Buffer, unknown>([
      [key('nd'), true], [key('type'), '<f4'], [key('kind'), Buffer.alloc(0)], [key('shape'), [2, 4]], [key('strides'), [16, 4]], [key('data'), bytesOf('float32', input.data)],
    ]);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: nd, partial: 0.5 });
    expect(res.json()).toEqual({ statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'input.strides: unknown field' });
    expect(res.statusCode).toBe(400);
  });

  it('in a batch: requests[1].partial k = 0 and requests[0].partial on a layernorm item', async () => {
    await expectErrorBoth(ctx.app, '/v1/batch', { requests: [{ op: 'rmsnorm', input }, { op: 'rmsnorm', input, partial: 0.2 }] }, 'NORM_ERR_EMPTY_ROW', `requests[1].${keeps(4, '0.2')}`);
    await expectErrorBoth(ctx.app, '/v1/batch', { requests: [{ op: 'layernorm', input, partial: 1 }] }, 'NORM_ERR_FIELD_UNKNOWN', 'requests[0].partial: unknown field');
    await expectErrorBoth(ctx.app, '/v1/batch', { requests: [{ op: 'rmsnorm', input }, { op: 'rmsnorm', input, partial: 2 }] }, 'NORM_ERR_FIELD_INVALID', 'requests[1].partial: must be <= 1');
  });
});
