// the same tensor through /v1 msgpack and /v2 binary: the same engine, so bit-identical outputs.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createApp, pack, unpack } from '../helpers/http.js';
import { bytesOf } from '../helpers/tensors.js';
import { binaryBody, binaryInput, DTYPE_OF, infer, type Datatype } from './oip.js';

let app: FastifyInstance;
beforeAll(async () => {
  // inline and pool paths both: a low inline threshold sends the larger cases to the workers
  app = await createApp({ inlineMaxElements: 4096, minTaskElements: 1024 });
});
afterAll(() => app.close());

type Model = 'rmsnorm' | 'layernorm' | 'batchnorm' | 'groupnorm';

const cases = fc.record({
  model: fc.constantFrom<Model>('rmsnorm', 'layernorm', 'batchnorm', 'groupnorm'),
  datatype: fc.constantFrom<Datatype>('FP32', 'FP64', 'FP16', 'BF16'),
  out: fc.constantFrom<Datatype>('FP32', 'FP64', 'FP16', 'BF16'),
  n: fc.integer({ min: 1, max: 64 }),
  c: fc.integer({ min: 1, max: 8 }),
  s: fc.integer({ min: 2, max: 40 }),
  seed: fc.integer(),
});

/** the options each model takes here, by its fields' names (the same on both dialects) */
function options(model: Model, c: number): Record<string, unknown> {
  switch (model) {
    case 'rmsnorm': return { eps: 1e-3, partial: 0.75, axis: 1 }; // rows of c·s ≥ 2 elements at s ≥ 2
    case 'layernorm': return { eps: 1e-3, axis: 1 };
    case 'batchnorm': return { training: true, momentum: 0.2 };
    default: return { num_groups: c % 2 === 0 ? 2 : 1 };
  }
}

describe('/v1 msgpack and /v2 binary agree bit for bit', () => {
  it('every model, datatype and output datatype, shapes [n, c, s]', async () => {
    await fc.assert(fc.asyncProperty(cases, async ({ model, datatype, out, n, c, s, seed }) => {
      const shape = [n, c, s];
      let state = seed | 1;
      const values = Array.from({ length: n * c * s }, () => {
        state = (Math.imul(state, 1103515245) + 12345) | 0;
        return ((state >>> 8) / 2 ** 24) * 8 - 3;
      });
      const dtype = DTYPE_OF[datatype];
      const opts = options(model, c);
      const v1 = await app.inject({
        method: 'POST', url: `/v1/${model}`, headers: { 'content-type': 'application/msgpack' },
        payload: pack({ input: { dtype, shape, data: bytesOf(dtype, values) }, output_dtype: DTYPE_OF[out], ...opts }),
      });
      expect(v1.statusCode, v1.body.slice(0, 300)).toBe(200);
      const v1Bytes = Buffer.from(unpack(v1.rawPayload).output.data);
      const { payload, headerLength } = binaryBody(
        { parameters: { ...opts, output_dtype: out, binary_data_output: true } },
        [binaryInput('input', datatype, shape, values)],
      );
      const v2 = await infer(app, model, payload, { 'inference-header-content-length': String(headerLength) });
      expect(v2.statusCode, v2.body.slice(0, 300)).toBe(200);
      const h = Number(v2.headers['inference-header-content-length']);
      expect(v2.rawPayload.subarray(h).equals(v1Bytes)).toBe(true);
    }), { numRuns: 60, seed: 20261123 });
  });
});
