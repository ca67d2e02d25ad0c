// API.md §3: POST /v1/batch — results in order, all-or-nothing validation, 1 to 1024 items.
import { describe, expect, it } from 'vitest';
import { expectError, expectServerTiming, okBody, pack, postJson, postMsgpack, unpack, unpackMaps, useFreshApp } from '../helpers/http.js';
import { expectClose, reference, type NormCase } from '../helpers/reference.js';
import { bytesOf, randomValues, valuesFromBytes, valuesOf } from '../helpers/tensors.js';

const ctx = useFreshApp();
const input = { shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] };

describe('results', () => {
  it('4 mixed items (rmsnorm, layernorm+stats, rmsnorm+residual, layernorm float64 axis 0) come back in order', async () => {
    const a = randomValues(201, 8, 2);
    const b = randomValues(202, 12, 2, 3);
    const c = randomValues(203, 8, 2);
    const r = randomValues(204, 8, 2);
    const d = randomValues(205, 6, 2);
    const res = await postJson(ctx.app, '/v1/batch', {
      requests: [
        { op: 'rmsnorm', input: { shape: [2, 4], data: a } },
        { op: 'layernorm', input: { shape: [3, 4], data: b }, return_stats: true },
        { op: 'rmsnorm', input: { shape: [4, 2], data: c }, residual: { shape: [4, 2], data: r }, eps: 0.1 },
        { op: 'layernorm', input: { dtype: 'float64', shape: [2, 3], data: d }, axis: 0, output_dtype: 'float16' },
      ],
    });
    const { results } = okBody(res);
    expectServerTiming(res);
    expect(results).toHaveLength(4);
    const cases: NormCase[] = [
      { op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values: a },
      { op: 'layernorm', dtype: 'float32', shape: [3, 4], values: b },
      { op: 'rmsnorm', dtype: 'float32', shape: [4, 2], values: c, residual: r, eps: 0.1 },
      { op: 'layernorm', dtype: 'float64', shape: [2, 3], values: d, axis: 0, outputDtype: 'float16' },
    ];
    cases.forEach((c, i) => {
      const ref = reference(c);
      const out = results[i].output;
      expect(out.shape).toEqual(c.shape);
      expect(out.dtype).toBe(c.outputDtype ?? c.dtype);
      expectClose(valuesOf(out), ref.output, c.outputDtype ?? c.dtype, ref.largeMean);
    });
    expect(Object.keys(results[0])).toEqual(['output']);
    expect(Object.keys(results[1]).sort()).toEqual(['mean', 'output', 'rstd']);
    expectClose(valuesOf(results[1].mean), reference(cases[1]).mean, 'float32');
    expect(valuesOf(results[2].residual)).toEqual(reference(cases[2]).residual);
    expect(Object.keys(results[3])).toEqual(['output']);
  });

  it('msgpack batch: ndarray items answer as ndarrays, ordinary items as ordinary maps', async () => {
    const values = randomValues(206, 8, 2);
    const nd = new Map<Buffer, unknown>([
      [Buffer.from('nd'), true], [Buffer.from('type'), '<f4'], [Buffer.from('kind'), Buffer.alloc(0)], [Buffer.from('shape'), [2, 4]], [Buffer.from('data'), bytesOf('float32', values)],
    ]);
    const res = await postMsgpack(ctx.app, '/v1/batch', {
      requests: [
        { op: 'layernorm', input: { dtype: 'float32', shape: [2, 4], data: bytesOf('float32', values) } },
        { op: 'layernorm', input: nd },
      ],
    });
    expect(res.statusCode).toBe(200);
    const results = (unpackMaps(res.rawPayload) as Map<string, unknown>).get('results') as Map<unknown, unknown>[];
    const ordinary = results[0].get('output') as Map<unknown, unknown>;
    expect([...ordinary.keys()]).toEqual(['dtype', 'shape', 'data']);
    const numpy = results[1].get('output') as Map<unknown, unknown>;
    expect([...numpy.keys()].map((k) => Buffer.from(k as Uint8Array).toString())).toEqual(['nd', 'type', 'kind', 'shape', 'data']);
    const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [2, 4], values });
    expectClose(valuesFromBytes('float32', ordinary.get('data') as Uint8Array), ref.output, 'float32');
    const numpyData = [...numpy].find(([k]) => Buffer.from(k as Uint8Array).toString() === 'data')![1] as Uint8Array;
    expect(Buffer.from(numpyData)).toEqual(Buffer.from(ordinary.get('data') as Uint8Array));
  });

  it('1 item → 1 result', async () => {
    const { results } = okBody(await postJson(ctx.app, '/v1/batch', { requests: [{ op: 'rmsnorm', input }] }));
    expect(results).toHaveLength(1);
    expectClose(valuesOf(results[0].output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [2, 4], values: input.data }).output, 'float32');
  });

  // a msgpack batch whose outputs the SIMD kernels write goes out straight from memory, its items
  // laid out one after the other (jobs/pipeline.ts); one item that cannot (a float64 output, stats)
  // sends the whole batch the gathered way. Either way each item is what it would be alone
  const alike = [
    { op: 'rmsnorm', shape: [1, 768] },
    { op: 'layernorm', shape: [3, 5] },
    { op: 'rmsnorm', shape: [2, 4, 8], weight: true },
    { op: 'layernorm', shape: [1, 33], bias: true },
  ] as const;
  const odd = [{}, { output_dtype: 'float64' }, { return_stats: true }] as const;
  for (const extra of odd) {
    it(`msgpack batch of float32 items ${Object.keys(extra).join('') || 'alone'}: each result is bit for bit the item's own answer alone, and close to float64`, async () => {
      const items = alike.map(({ op, shape, ...params }, i) => {
        const size = shape.reduce((a, b) => a * b, 1);
        const n = shape[shape.length - 1];
        const values = randomValues(300 + i, size, 3, 1);
        const body: Record<string, unknown> = { input: { dtype: 'float32', shape, data: bytesOf('float32', values) } };
        if ('weight' in params) body.weight = { dtype: 'float32', shape: [n], data: bytesOf('float32', randomValues(400 + i, n, 1, 1)) };
        if ('bias' in params) body.bias = { dtype: 'float32', shape: [n], data: bytesOf('float32', randomValues(500 + i, n)) };
        return { op, body, values, shape };
      });
      const requests = items.map(({ op, body }, i) => ({ op, ...body, ...(i === 2 ? extra : {}) }));
      const res = await postMsgpack(ctx.app, '/v1/batch', { requests });
      expect(res.statusCode).toBe(200);
      const results = (unpack(res.rawPayload) as { results: { output: { dtype: string; shape: number[]; data: Uint8Array } }[] }).results;
      expect(results).toHaveLength(items.length);
      for (const [i, { op, body, values, shape }] of items.entries()) {
        const alone = await postMsgpack(ctx.app, `/v1/${op}`, { ...body, ...(i === 2 ? extra : {}) });
        expect(alone.statusCode).toBe(200);
        const own = (unpack(alone.rawPayload) as { output: { dtype: string; shape: number[]; data: Uint8Array } }).output;
        expect(results[i].output.shape).toEqual(shape);
        expect(results[i].output.dtype).toBe(own.dtype);
        expect(Buffer.from(results[i].output.data)).toEqual(Buffer.from(own.data));
        if (i !== 2 && !('weight' in body) && !('bias' in body)) {
          expectClose(valuesFromBytes('float32', results[i].output.data), reference({ op, dtype: 'float32', shape: [...shape], values }).output, 'float32');
        }
      }
    });
  }

  it('1024 items → 1024 results, each its own row', async () => {
    const requests = Array.from({ length: 1024 }, (_, i) => ({ op: i % 2 ? 'layernorm' : 'rmsnorm', input: { shape: [2], data: [i, 2 * i + 1] } }));
    const { results } = okBody(await postMsgpack(ctx.app, '/v1/batch', { requests }));
    expect(results).toHaveLength(1024);
    for (const i of [0, 1, 511, 1022, 1023]) {
      const ref = reference({ op: i % 2 ? 'layernorm' : 'rmsnorm', dtype: 'float32', shape: [2], values: [i, 2 * i + 1] });
      expectClose(valuesOf(results[i].output), ref.output, 'float32');
    }
  });
});

describe('an invalid item makes the whole batch a 400 naming it', () => {
  const ok = { op: 'rmsnorm', input };

  it.each([
    ['requests[2].weight shape', [ok, ok, { ...ok, weight: { shape: [3], data: [1, 1, 1] } }], 'NORM_ERR_SHAPE_MISMATCH', 'requests[2].weight.shape: [3] must be [4]'],
    ['requests[1].eps negative', [ok, { ...ok, eps: -1 }], 'NORM_ERR_FIELD_INVALID', 'requests[1].eps: must be >= 0'],
    ['requests[3].epsilon unknown', [ok, ok, ok, { ...ok, epsilon: 1 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[3].epsilon: unknown field'],
    ['requests[0].op missing', [{ input }], 'NORM_ERR_FIELD_MISSING', 'requests[0].op: required field is missing'],
    ['requests[1].op unknown', [ok, { ...ok, op: 'instancenorm' }], 'NORM_ERR_FIELD_INVALID', 'requests[1].op: must be one of "rmsnorm", "layernorm", "batchnorm", "groupnorm"'],
    ['requests[1].num_groups missing for groupnorm', [ok, { ...ok, op: 'groupnorm' }], 'NORM_ERR_FIELD_MISSING', 'requests[1].num_groups: required field is missing'],
    ['requests[1].partial on a layernorm item', [ok, { ...ok, op: 'layernorm', partial: 0.5 }], 'NORM_ERR_FIELD_UNKNOWN', 'requests[1].partial: unknown field'],
    ['requests[1].input missing', [ok, { op: 'layernorm' }], 'NORM_ERR_FIELD_MISSING', 'requests[1].input: required field is missing'],
    ['requests[1].input.dtype unknown', [ok, { ...ok, input: { ...input, dtype: 'int8' } }], 'NORM_ERR_DTYPE_UNKNOWN', 'requests[1].input.dtype: must be one of "float32", "float64", "float16", "bfloat16"'],
    ['requests[4].input.data length', [ok, ok, ok, ok, { ...ok, input: { shape: [2, 4], data: [1] } }], 'NORM_ERR_DATA_LENGTH', 'requests[4].input.data: 1 numbers, but shape [2, 4] needs 8'],
    ['requests[1].axis out of range', [ok, { ...ok, axis: 5 }], 'NORM_ERR_AXIS_RANGE', 'requests[1].axis: 5 is out of range for an input of rank 2 (needs -2 ≤ axis < 2)'],
    ['requests[0].input.shape n = 0', [{ op: 'layernorm', input: { shape: [4, 0], data: [] } }, ok], 'NORM_ERR_EMPTY_ROW', 'requests[0].input.shape: the normalized dimensions [0] hold no elements'],
    ['requests[1].residual dtype', [ok, { ...ok, residual: { ...input, dtype: 'float64' } }], 'NORM_ERR_SHAPE_MISMATCH', 'requests[1].residual.dtype: float64 must match input.dtype float32'],
    ['requests[1] is not a map', [ok, 5], 'NORM_ERR_FIELD_INVALID', 'requests[1]: must be object'],
  ] as [string, unknown[], string, string][])('%s', async (_name, requests, code, message) => {
    expectError(await postJson(ctx.app, '/v1/batch', { requests }), 400, code, message);
  });

  it('requests[1].eps sent as msgpack extension type 0 (undefined) → 400 naming it', async () => {
    const item = (eps: Buffer) => Buffer.concat([Buffer.from([0x83]), pack('op'), pack('rmsnorm'), pack('input'), pack(input), pack('eps'), eps]);
    const body = Buffer.concat([Buffer.from([0x81]), pack('requests'), Buffer.from([0x92]), item(pack(0.5)), item(Buffer.from([0xd4, 0x00, 0x00]))]);
    expectError(await postMsgpack(ctx.app, '/v1/batch', body), 400, 'NORM_ERR_FIELD_INVALID', 'requests[1].eps: undefined (msgpack extension type 0) is no value');
  });

  it('the later invalid item is named even when earlier items are large and valid (msgpack)', async () => {
    const big = { op: 'layernorm', input: { dtype: 'float32', shape: [64, 1024], data: bytesOf('float32', randomValues(207, 65536)) } };
    const res = await postMsgpack(ctx.app, '/v1/batch', { requests: [big, big, { op: 'rmsnorm', input: { dtype: 'float32', shape: [2], data: new Uint8Array(4) } }] });
    expectError(res, 400, 'NORM_ERR_DATA_LENGTH', 'requests[2].input.data: 4 bytes, but shape [2] of float32 needs 8');
  });
});

describe('item count', () => {
  it('0 items → 400', async () => {
    expectError(await postJson(ctx.app, '/v1/batch', { requests: [] }), 400, 'NORM_ERR_FIELD_INVALID', 'requests: must NOT have fewer than 1 items');
  });

  it('1025 items → 400', async () => {
    const requests = Array.from({ length: 1025 }, () => ({ op: 'rmsnorm', input: { shape: [1], data: [1] } }));
    expectError(await postMsgpack(ctx.app, '/v1/batch', { requests }), 400, 'NORM_ERR_FIELD_INVALID', 'requests: must NOT have more than 1024 items');
  });

  it('requests missing → 400', async () => {
    expectError(await postJson(ctx.app, '/v1/batch', {}), 400, 'NORM_ERR_FIELD_MISSING', 'requests: required field is missing');
  });

  it('requests not a list → 400', async () => {
    expectError(await postJson(ctx.app, '/v1/batch', { requests: { op: 'rmsnorm', input } }), 400, 'NORM_ERR_FIELD_INVALID', 'requests: must be array');
  });

  it('a field beside requests → 400', async () => {
    expectError(await postJson(ctx.app, '/v1/batch', { requests: [{ op: 'rmsnorm', input }], eps: 1 }), 400, 'NORM_ERR_FIELD_UNKNOWN', 'eps: unknown field');
  });
});
