// prepareConstF32 (no weight sent: g = weight_offset + 1 for every channel) leaves the scale and the
// prepared block byte for byte as filling the scale and calling prepareF32 does, for any n and g,
// with and without a bias, and writes nothing past them.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { loadWasmKernels, preparedBytes } from '../../src/kernels/wasm-kernels.js';

const memory = new WebAssembly.Memory({ initial: 16, maximum: 16, shared: true });
const kernels = loadWasmKernels(memory);
const bytes = new Uint8Array(memory.buffer);

/** scale, bias and prepared of n, each followed by 64 guard bytes */
function regions(base: number, n: number) {
  const scale = base;
  const bias = scale + 8 * n + 64;
  const prepared = bias + 8 * n + 64;
  return { scale, bias, prepared, end: prepared + preparedBytes(n) + 64 };
}

it('prepareConstF32 = fill + prepareF32', () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 300 }),
    fc.oneof(fc.constantFrom(1, 0.5, -3, 0, 1e-40, 3e38, 1 + 2 ** -30), fc.double({ min: -1e6, max: 1e6, noNaN: true })),
    fc.option(fc.float32Array({ minLength: 300, maxLength: 300, noNaN: true }), { nil: null }),
    (n, g, biasValues) => {
      const a = regions(64, n);
      const b = regions(a.end, n);
      bytes.fill(0xa5, 64, b.end);
      for (const r of [a, b]) if (biasValues !== null) new Float64Array(memory.buffer, r.bias, n).set(biasValues.subarray(0, n));
      new Float64Array(memory.buffer, a.scale, n).fill(g);
      kernels.prepareF32(a.scale, biasValues === null ? null : a.bias, n, a.prepared);
      kernels.prepareConstF32(g, b.scale, biasValues === null ? null : b.bias, n, b.prepared);
      expect(Buffer.compare(bytes.subarray(b.scale, b.end), bytes.subarray(a.scale, a.end))).toBe(0);
    },
  ), { numRuns: 400 });
});
