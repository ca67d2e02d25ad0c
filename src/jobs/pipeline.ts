// the one pipeline every dialect feeds: check → allocate → run → encode. A dialect turns its wire form
// into items (an operation, its body, the path that names its fields) and sends back what comes out.
import { DTYPES } from '../codec/dtype.js';
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import type { WasmKernels } from '../kernels/wasm-kernels.js';
import type { Lease } from '../memory/lease.js';
import { SlabCarver, type SlabSource } from '../memory/slab-carver.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import type { Metrics } from '../metrics.js';
import { OPERATIONS, type OpName } from '../ops/registry.js';
import type { WorkerPool } from '../pool/worker-pool.js';
import type { TaskFault } from '../pool/protocol.js';
import { allocateRowJob } from './allocate.js';
import { allocateChannelJob } from './allocate-channels.js';
import { rowCount, type CheckedRequest } from './checked-request.js';
import type { Job } from './job.js';
import type { Cancellation } from '../engine/cancellation.js';
import { jobsDone, runJobs, type JobTiming } from './run.js';
import { writeAnswerText, type AnswerPart, type Payload } from './answer-text.js';
import { layOutAnswer, type GatheredAnswer } from './answer-bytes.js';

/** what the pipeline runs on: the engine's (engine/engine.ts) */
export interface PipelineResources {
  pool: WorkerPool;
  slabs: TensorMemory;
  /** this thread's SIMD kernels: inline work and per-request preparation */
  wasm: WasmKernels;
  metrics: Metrics;
  limits: Pick<Config, 'inlineMaxElements' | 'minTaskElements'>;
}

export interface PipelineItem {
  op: OpName;
  body: Record<string, unknown>;
  /** '' for a single request, `requests[3].` inside a batch */
  path: string;
}

/** how a dialect frames its answer */
export interface AnswerFormat {
  /** the answer's bytes before the output when it can go out straight from the slab, else null */
  prefix(req: CheckedRequest): Buffer | null;
  /** when such an answer is copied on by its sender: the offset mod 8 its first byte lands at there
   *  (grpc-js copies a message after a 5-byte frame header); V8 copies out of shared memory byte by
   *  byte unless both ends agree mod 8 */
  answerPhase?: number;
  /** the finished jobs → the answer body: bytes, pieces to lay out in a slab, or JSON text whose
   *  tensors' numbers are still to be written */
  encode(jobs: Job[]): Buffer | GatheredAnswer | AnswerPart[];
}

export interface PipelineRequest {
  items: PipelineItem[];
  /** JSON bodies cannot carry non-finite numbers except by overflow, which is then an error */
  fromJson: boolean;
  answer: AnswerFormat;
  /** holds the request's slabs (its body's already) */
  lease: Lease;
  /** fires at the deadline or when the client goes away: queued work is dropped, the answer is a 504 */
  cancellation: Cancellation;
  fault: TaskFault | null;
}

/** ms spent in each phase, for Server-Timing */
export interface Timings { decode: number; queue: number; compute: number; encode: number }

export interface PipelineResult { payload: Payload; timings: Timings }

/** the answer at once when every job was computed inline and its text is short (the common small
 *  request: no promise, no microtask), else a promise of it */
export function runPipeline(engine: PipelineResources, req: PipelineRequest): PipelineResult | Promise<PipelineResult> {
  const started = performance.now();
  // every item is checked before any memory is taken: an invalid batch computes nothing
  const checked = req.items.map(({ op, body, path }) => OPERATIONS[op].check(body, path, req.fromJson));
  const jobs: Job[] = [];
  // a batch's jobs are carved from a few slabs the lease holds as they are taken; a lone job's slab
  // is its own. Either way held at once, so a later item's 503 still gives this one back
  const carver = checked.length > 1 ? new SlabCarver(engine.slabs, req.lease, checked.length) : null;
  for (const item of checked) {
    const job = allocateJob(engine, item, req.answer.prefix(item), req.answer.answerPhase ?? null, carver ?? engine.slabs);
    if (carver === null) req.lease.add(job.slab);
    jobs.push(job);
  }
  const runStarted = performance.now();
  // built field by field: an object spread here cost ~3 µs a request (V8's clone slow path)
  const { pool, wasm, metrics, limits } = engine;
  const run = runJobs(jobs, { pool, wasm, metrics, limits, cancellation: req.cancellation, fault: req.fault });
  const answer = (jobTimings: JobTiming[]) => encodeAnswer(engine, req, checked, jobs, jobTimings, runStarted - started, runStarted);
  return run.inline !== null ? answer(run.inline) : jobsDone(run, req.lease).then(answer);
}

function encodeAnswer(
  engine: PipelineResources, req: PipelineRequest, checked: CheckedRequest[], jobs: Job[], jobTimings: JobTiming[], decode: number, runStarted: number,
): PipelineResult | Promise<PipelineResult> {
  const runEnded = performance.now();
  const runMs = runEnded - runStarted;
  for (const item of checked) {
    const { op, input } = item;
    engine.metrics.rows.cell(op, input.dtype).value += rowCount(item);
    engine.metrics.elements.cell(op, input.dtype).value += input.size;
    engine.metrics.bytes.cell(op, input.dtype).value += input.size * DTYPES[input.dtype].itemsize;
  }
  let queue = 0;
  for (const t of jobTimings) queue = Math.max(queue, t.queueMs);
  const encodeStarted = runEnded; // the metrics above count as encoding: one clock read fewer
  const timings = (): Timings => ({ decode, queue, compute: Math.max(0, runMs - queue), encode: performance.now() - encodeStarted });
  const encoded = req.answer.encode(jobs);
  if (Buffer.isBuffer(encoded)) return { payload: encoded, timings: timings() };
  if (!Array.isArray(encoded)) return { payload: layOutAnswer(encoded.pieces, engine.slabs, req.lease, engine.wasm), timings: timings() };
  const text = writeAnswerText(encoded, engine, req);
  return text instanceof Promise ? text.then((payload) => ({ payload, timings: timings() })) : { payload: text, timings: timings() };
}

function allocateJob(engine: PipelineResources, req: CheckedRequest, prefix: Buffer | null, answerPhase: number | null, source: SlabSource): Job {
  return req.layout === 'rows'
    ? allocateRowJob(req, engine.slabs, engine.pool.workers, engine.wasm, prefix, answerPhase, source)
    : allocateChannelJob(req, source, engine.pool.workers, prefix);
}
