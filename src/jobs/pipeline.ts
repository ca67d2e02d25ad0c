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
import { allocateRowJob, outputAtAnyOffset } from './allocate.js';
import { allocateChannelJob } from './allocate-channels.js';
import { alikeGroups, allocateItemsJob } from './allocate-items.js';
import type { CheckedRequest, RowRequest } from './checked-request.js';
import type { Job } from './job.js';
import type { Cancellation } from '../engine/cancellation.js';
import { countNormalized, jobsDone, runJobs, type JobTiming } from './run.js';
import { writeAnswerText, type AnswerPart, type Payload } from './answer-text.js';
import { layOutAnswer, type GatheredAnswer } from './answer-bytes.js';
import { runLoneInline } from './lone-inline.js';

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
  /** the answer's bytes before the output when it can go out straight from the slab, else null; in
   *  a batch's format, the bytes before one item's output when its items can */
  prefix(req: CheckedRequest): Buffer | null;
  /** a batch's format only: the answer's bytes before its first item's, when its items' answers can
   *  follow each other straight from memory (each framed by `prefix`), else null */
  batchHead?(count: number): Buffer | null;
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
  // the common small request, without the general path's plan, task and job
  const lone = checked.length === 1 ? runLoneInline(engine, req, checked[0], started) : null;
  if (lone !== null) return lone;
  const jobs: Job[] = [];
  const batch = req.answer.batchHead !== undefined;
  const together = batch ? layOutTogether(engine, req, checked) : null;
  // a batch's jobs are carved from a few slabs the lease holds as they are taken; a lone job's slab
  // is its own. Either way held at once, so a later item's 503 still gives this one back
  const carver = batch ? new SlabCarver(engine.slabs, req.lease, checked.length) : null;
  const joined = together === null ? null : joinAlike(engine, checked, together.outputAt, carver!, jobs);
  checked.forEach((item, i) => {
    if (joined?.has(i)) return;
    const prefix = batch ? null : req.answer.prefix(item);
    const job = allocateJob(engine, item, prefix, req.answer.answerPhase ?? null, carver ?? engine.slabs, together?.outputAt[i] ?? null);
    if (carver === null) req.lease.add(job.slab);
    jobs.push(job);
  });
  const runStarted = performance.now();
  // built field by field: an object spread here cost ~3 µs a request (V8's clone slow path)
  const { pool, wasm, metrics, limits } = engine;
  const run = runJobs(jobs, { pool, wasm, metrics, limits, cancellation: req.cancellation, fault: req.fault });
  const answer = (jobTimings: JobTiming[]) => encodeAnswer(engine, req, checked, jobs, together?.answer ?? null, jobTimings, runStarted - started, runStarted);
  return run.inline !== null ? answer(run.inline) : jobsDone(run, req.lease).then(answer);
}

/**
 * a batch answered straight from memory: its head, then each item's framing and output, one after
 * the other in one slab of the lease's, each output written there by its job's kernels; null unless
 * the format frames every item that way and the SIMD kernels write every output (at any offset).
 * Nothing is then gathered after the run (the pieces were ~0.8 µs an item, a profile of /v1/batch)
 */
function layOutTogether(engine: PipelineResources, req: PipelineRequest, checked: CheckedRequest[]): { answer: Buffer; outputAt: number[] } | null {
  const head = req.answer.batchHead!(checked.length);
  if (head === null) return null;
  const prefixes: Buffer[] = [];
  let total = head.length;
  for (const item of checked) {
    const prefix = req.answer.prefix(item);
    if (prefix === null || !outputAtAnyOffset(item)) return null;
    prefixes.push(prefix);
    total += prefix.length + outputBytes(item);
  }
  const slab = engine.slabs.acquire(total);
  req.lease.add(slab);
  const answer = Buffer.from(slab.memory, slab.offset, total);
  answer.set(head, 0);
  let at = head.length;
  const outputAt = checked.map((item, i) => {
    answer.set(prefixes[i], at);
    const output = slab.offset + at + prefixes[i].length;
    at += prefixes[i].length + outputBytes(item);
    return output;
  });
  return { answer, outputAt };
}

/** a batch answered straight from memory: its alike items as one job each group (allocate-items.ts),
 *  pushed to `jobs`; the indices of the items they run */
function joinAlike(engine: PipelineResources, checked: CheckedRequest[], outputAt: number[], carver: SlabCarver, jobs: Job[]): Set<number> {
  const joined = new Set<number>();
  for (const group of alikeGroups(checked)) {
    const items = group.items.map((i) => checked[i] as RowRequest);
    const job = allocateItemsJob(items, group.inputAt, group.items.map((i) => outputAt[i]), engine.slabs, engine.wasm, engine.pool.workers, carver);
    if (job === null) continue;
    jobs.push(job);
    for (const i of group.items) joined.add(i);
  }
  return joined;
}

const outputBytes = (item: CheckedRequest) => item.input.size * DTYPES[item.outDtype].itemsize;

function encodeAnswer(
  engine: PipelineResources, req: PipelineRequest, checked: CheckedRequest[], jobs: Job[], together: Buffer | null, jobTimings: JobTiming[],
  decode: number, runStarted: number,
): PipelineResult | Promise<PipelineResult> {
  const runEnded = performance.now();
  const runMs = runEnded - runStarted;
  for (const item of checked) countNormalized(engine.metrics, item);
  let queue = 0;
  for (const t of jobTimings) queue = Math.max(queue, t.queueMs);
  const encodeStarted = runEnded; // the metrics above count as encoding: one clock read fewer
  const timings = (): Timings => ({ decode, queue, compute: Math.max(0, runMs - queue), encode: performance.now() - encodeStarted });
  if (together !== null) return { payload: together, timings: timings() };
  const encoded = req.answer.encode(jobs);
  if (Buffer.isBuffer(encoded)) return { payload: encoded, timings: timings() };
  if (!Array.isArray(encoded)) return { payload: layOutAnswer(encoded.pieces, engine.slabs, req.lease, engine.wasm), timings: timings() };
  const text = writeAnswerText(encoded, engine, req);
  return text instanceof Promise ? text.then((payload) => ({ payload, timings: timings() })) : { payload: text, timings: timings() };
}

function allocateJob(
  engine: PipelineResources, req: CheckedRequest, prefix: Buffer | null, answerPhase: number | null, source: SlabSource, outputAt: number | null,
): Job {
  return req.layout === 'rows'
    ? allocateRowJob(req, engine.slabs, engine.pool.workers, engine.wasm, prefix, answerPhase, source, outputAt)
    : allocateChannelJob(req, source, engine.pool.workers, prefix);
}
