// the kept parameters of weightless, biasless row norms (kernels/const-params.ts): made once per g and
// row length in the tensor memory's kept area, byte for byte what a request would prepare for itself,
// outside the slabs' budget, and given up (null) when the area is full, when requests prepare their own.
import { expect, it } from 'vitest';
import { constParams } from '../../src/kernels/const-params.js';
import { loadWasmKernels, preparedBytes } from '../../src/kernels/wasm-kernels.js';
import { createTensorMemory, KEPT_AREA_BYTES } from '../../src/memory/tensor-memory.js';

const MiB = 2 ** 20;

it('the same g and row length give the same parameters; others get their own, apart; none count against the budget', () => {
  const slabs = createTensorMemory(8 * MiB);
  const wasm = loadWasmKernels(slabs.memory);
  const a = constParams(slabs, wasm, 1, 768)!;
  expect(constParams(slabs, wasm, 1, 768)).toBe(a);
  const b = constParams(slabs, wasm, 2, 768)!;
  const c = constParams(slabs, wasm, 1, 1000)!;
  const spans = [a, b, c].map((p) => [p.scale.byteOffset, p.prepared + preparedBytes(p.scale.length)] as const).sort((x, y) => x[0] - y[0]);
  for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
  const area = slabs.keptArea;
  for (const [start, end] of spans) {
    expect(start).toBeGreaterThanOrEqual(area.offset);
    expect(end).toBeLessThanOrEqual(area.offset + area.size);
  }
  expect(slabs.inUseBytes).toBe(0);
  // a slab never overlaps the area
  const slab = slabs.acquire(64);
  expect(slab.offset).toBeGreaterThanOrEqual(area.offset + area.size);
  slabs.release(slab);
});

it('byte for byte what prepareConstF32 writes into a request\'s own slab', () => {
  const slabs = createTensorMemory(8 * MiB);
  const wasm = loadWasmKernels(slabs.memory);
  for (const [g, n] of [[1, 768], [0.5, 3], [-3, 4096], [0, 17]] as const) {
    const kept = constParams(slabs, wasm, g, n)!;
    const own = slabs.acquire(8 * n + preparedBytes(n));
    wasm.prepareConstF32(g, own.offset, null, n, own.offset + 8 * n);
    const bytesAt = (at: number, length: number) => Buffer.from(new Uint8Array(slabs.memory.buffer, at, length));
    expect(bytesAt(kept.scale.byteOffset, 8 * n).equals(bytesAt(own.offset, 8 * n)), `scale g=${g} n=${n}`).toBe(true);
    expect(bytesAt(kept.prepared, preparedBytes(n)).equals(bytesAt(own.offset + 8 * n, preparedBytes(n))), `prepared g=${g} n=${n}`).toBe(true);
    expect(Array.from(new Float64Array(slabs.memory.buffer, kept.scale.byteOffset, n)).every((v) => Object.is(v, g))).toBe(true);
    slabs.release(own);
  }
});

it('when the area is full, null: those requests prepare their own parameters', () => {
  const slabs = createTensorMemory(8 * MiB);
  const wasm = loadWasmKernels(slabs.memory);
  const n = Math.floor(KEPT_AREA_BYTES / 16 / 2) - 64; // two of these fit, not three
  expect(constParams(slabs, wasm, 1, n)).not.toBeNull();
  expect(constParams(slabs, wasm, 2, n)).not.toBeNull();
  expect(constParams(slabs, wasm, 3, n)).toBeNull();
  expect(constParams(slabs, wasm, 1, n)).not.toBeNull(); // still kept
  expect(constParams(slabs, wasm, -0, 8)).toBeNull();
});
