// a repeat of the last msgpack body's shape is handed the value a decode would give (the decode
// itself, msgpackr and wire-body.ts, is the reference), and anything else is decoded
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { Unpackr } from 'msgpackr/unpack';
import { describe, expect, it } from 'vitest';
import { KeptMsgpackBody } from '../../src/codec/kept-msgpack-body.js';
import { NUMPY_FORM, normalizeMsgpackBody } from '../../src/codec/wire-body.js';

const packr = new Packr({ useRecords: false });
// as the service decodes (http/body-parsers.ts)
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, structuredClone: false });

/** shared memory, as the service's bodies live in */
const memory = () => Buffer.from(new SharedArrayBuffer(1 << 16));

function place(mem: Buffer, at: number, body: Uint8Array): { offset: number; length: number } {
  mem.set(body, at);
  return { offset: at, length: body.length };
}

function decode(mem: Buffer, { offset, length }: { offset: number; length: number }): unknown {
  return normalizeMsgpackBody(unpackr.unpack(mem, { start: offset, end: offset + length }));
}

/** the service's path: the kept value when the body repeats, else the decode (kept for next time) */
function read(kept: KeptMsgpackBody, mem: Buffer, at: { offset: number; length: number }): { value: unknown; hit: boolean } {
  const value = kept.lookup(mem, at.offset, at.length);
  if (value !== undefined) return { value, hit: true };
  return { value: kept.keep(decode(mem, at), mem, at.offset, at.length), hit: false };
}

/** equal as the handlers see them: fields, bytes, which objects are numpy-form, and every Buffer a
 *  view of the same bytes of the same memory */
function expectSame(got: unknown, want: unknown): void {
  expect(got).toEqual(want);
  const walk = (a: unknown, b: unknown) => {
    if (typeof b !== 'object' || b === null) return;
    if (ArrayBuffer.isView(b)) {
      const [va, vb] = [a as Buffer, b as Buffer];
      expect(Object.getPrototypeOf(va)).toBe(Object.getPrototypeOf(vb));
      expect([va.buffer === vb.buffer, va.byteOffset, va.byteLength]).toEqual([true, vb.byteOffset, vb.byteLength]);
      return;
    }
    expect((a as Record<symbol, unknown>)[NUMPY_FORM]).toBe((b as Record<symbol, unknown>)[NUMPY_FORM]);
    for (const key of Object.keys(b)) walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]);
  };
  walk(got, want);
}

const floats = (n: number, seed: number) => new Uint8Array(Float32Array.from({ length: n }, (_, i) => Math.sin(i + seed)).buffer);
const tensorBody = (seed: number, shape = [2, 8]) => packr.pack({ input: { dtype: 'float32', shape, data: floats(shape[0] * shape[1], seed) } });
// msgpack-numpy's form: bin keys, the dtype as numpy's descriptor
const numpyBody = (seed: number) => packr.pack(new Map<unknown, unknown>([
  ['input', new Map<unknown, unknown>([
    [Buffer.from('nd'), true], [Buffer.from('type'), '<f4'], [Buffer.from('kind'), Buffer.alloc(0)], [Buffer.from('shape'), [2, 8]], [Buffer.from('data'), floats(16, seed)],
  ])],
  ['eps', 1e-5],
]));
const batchBody = (seed: number) => packr.pack({
  requests: [
    { op: 'rmsnorm', input: { dtype: 'float32', shape: [1, 64], data: floats(64, seed) }, weight: { dtype: 'float32', shape: [64], data: floats(64, seed + 1) } },
    { op: 'layernorm', input: { dtype: 'float32', shape: [2, 32], data: floats(64, seed + 2) }, eps: 0.001 },
  ],
});

/** `bodies` read in turn, each given what its decode gives and none found: a template is made from
 *  the second of two bodies of one length */
function readMisses(kept: KeptMsgpackBody, mem: Buffer, at: number, bodies: Uint8Array[]): void {
  for (const [k, body] of bodies.entries()) {
    const placed = place(mem, at + 3000 * k, body);
    const got = read(kept, mem, placed);
    expect(got.hit).toBe(false);
    expectSame(got.value, decode(mem, placed));
  }
}

/** a body that repeats the kept shape, placed at `at`: found, and given what its decode gives */
function expectRepeat(kept: KeptMsgpackBody, mem: Buffer, at: number, body: Uint8Array): void {
  const second = place(mem, at, body);
  const got = read(kept, mem, second);
  expect(got.hit).toBe(true);
  expectSame(got.value, decode(mem, second));
}

describe('a repeated body shape', () => {
  for (const [name, make] of [['a plain tensor', tensorBody], ['msgpack-numpy', numpyBody], ['a batch with a weight', batchBody]] as const) {
    it(`${name}: the third body gets what its decode gives, its views on its own bytes`, () => {
      const mem = memory();
      const kept = new KeptMsgpackBody();
      readMisses(kept, mem, 64, [make(1), make(3)]);
      expectRepeat(kept, mem, 20_000, make(2));
    });
  }

  it('hands out a fresh value each time: changing one changes nothing the next body gets', () => {
    const mem = memory();
    const kept = new KeptMsgpackBody();
    readMisses(kept, mem, 0, [tensorBody(3)]);
    const first = place(mem, 4000, tensorBody(1));
    const a = read(kept, mem, first).value as { input: { shape: number[]; dtype?: string }; extra?: number };
    a.input.shape[0] = 99;
    delete a.input.dtype;
    a.extra = 1;
    expectRepeat(kept, mem, 8000, tensorBody(2));
  });

  it('is decoded when anything but the tensor data differs: a shape, a scalar, the length', () => {
    const mem = memory();
    const kept = new KeptMsgpackBody();
    const body = (seed: number) => packr.pack({ input: { dtype: 'float32', shape: [2, 8], data: floats(16, seed) }, eps: 0.001 });
    readMisses(kept, mem, 0, [body(1), body(2)]);
    // a template is kept: a repeat is found
    expectRepeat(kept, mem, 10_000, body(3));
    for (const body of [
      packr.pack({ input: { dtype: 'float32', shape: [8, 2], data: floats(16, 1) }, eps: 0.001 }),
      packr.pack({ input: { dtype: 'float32', shape: [2, 8], data: floats(16, 1) }, eps: 0.002 }),
      packr.pack({ input: { dtype: 'float32', shape: [2, 8], data: floats(16, 1) }, eps: 0.001, axis: -1 }),
    ]) {
      const at = place(mem, 30_000, body);
      expect(kept.lookup(mem, at.offset, at.length)).toBeUndefined();
    }
  });

  it('keeps no body that is not mostly tensor bytes, nor one with a "__proto__" field', () => {
    const mem = memory();
    for (const body of [
      packr.pack({ input: { shape: [1, 100], data: Array.from({ length: 100 }, (_, i) => i) } }),
      packr.pack(new Map<unknown, unknown>([['input', { dtype: 'float32', shape: [2, 8], data: floats(16, 1) }], ['__proto__', 1]])),
    ]) {
      const kept = new KeptMsgpackBody();
      // read twice: a body that could be a template would be one after its second reading
      readMisses(kept, mem, 0, [body, body]);
      const at = place(mem, 0, body);
      expect(kept.lookup(mem, at.offset, at.length)).toBeUndefined();
    }
  });

  it('a body of another length than the last one is not made a template: lengths that alternate are only decoded', () => {
    const mem = memory();
    const kept = new KeptMsgpackBody();
    readMisses(kept, mem, 0, [tensorBody(1), tensorBody(2, [2, 9]), tensorBody(3), tensorBody(4, [2, 9]), tensorBody(5)]);
    const at = place(mem, 20_000, tensorBody(6));
    expect(kept.lookup(mem, at.offset, at.length)).toBeUndefined();
  });

  it('property: whatever came before, a body gets what its decode gives', () => {
    const dtypes = ['float32', 'float16', 'bfloat16', 'float64'] as const;
    const size = { float32: 4, float16: 2, bfloat16: 2, float64: 8 } as const;
    // a body's shape; its tensors' bytes come from a seed per body
    const shape = fc.record({
      dtype: fc.constantFrom(...dtypes),
      rows: fc.integer({ min: 1, max: 3 }),
      cols: fc.integer({ min: 4, max: 12 }),
      eps: fc.option(fc.constantFrom(1e-5, 1e-3, 0), { nil: undefined }),
      weight: fc.boolean(),
      numpy: fc.boolean(),
    });
    type Shape = typeof shape extends fc.Arbitrary<infer T> ? T : never;
    const bodyOf = (b: Shape, seed: number) => {
      const bytes = (n: number) => Uint8Array.from({ length: n * size[b.dtype] }, (_, i) => (i * 31 + seed) & 255);
      const input = b.numpy
        ? new Map<unknown, unknown>([[Buffer.from('nd'), true], [Buffer.from('type'), b.dtype === 'float32' ? '<f4' : '<f8'], [Buffer.from('shape'), [b.rows, b.cols]], [Buffer.from('data'), bytes(b.rows * b.cols)]])
        : { dtype: b.dtype, shape: [b.rows, b.cols], data: bytes(b.rows * b.cols) };
      return packr.pack({ input, ...(b.eps === undefined ? {} : { eps: b.eps }), ...(b.weight ? { weight: { dtype: b.dtype, shape: [b.cols], data: bytes(b.cols) } } : {}) });
    };
    let hits = 0;
    // two shapes, bodies of either in any order: repeats and changes of shape both come
    fc.assert(fc.property(shape, shape, fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 255 })), { minLength: 3, maxLength: 10 }), (a, b, sequence) => {
      const mem = memory();
      const kept = new KeptMsgpackBody();
      sequence.forEach(([second, seed], k) => {
        const at = place(mem, 1000 + 7000 * (k % 2) + k, bodyOf(second ? b : a, seed));
        const got = read(kept, mem, at);
        if (got.hit) hits++;
        expectSame(got.value, decode(mem, at));
      });
    }), { numRuns: 200 });
    expect(hits).toBeGreaterThan(100);
  });
});
