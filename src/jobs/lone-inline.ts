// the common small request, here and now: one row-wise request that the SIMD kernels compute inline
// with the kept parameters (no weight, bias, residual or statistics), its input read where the body
// put it and its answer sent straight from memory, the output written right after the answer's
// framing. The general path (allocate.ts → run.ts → the format's encode) computes the same bytes and
// counts the same metrics; for this request it also made a plan, a task with its cancel flags, a
// job, its phases and timings: the pipeline in place 1.35 µs against 0.92 here, a small request over
// a socket 3-5 % of its CPU (npm run ab:path --case socket 0.947 and, builds swapped, 1.026; npm run
// ab at 2,000 req/s 0.960 and 1.021; 2026-11-28).
import { DTYPES } from '../codec/dtype.js';
import { constParams } from '../kernels/const-params.js';
import { rowKernel } from '../kernels/row-kernels.js';
import { bytesView } from '../memory/whole-views.js';
import { outputAtAnyOffset } from './allocate.js';
import type { CheckedRequest } from './checked-request.js';
import { answerStart, placement } from './job.js';
import { countNormalized, countTaskDone } from './run.js';
import type { PipelineRequest, PipelineResources, PipelineResult } from './pipeline.js';

/** the answer, or null when `item` is not such a request (the general path then runs it). `started`:
 *  the clock when the pipeline began, for Server-Timing's decode */
export function runLoneInline(
  engine: PipelineResources, req: PipelineRequest, item: CheckedRequest, started: number,
): PipelineResult | null {
  // faults are injected on workers only; a batch frames its items itself
  if (item.layout !== 'rows' || req.fault !== null || req.answer.batchHead !== undefined) return null;
  if (item.weight !== null || item.bias !== null || item.residual !== null || item.stats.length > 0) return null;
  // float32 out of the SIMD kernels, small enough to run inline (their cost is 1 an element: job.ts COST)
  if (!outputAtAnyOffset(item) || item.input.size > engine.limits.inlineMaxElements) return null;
  const input = placement(item.input, 'float32', true);
  if (!('inPlace' in input)) return null;
  const kernel = rowKernel(item.params);
  const kept = constParams(engine.slabs, engine.wasm, item.weightOffset + 1, kernel.paramLength(item.params, item.n));
  if (kept === null) return null;
  const prefix = req.answer.prefix(item);
  if (prefix === null) return null;

  // placed as job.ts's openJobSlab places an answer
  const prefixStart = answerStart(prefix.length, req.answer.answerPhase ?? null);
  const yOffset = prefixStart + prefix.length;
  const yBytes = item.input.size * DTYPES.float32.itemsize;
  const slab = engine.slabs.acquire(yOffset + yBytes);
  req.lease.add(slab);
  bytesView(slab.memory).set(prefix, slab.offset + prefixStart);

  // cancelled while its body arrived: the general path drops it (a 504; this slab goes with the lease)
  const runStarted = performance.now();
  if (req.cancellation.cancelledAt(runStarted)) return null;
  kernel.simd!(engine.wasm, {
    params: item.params, scale: kept.scale, bias: null, prepared: kept.prepared, mean: null, rstd: null,
    n: item.n, rowStart: 0, rowEnd: item.rows, eps: item.eps, epsOutside: item.epsOutside,
  }, input.inPlace.byteOffset, slab.offset + yOffset);
  const runEnded = performance.now();
  // the deadline passed meanwhile: the general path answers what it answers then (a 504, as for a
  // request whose inline work ended past its deadline), this slab given back with the lease
  if (req.cancellation.cancelledAt(runEnded)) return null;

  // what the general path counts for the same request: one task run inline, which waited for no worker
  countTaskDone(engine.metrics, 0, runEnded - runStarted);
  countNormalized(engine.metrics, item);
  return {
    payload: Buffer.from(slab.memory, slab.offset + prefixStart, prefix.length + yBytes),
    timings: { decode: runStarted - started, queue: 0, compute: runEnded - runStarted, encode: performance.now() - runEnded },
  };
}
