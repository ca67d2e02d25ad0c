// the header written before an answer's output bytes, then the bytes, decode as {output: {dtype, shape, data}}
// with msgpackr's own reader, on a first call and on the cached ones, for any shape.
import fc from 'fast-check';
import { unpack } from 'msgpackr';
import { expect, it } from 'vitest';
import { outputPrefix } from '../../src/codec/msgpack-prefix.js';

it('prefix + data decodes to the output, first time and cached', () => {
  fc.assert(fc.property(
    fc.constantFrom('float32' as const, 'float64' as const, 'float16' as const, 'bfloat16' as const),
    fc.array(fc.integer({ min: 0, max: 70000 }), { minLength: 1, maxLength: 8 }),
    fc.uint8Array({ maxLength: 64 }),
    (dtype, shape, data) => {
      for (let i = 0; i < 2; i++) {
        const decoded = unpack(Buffer.concat([outputPrefix(dtype, shape, data.length), data]));
        expect(decoded.output.dtype).toBe(dtype);
        expect(decoded.output.shape).toEqual(shape);
        expect(new Uint8Array(decoded.output.data)).toEqual(data);
      }
    },
  ), { numRuns: 600 }); // past the cache's 256 shapes: it is cleared and refilled on the way
});
