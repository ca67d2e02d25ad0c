// a one-output answer laid out for a sender that copies it at a given phase (AnswerFormat.answerPhase,
// grpc-js: 5): its first byte lands at that offset mod 8, the prefix right before the output, and the
// SIMD kernels write the output wherever that leaves it (any alignment) — rows they compute in float32
// and rows they compute in float64 alike, against the float64 reference. Where the kernels that write
// the output need it aligned (float64 out, float16/bfloat16 narrowed), the phase is not taken.
import { describe, expect, it } from 'vitest';
import { executeTask } from '../../src/kernels/execute-task.js';
import { loadWasmKernels } from '../../src/kernels/wasm-kernels.js';
import { allocateRowJob } from '../../src/jobs/allocate.js';
import type { RowRequest } from '../../src/jobs/checked-request.js';
import { directBytes } from '../../src/jobs/job.js';
import { createTensorMemory } from '../../src/memory/tensor-memory.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import { expectClose, reference } from '../helpers/reference.js';
import { randomValues } from '../helpers/tensors.js';

const slabs = createTensorMemory(64 * 2 ** 20);
const wasm = loadWasmKernels(slabs.memory);

const n = 13;
const x = [...randomValues(50, n, 2, 0.5), ...randomValues(51, n).map((v) => v * 1e-30), ...randomValues(52, n).map((v) => v * 1e30), ...randomValues(53, n)].map(Math.fround);
const bias = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 100 : -3)); // max|β| > 16: every row in float64

describe('answers placed at a phase', () => {
  for (const op of ['rmsnorm', 'layernorm'] as const) {
    for (const withBias of [false, true]) {
      it(`${op}${withBias ? ' with a bias of 100' : ''}: every phase and prefix length, output at any alignment, against the reference`, () => {
        const req = OPERATIONS[op].check({
          input: { dtype: 'float32', shape: [4, n], data: x }, ...(withBias ? { bias: { dtype: 'float32', shape: [n], data: bias } } : {}),
        }, '', false) as RowRequest;
        const ref = reference({ op, dtype: 'float32', shape: [4, n], values: x, ...(withBias ? { bias: { dtype: 'float32' as const, values: bias } } : {}) });
        const misaligned = new Set<number>();
        for (let phase = 0; phase < 8; phase++) {
          for (let prefixLength = 1; prefixLength <= 9; prefixLength++) {
            const prefix = Buffer.alloc(prefixLength, 0xa0 + prefixLength);
            const job = allocateRowJob(req, slabs, 2, wasm, prefix, phase);
            for (const p of job.phases) executeTask(p.task, wasm);
            expect(job.direct!.start % 8).toBe(phase);
            const answer = directBytes(job);
            expect(answer.subarray(0, prefixLength)).toEqual(prefix);
            const out = answer.subarray(prefixLength);
            misaligned.add((answer.byteOffset + prefixLength) % 4);
            const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
            expectClose(Array.from({ length: 4 * n }, (_, i) => view.getFloat32(4 * i, true)), ref.output, 'float32', ref.largeMean);
            slabs.release(job.slab);
          }
        }
        // the outputs came at every alignment
        expect([...misaligned].sort()).toEqual([0, 1, 2, 3]);
      });
    }
  }

  for (const outDtype of ['float64', 'float16', 'bfloat16'] as const) {
    it(`rmsnorm float32 → ${outDtype}: the output stays aligned, the phase not taken`, () => {
      const req = OPERATIONS.rmsnorm.check({ input: { dtype: 'float32', shape: [4, n], data: x }, output_dtype: outDtype }, '', false) as RowRequest;
      const job = allocateRowJob(req, slabs, 2, wasm, Buffer.alloc(3, 1), 5);
      expect((job.direct!.start + 3) % 8).toBe(0);
      slabs.release(job.slab);
    });
  }
});
