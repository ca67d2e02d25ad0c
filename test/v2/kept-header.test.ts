// a client's repeated OIP JSON header is parsed once (src/http/v2/kept-header.ts): requests that
// share a header byte for byte, their tensors different, each get their own answer (the float64
// reference), whichever model and order; a header one byte apart is read afresh; the kept value
// cannot be changed by a reader.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeptHeader } from '../../src/http/v2/kept-header.js';
import { useFreshApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { randomValues } from '../helpers/tensors.js';
import { binaryBody, binaryInput, expectOipError, infer, readAnswer } from './oip.js';

const ctx = useFreshApp({}, 'file');

const send = (model: string, body: { payload: Buffer; headerLength: number }) =>
  infer(ctx.app, model, body.payload, { 'inference-header-content-length': String(body.headerLength) });

describe('a repeated JSON header', () => {
  it('requests with the same header and other tensors each get their own answer', async () => {
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 40 }),
      fc.array(fc.record({ op: fc.constantFrom('rmsnorm', 'layernorm'), seed: fc.integer({ min: 1, max: 1e6 }) }), { minLength: 2, maxLength: 6 }),
      async (rows, n, sends) => {
        const headers = new Set<string>();
        for (const { op, seed } of sends) {
          const values = randomValues(seed, rows * n);
          const body = binaryBody({ parameters: { binary_data_output: true } }, [binaryInput('input', 'FP32', [rows, n], values)]);
          headers.add(body.payload.subarray(0, body.headerLength).toString('latin1'));
          const { outputs } = readAnswer(await send(op, body));
          expectClose(outputs.get('output')!.values, reference({ op, dtype: 'float32', shape: [rows, n], values }).output, 'float32');
        }
        expect(headers.size, 'every request of a run sent the same header').toBe(1);
      },
    ), { numRuns: 25 });
  });

  it('a header one byte apart from the kept one is read afresh', async () => {
    const values = randomValues(7, 8);
    const kept = binaryBody({ parameters: { binary_data_output: true } }, [binaryInput('input', 'FP32', [2, 4], values)]);
    readAnswer(await send('rmsnorm', kept));
    // the same length, one byte changed: the shape [2,4] → [4,2] still fits the bytes, and is answered as [4,2]
    const turned = Buffer.from(kept.payload);
    const at = turned.indexOf('[2,4]');
    turned.write('[4,2]', at);
    const { outputs } = readAnswer(await send('rmsnorm', { payload: turned, headerLength: kept.headerLength }));
    expect(outputs.get('output')!.shape).toEqual([4, 2]);
    expectClose(outputs.get('output')!.values, reference({ op: 'rmsnorm', dtype: 'float32', shape: [4, 2], values }).output, 'float32');
    // and a header that is no longer JSON is its 400, not the kept one's answer
    turned.write('{', at);
    expectOipError(await send('rmsnorm', { payload: turned, headerLength: kept.headerLength }), 400, /Inference-Header-Content-Length/);
  });
});

describe('KeptHeader', () => {
  const bytes = (text: string) => Buffer.from(text);

  it('gives back the value kept for the same bytes only, frozen through, from a copy of the bytes', () => {
    const kept = new KeptHeader();
    const source = bytes('{"inputs":[{"shape":[1,2]}]}');
    expect(kept.lookup(source)).toBeNull();
    kept.keep(source, { ok: true, body: JSON.parse(source.toString()) });
    const found = kept.lookup(bytes('{"inputs":[{"shape":[1,2]}]}'));
    expect(found).toEqual({ ok: true, body: { inputs: [{ shape: [1, 2] }] } });
    const shape = (found!.body as { inputs: { shape: number[] }[] }).inputs[0].shape;
    expect(() => shape.push(3)).toThrow(TypeError);
    expect(kept.lookup(bytes('{"inputs":[{"shape":[1,3]}]}'))).toBeNull();
    // the memory the bytes came from is reused for another body: the kept copy still answers for the old bytes
    source.write('3', source.indexOf('2'));
    expect(kept.lookup(source)).toBeNull();
    expect(kept.lookup(bytes('{"inputs":[{"shape":[1,2]}]}'))).not.toBeNull();
  });

  it('keeps neither a failed parse nor a header longer than its limit', () => {
    const kept = new KeptHeader(16);
    kept.keep(bytes('{"a":'), { ok: false, message: 'Unexpected end of JSON input' });
    expect(kept.lookup(bytes('{"a":'))).toBeNull();
    const long = bytes('{"abcdefghijklmn":1}');
    kept.keep(long, { ok: true, body: { abcdefghijklmn: 1 } });
    expect(kept.lookup(long)).toBeNull();
  });
});
