// the header written before an answer's output bytes, then the bytes, decode as {output: {dtype, shape, data}}
// with msgpackr's own reader, on a first call and on the cached ones, for any shape; and the pieces a
// packed answer is made of decode as the maps, arrays and tensors they stand for.
import fc from 'fast-check';
import { unpack, Unpackr } from 'msgpackr';
import { expect, it } from 'vitest';
import { arrayHeader, keyBytes, mapHeader, outputPrefix, tensorPrefix } from '../../src/codec/msgpack-prefix.js';

const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });

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

it('map and array headers + tensor prefixes + data decode as msgpackr packs the same value', () => {
  fc.assert(fc.property(
    fc.array(fc.record({
      name: fc.constantFrom('output', 'mean', 'rstd', 'residual', 'x'.repeat(40)),
      dtype: fc.constantFrom('float32' as const, 'float64' as const, 'float16' as const, 'bfloat16' as const),
      shape: fc.array(fc.integer({ min: 0, max: 70000 }), { minLength: 0, maxLength: 4 }),
      numpy: fc.boolean(),
      data: fc.uint8Array({ maxLength: 40 }),
    }), { minLength: 0, maxLength: 20 }),
    fc.constantFrom(0, 1, 15, 16, 300, 70000),
    (tensors, arrayLength) => {
      const pieces = [arrayHeader(arrayLength), mapHeader(tensors.length)];
      for (const t of tensors) pieces.push(keyBytes(t.name), tensorPrefix(t.dtype, t.shape, t.numpy, t.data.length), t.data);
      const decoded = unpackr.unpack(Buffer.concat(pieces.slice(1)));
      const expected = new Map(tensors.map((t) => [t.name, t]));
      expect([...decoded.keys()]).toEqual([...expected.keys()]);
      for (const [name, t] of expected) {
        const got = decoded.get(name);
        if (t.numpy && t.dtype !== 'bfloat16') {
          // msgpack-numpy's form: bin keys nd, type, kind, shape, data
          const fields = new Map([...got].map(([k, v]) => [Buffer.from(k).toString(), v]));
          expect(fields.get('nd')).toBe(true);
          expect(fields.get('shape')).toEqual(t.shape);
          expect(new Uint8Array(fields.get('data'))).toEqual(t.data);
        } else {
          expect(got.get('dtype')).toBe(t.dtype);
          expect(got.get('shape')).toEqual(t.shape);
          expect(new Uint8Array(got.get('data'))).toEqual(t.data);
        }
      }
      // the array header alone: msgpackr reads it as that many items (checked item by item in one
      // pass: a deep toEqual of 70,000 items, 50 times a run, took this test past 5 s on a busy host)
      const items: unknown = unpack(Buffer.concat([arrayHeader(arrayLength), Buffer.alloc(arrayLength)]));
      expect(Array.isArray(items) && items.length === arrayLength && items.every((item) => item === 0)).toBe(true);
    },
  ), { numRuns: 300 });
});
