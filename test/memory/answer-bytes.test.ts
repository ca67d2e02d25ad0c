// a packed answer laid out in a slab: its pieces, written ones and ones copied within the shared
// memory (at any byte offsets, by the kernels' memory.copy), come out in order, byte for byte, and
// the slab is the lease's until it is released.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { layOutAnswer, type BytePiece } from '../../src/jobs/answer-bytes.js';
import { loadWasmKernels } from '../../src/kernels/wasm-kernels.js';
import { Lease } from '../../src/memory/lease.js';
import { createTensorMemory } from '../../src/memory/tensor-memory.js';

const slabs = createTensorMemory(8 * 1024 * 1024);
const wasm = loadWasmKernels(slabs.memory);

it('pieces come out in order, held ones copied from any offset', () => {
  fc.assert(fc.property(
    fc.array(fc.record({ held: fc.boolean(), bytes: fc.uint8Array({ maxLength: 5000 }), phase: fc.integer({ min: 0, max: 7 }) }), { maxLength: 12 }),
    (specs) => {
      const lease = new Lease(slabs);
      // the held pieces sit in a source slab of their own, each at its phase
      const source = slabs.acquire(specs.reduce((sum, s) => sum + s.bytes.length + 8, 8));
      lease.add(source);
      const view = new Uint8Array(source.memory);
      let at = source.offset;
      const pieces: BytePiece[] = specs.map(({ held, bytes, phase }) => {
        if (!held) return Buffer.from(bytes);
        at += phase;
        view.set(bytes, at);
        const piece = { byteOffset: at, length: bytes.length };
        at += bytes.length;
        return piece;
      });
      const answer = layOutAnswer(pieces, slabs, lease, wasm);
      expect(Buffer.compare(answer, Buffer.concat(specs.map((s) => s.bytes)))).toBe(0);
      expect(answer.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(slabs.inUseBytes).toBeGreaterThanOrEqual(answer.length);
      lease.release();
      expect(slabs.inUseBytes).toBe(0);
    },
  ), { numRuns: 200 });
});
