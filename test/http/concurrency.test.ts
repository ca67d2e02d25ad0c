// API.md §5: requests in flight together each get their own answer; a bad one affects no other,
// and memory reused from an earlier request carries none of its values.
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { expectError, okBody, postJson, postMsgpack, useFreshApp, type Response } from '../helpers/http.js';
import { expectClose, reference, type NormCase } from '../helpers/reference.js';
import { bytesOf, DTYPES, randomValues, valuesOf } from '../helpers/tensors.js';

function sendCase(app: FastifyInstance, c: NormCase, encoding: 'json' | 'msgpack', returnStats: boolean): Promise<Response> {
  const n = c.shape[c.shape.length - 1];
  const tensor = (shape: readonly number[], values: readonly number[]) => (encoding === 'json'
    ? { dtype: c.dtype, shape, data: values }
    : { dtype: c.dtype, shape, data: bytesOf(c.dtype, values) });
  const body: Record<string, unknown> = { input: tensor(c.shape, c.values), return_stats: returnStats };
  if (c.residual) body.residual = tensor(c.shape, c.residual);
  if (c.weight) body.weight = tensor([n], c.weight.values);
  if (c.outputDtype) body.output_dtype = c.outputDtype;
  const url = `/v1/${c.op}`;
  return encoding === 'json' ? postJson(app, url, body) : postMsgpack(app, url, body);
}

function expectAnswer(res: Response, c: NormCase, returnStats: boolean): void {
  const body = okBody(res);
  const ref = reference(c);
  const out = c.outputDtype ?? c.dtype;
  expect(body.output.shape).toEqual(c.shape);
  expectClose(valuesOf(body.output), ref.output, out, ref.largeMean);
  if (c.residual) expect(valuesOf(body.residual)).toEqual(ref.residual);
  if (returnStats) expectClose(valuesOf(body.rstd), ref.rstd, 'float32');
  else expect(body.rstd).toBeUndefined();
}

/** 16 different valid cases: every dtype, both ops, inline-sized and pool-sized */
function validCases(): NormCase[] {
  return Array.from({ length: 16 }, (_, i) => {
    const dtype = DTYPES[i % 4];
    const rows = [1, 3, 64, 200][Math.floor(i / 4)];
    const n = [8, 33, 256, 512][i % 4];
    const values = randomValues(600 + i, rows * n, 2, i);
    return {
      op: i % 2 ? 'layernorm' : 'rmsnorm', dtype, shape: [rows, n], values,
      residual: i % 3 === 0 ? randomValues(700 + i, rows * n, 1) : undefined,
      weight: { dtype, values: randomValues(800 + i, n, 0.5, 1) },
      outputDtype: DTYPES[(i + 1) % 4],
    } satisfies NormCase;
  });
}

describe.each([
  ['default pool settings', {}],
  ['every tensor split across 2 workers', { inlineMaxElements: 0, minTaskElements: 1 }],
])('%s', (_name, config) => {
  const ctx = useFreshApp(config);

  it('16 valid and 8 invalid requests in flight together: each valid one gets its own right answer', async () => {
    const cases = validCases();
    const valid = cases.map((c, i) => sendCase(ctx.app, c, i % 2 ? 'json' : 'msgpack', i % 3 === 1));
    const invalid = [
      postJson(ctx.app, '/v1/rmsnorm', { input: { shape: [2, 4], data: [1, 2, 3] } }),
      postMsgpack(ctx.app, '/v1/layernorm', Buffer.from([0x81, 0xa5, 0x69])),
      postJson(ctx.app, '/v1/layernorm', { input: { shape: [4], data: [1, 2, 3, 4] }, eps: -1 }),
      postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float32', shape: [200, 512], data: new Uint8Array(200 * 512 * 4 - 1) } }),
      postJson(ctx.app, '/v1/batch', { requests: [{ op: 'rmsnorm', input: { shape: [2], data: [1, 2] } }, { op: 'rmsnorm', input: { shape: [2], data: [1, 2] }, axis: 3 }] }),
      postJson(ctx.app, '/v1/rmsnorm', '{"input":{"shape":[1],"data":[NaN]}}'),
      postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float32', shape: [64, 256], data: bytesOf('float32', randomValues(1, 64 * 256)) }, weight: { dtype: 'float32', shape: [255], data: new Uint8Array(255 * 4) } }),
      postJson(ctx.app, '/v1/layernorm', { input: { shape: [3, 0], data: [] } }),
    ];
    const answers = await Promise.all([...valid, ...invalid]);
    cases.forEach((c, i) => expectAnswer(answers[i], c, i % 3 === 1));
    const errors = answers.slice(cases.length);
    expectError(errors[0], 400, 'NORM_ERR_DATA_LENGTH', 'input.data: 3 numbers, but shape [2, 4] needs 8');
    expectError(errors[1], 400, 'NORM_ERR_BODY_MALFORMED', 'body: not valid msgpack (Unexpected end of MessagePack data)');
    expectError(errors[2], 400, 'NORM_ERR_FIELD_INVALID', 'eps: must be >= 0');
    expectError(errors[3], 400, 'NORM_ERR_DATA_LENGTH', 'input.data: 409599 bytes, but shape [200, 512] of float32 needs 409600');
    expectError(errors[4], 400, 'NORM_ERR_AXIS_RANGE', 'requests[1].axis: 3 is out of range for an input of rank 1 (needs -1 ≤ axis < 1)');
    expectError(errors[5], 400, 'NORM_ERR_BODY_MALFORMED', "body: Body is not valid JSON but content-type is set to 'application/json'");
    expectError(errors[6], 400, 'NORM_ERR_SHAPE_MISMATCH', 'weight.shape: [255] must be [256]');
    expectError(errors[7], 400, 'NORM_ERR_EMPTY_ROW', 'input.shape: the normalized dimensions [0] hold no elements');
  });

  it('a small request after a large one (memory reused) carries none of its values', async () => {
    const large: NormCase = { op: 'layernorm', dtype: 'float32', shape: [256, 1024], values: randomValues(901, 256 * 1024, 1000), residual: randomValues(902, 256 * 1024, 1000) };
    expectAnswer(await sendCase(ctx.app, large, 'msgpack', true), large, true);
    for (const dtype of DTYPES) {
      const small: NormCase = { op: 'rmsnorm', dtype, shape: [3, 5], values: randomValues(903, 15, 0.01), residual: randomValues(904, 15, 0.01) };
      const res = await sendCase(ctx.app, small, 'msgpack', true);
      expect(okBody(res).output.data.byteLength).toBe(15 * (dtype === 'float64' ? 8 : dtype === 'float32' ? 4 : 2));
      expectAnswer(res, small, true);
    }
  });

  it('the same request 8 times at once gives 8 identical bodies', async () => {
    const c: NormCase = { op: 'layernorm', dtype: 'bfloat16', shape: [128, 300], values: randomValues(905, 128 * 300, 5, 2) };
    const answers = await Promise.all(Array.from({ length: 8 }, () => sendCase(ctx.app, c, 'msgpack', true)));
    for (const res of answers) expect(res.rawPayload.equals(answers[0].rawPayload)).toBe(true);
    expectAnswer(answers[0], c, true);
  });
});
