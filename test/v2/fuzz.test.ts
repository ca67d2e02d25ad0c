// hostile /v2 bodies: every answer is a 4xx {"error": …} in JSON (or a 200 where the body may still
// be valid), never a 5xx, and the server still answers a valid request right after.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useFreshApp, clientErrorBody, type Response } from '../helpers/http.js';
import { binaryBody, binaryInput, infer, readAnswer } from './oip.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const ctx = useFreshApp({}, 'file');

const MODELS = ['rmsnorm', 'layernorm', 'batchnorm', 'groupnorm'] as const;
const VALUES = [0.5, -1.25, 2, 3.5, -4, 5.25, 6, -7.5];

function valid(model: string) {
  const parameters = model === 'groupnorm' ? { num_groups: 2 } : model === 'batchnorm' ? { training: true } : {};
  return binaryBody({ parameters, outputs: [{ name: 'output', parameters: { binary_data: true } }] }, [binaryInput('input', 'FP32', [2, 4], VALUES)]);
}

function checkAnswer(res: Response, mayBeValid = false): void {
  if (mayBeValid && res.statusCode === 200) return;
  const body = clientErrorBody(res);
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error === 'string' && body.error.length > 0).toBe(true);
}

async function stillServing(): Promise<void> {
  for (const model of MODELS) {
    const { payload, headerLength } = valid(model);
    expect(readAnswer(await infer(ctx.app, model, payload, { 'inference-header-content-length': String(headerLength) })).outputs.get('output')!.values).toHaveLength(8);
  }
}

const model = fc.constantFrom(...MODELS);

describe('fuzz /v2: every answer is a 4xx {"error"}, never a 5xx', () => {
  it('random bytes after a valid header', async () => {
    await fc.assert(fc.asyncProperty(model, fc.uint8Array({ maxLength: 80 }), async (m, bytes) => {
      const { payload, headerLength } = valid(m);
      const body = Buffer.concat([payload.subarray(0, headerLength), bytes]);
      checkAnswer(await infer(ctx.app, m, body, { 'inference-header-content-length': String(headerLength) }), bytes.length === 32);
    }), { numRuns: 200, seed: SEED });
    await stillServing();
  });

  it('absurd header lengths', async () => {
    const lengths = fc.oneof(fc.constantFrom('0', '-1', '1e3', '0x10', ' 12', '12 ', '', '99999999999999999999', '1.5', 'NaN'), fc.nat({ max: 10_000 }).map(String));
    await fc.assert(fc.asyncProperty(model, lengths, async (m, length) => {
      const { payload, headerLength } = valid(m);
      checkAnswer(await infer(ctx.app, m, payload, { 'inference-header-content-length': length }), length === String(headerLength));
    }), { numRuns: 200, seed: SEED });
    await stillServing();
  });

  it('deep JSON nesting in every place, and bodies of random bytes', async () => {
    const deep = (open: string, close: string, depth: number) => open.repeat(depth) + close.repeat(depth);
    const bodies = fc.oneof(
      fc.integer({ min: 1, max: 100_000 }).map((d) => `{"inputs":[{"name":"input","datatype":"FP32","shape":[1],"data":${deep('[', ']', d)}}]}`),
      fc.integer({ min: 1, max: 100_000 }).map((d) => `{"inputs":[],"parameters":${deep('{"a":', '}', d).replace(/\}$/, '1}')}}`),
      fc.integer({ min: 1, max: 100_000 }).map((d) => deep('[', ']', d)),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
    );
    await fc.assert(fc.asyncProperty(model, bodies, async (m, body) => checkAnswer(await infer(ctx.app, m, body))), { numRuns: 100, seed: SEED });
    await stillServing();
  });

  it('huge declared sizes and shapes with few bytes', async () => {
    const sizes = fc.constantFrom(2 ** 31, 2 ** 53, 1e300, 2 ** 32 + 32, -32, 32.5);
    const shapes = fc.constantFrom([2 ** 31, 2 ** 31], [1e15, 1e15, 1e15], [2 ** 53], [0, 2 ** 53]);
    await fc.assert(fc.asyncProperty(model, sizes, shapes, async (m, size, shape) => {
      const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'input', datatype: 'FP32', shape, parameters: { binary_data_size: size } }] }));
      checkAnswer(await infer(ctx.app, m, Buffer.concat([header, Buffer.alloc(32)]), { 'inference-header-content-length': String(header.length) }));
    }), { numRuns: 60, seed: SEED });
    await stillServing();
  });
});
