// the same tensor through /v1 msgpack and /v2 binary: the same engine, so bit-identical outputs.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { okBody, postMsgpack, useFreshApp } from '../helpers/http.js';
import { bytesOf, randomValues } from '../helpers/tensors.js';
import { binaryBody, binaryInput, DTYPE_OF, infer, type Datatype } from './oip.js';

// inline and pool paths both: a low inline threshold sends the larger cases to the workers
const ctx = useFreshApp({ inlineMaxElements: 4096, minTaskElements: 1024 }, 'file');

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
      const values = randomValues(seed, n * c * s, 4, 1); // in [-3, 5)
      const dtype = DTYPE_OF[datatype];
      const opts = options(model, c);
      const v1 = okBody(await postMsgpack(ctx.app, `/v1/${model}`, { input: { dtype, shape, data: bytesOf(dtype, values) }, output_dtype: DTYPE_OF[out], ...opts }));
      const v1Bytes = Buffer.from(v1.output.data);
      const { payload, headerLength } = binaryBody(
        { parameters: { ...opts, output_dtype: out, binary_data_output: true } },
        [binaryInput('input', datatype, shape, values)],
      );
      const v2 = await infer(ctx.app, model, payload, { 'inference-header-content-length': String(headerLength) });
      expect(v2.statusCode, v2.body.slice(0, 300)).toBe(200);
      const h = Number(v2.headers['inference-header-content-length']);
      expect(v2.rawPayload.subarray(h).equals(v1Bytes)).toBe(true);
    }), { numRuns: 60, seed: 20261123 });
  });
});
