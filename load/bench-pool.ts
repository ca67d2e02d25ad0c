// the pool half of `npm run bench`, shared by the row-wise and per-channel ops: the service's own
// path for one request's compute (a job laid out in a slab, run by runJobs, which splits a large job
// into one task per worker) on a pool of 1 worker and one of 2, timed from submission until every
// task has finished, the two sampled alternately so drift hits both alike.
import { defaults } from '../dist/config.js';
import type { Job } from '../dist/jobs/job.js';
import { Cancellation } from '../dist/engine/cancellation.js';
import { runJobs, type RunContext } from '../dist/jobs/run.js';
import { loadWasmKernels, type WasmKernels } from '../dist/kernels/wasm-kernels.js';
import { createTensorMemory, type TensorMemory } from '../dist/memory/tensor-memory.js';
import { createMetrics } from '../dist/metrics.js';
import { createWorkerPool, type WorkerPool } from '../dist/pool/worker-pool.js';
import { median } from './machine.js';

export interface PoolSide { workers: number; slabs: TensorMemory; pool: WorkerPool; wasm: WasmKernels; ctx: RunContext }

/** a pool of 1 worker and one of 2, each with its own shared memory, as buildApp makes them */
export function poolSides(): PoolSide[] {
  const log = (err: Error) => process.stderr.write(`pool: ${err.message}\n`);
  return [1, 2].map((workers) => {
    const slabs = createTensorMemory(1024 * 2 ** 20); // 1 GiB cap, of which a few jobs are used
    const pool = createWorkerPool({ workers, maxQueue: 64 }, slabs.memory, log);
    const wasm = loadWasmKernels(slabs.memory); // the main thread's copy, as buildApp makes it
    const ctx: RunContext = {
      pool, wasm, metrics: createMetrics(pool, slabs), fault: null, cancellation: new Cancellation(2 ** 31 - 1), // never fires
      limits: { inlineMaxElements: defaults.inlineMaxElements, minTaskElements: defaults.minTaskElements },
    };
    return { workers, slabs, pool, wasm, ctx };
  });
}

export function closeSides(sides: PoolSide[]): Promise<void[]> {
  return Promise.all(sides.map((side) => side.pool.close()));
}

export interface SideFigures { workers: number; medianMs: number; speedup: number; checkFailure: string | null }

/**
 * each side's median ms for the job `allocate` lays out (3 warm-ups each, then `samples` alternating),
 * its speed-up over one worker, and one more run's answer checked by `check` (null: right)
 */
export async function compareSides(
  sides: PoolSide[], samples: number, allocate: (side: PoolSide) => Job, check: (job: Job) => string | null,
): Promise<SideFigures[]> {
  const once = async (side: PoolSide, checked: boolean): Promise<[number, string | null]> => {
    const job = allocate(side);
    const t0 = performance.now();
    const run = runJobs([job], side.ctx);
    // a job small enough is computed inline: nothing to wait for
    if (run.inline === null) await run.result;
    const ms = performance.now() - t0;
    if (run.inline === null) await run.settled;
    const problem = checked ? check(job) : null;
    side.slabs.release(job.slab);
    return [ms, problem];
  };
  for (const side of sides) for (let w = 0; w < 3; w++) await once(side, false);
  const times: number[][] = sides.map(() => []);
  for (let i = 0; i < samples; i++) for (let s = 0; s < sides.length; s++) times[s].push((await once(sides[s], false))[0]);
  const single = median(times[0]);
  const figures: SideFigures[] = [];
  for (let s = 0; s < sides.length; s++) {
    const ms = median(times[s]);
    figures.push({ workers: sides[s].workers, medianMs: ms, speedup: single / ms, checkFailure: (await once(sides[s], true))[1] });
  }
  return figures;
}
