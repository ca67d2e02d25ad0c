// msgpack bodies of one shape in a row, as a client sends them (codec/kept-msgpack-body.ts hands a
// repeat the value its decode would give): each answer is its own data's, against the float64
// reference, and a body that fails its checks fails the same way every time.
import { describe, expect, it } from 'vitest';
import { bodyOf, expectError, okBody, postMsgpack, unpackMaps, useFreshApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { bytesOf, randomValues, valuesFromBytes, valuesOf } from '../helpers/tensors.js';

const ctx = useFreshApp();
const SHAPE = [2, 64];

const ndarray = (values: number[]) => new Map<Buffer, unknown>([
  [Buffer.from('nd'), true], [Buffer.from('type'), '<f4'], [Buffer.from('kind'), Buffer.alloc(0)], [Buffer.from('shape'), SHAPE], [Buffer.from('data'), bytesOf('float32', values)],
]);

describe('bodies of one shape in a row', () => {
  it('rmsnorm 2x64 float32 five times with new data: each answer matches its own data', async () => {
    for (let k = 0; k < 5; k++) {
      const values = randomValues(100 + k, 128, 3, k);
      const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float32', shape: SHAPE, data: bytesOf('float32', values) }, eps: 1e-5 });
      expectClose(valuesOf(okBody(res).output), reference({ op: 'rmsnorm', dtype: 'float32', shape: SHAPE, values, eps: 1e-5 }).output, 'float32');
    }
  });

  it('msgpack-numpy ndarrays, then the plain form, then numpy again: each answered in its own form', async () => {
    for (const [k, numpy] of [[0, true], [1, true], [2, false], [3, true]] as const) {
      const values = randomValues(200 + k, 128);
      const res = await postMsgpack(ctx.app, '/v1/layernorm', { input: numpy ? ndarray(values) : { dtype: 'float32', shape: SHAPE, data: bytesOf('float32', values) } });
      expect(res.statusCode).toBe(200);
      const output = unpackMaps(res.rawPayload).get('output');
      const ref = reference({ op: 'layernorm', dtype: 'float32', shape: SHAPE, values }).output;
      if (numpy) {
        const field = (name: string) => [...output].find(([key]: [Uint8Array]) => Buffer.from(key).toString() === name)[1];
        expect(field('nd')).toBe(true);
        expectClose(valuesFromBytes('float32', field('data')), ref, 'float32');
      } else {
        expectClose(valuesOf(okBody(res).output), ref, 'float32');
      }
    }
  });

  it('a body with an unknown field, twice with new data: the same 400 both times, then a good one is answered', async () => {
    for (let k = 0; k < 2; k++) {
      const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float32', shape: SHAPE, data: bytesOf('float32', randomValues(k, 128)) }, epsilon: 1e-5 });
      expectError(res, 400, 'NORM_ERR_FIELD_UNKNOWN', 'epsilon: unknown field');
    }
    const values = randomValues(9, 128);
    const res = await postMsgpack(ctx.app, '/v1/rmsnorm', { input: { dtype: 'float32', shape: SHAPE, data: bytesOf('float32', values) } });
    expect(bodyOf(res).output.shape).toEqual(SHAPE);
    expectClose(valuesOf(okBody(res).output), reference({ op: 'rmsnorm', dtype: 'float32', shape: SHAPE, values }).output, 'float32');
  });
});
