// jobs → their rows computed: inline when small, else split across the pool's workers.
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { executeTask, TIME_ORIGIN } from '../kernels/execute-task.js';
import { TaskAborted, type WorkerPool } from '../pool/worker-pool.js';
import { DROPPED, leaveQueue, type Task, type TaskFault, type TaskResult } from '../pool/protocol.js';
import type { WasmKernels } from '../kernels/wasm-kernels.js';
import type { Job, Phase } from './job.js';
import type { Cancellation } from '../engine/cancellation.js';
import type { Lease } from '../memory/lease.js';
import { DTYPES } from '../codec/dtype.js';
import { rowCount, type CheckedRequest } from './checked-request.js';

export interface JobTiming {
  /** ms from submission until the last task started */
  queueMs: number;
  /** ms of the longest task */
  computeMs: number;
}

export interface RunContext {
  pool: WorkerPool;
  limits: Pick<Config, 'inlineMaxElements' | 'minTaskElements'>;
  metrics: Metrics;
  /** this thread's SIMD kernels, for work done inline */
  wasm: WasmKernels;
  /** fires at the deadline or when the client goes away */
  cancellation: Cancellation;
  fault: TaskFault | null;
}

type Done = Extract<TaskResult, { ok: true }>;

/** what runJobs needs of a job: a request's normalization, or the text of its JSON answer */
export type Runnable = Pick<Job, 'phases' | 'afterPhase'>;

/**
 * what runJobs started: either every job was computed inline, here and now (`inline`: their timings;
 * nothing to wait for, no task touches their memory), or work is on the pool: `result` settles with
 * the timings, or rejects at the first failure or as soon as ctx.cancellation fires (then queued tasks
 * are told to do nothing), and `settled` resolves once no task can touch the jobs' memory any more:
 * only then may their slabs be reused.
 */
export type JobsRun =
  | { inline: JobTiming[] }
  | { inline: null; result: Promise<JobTiming[]>; settled: Promise<void> };

export function runJobs(jobs: Runnable[], ctx: RunContext): JobsRun {
  const queued: Queued = [];
  const started: (JobTiming | Promise<JobTiming>)[] = [];
  let waiting = false;
  for (const job of jobs) {
    let one: JobTiming | Promise<JobTiming>;
    try {
      one = startJob(job, ctx, queued);
    } catch (err) {
      one = Promise.reject(err);
    }
    waiting ||= one instanceof Promise;
    started.push(one);
  }
  // every job was computed inline, here and now: no promise per job
  if (!waiting && !ctx.cancellation.cancelled) return { inline: started as JobTiming[] };
  const work = allSettledOrFirstError(started.map((s) => Promise.resolve(s)));
  const settled = work.then(() => undefined, () => undefined);
  const result = new Promise<JobTiming[]>((resolve, reject) => {
    ctx.cancellation.onCancel(() => {
      // drop what has not started; what has, finishes (`settled` waits for it)
      for (const { task, controller } of queued) {
        if (leaveQueue(task, DROPPED)) controller.abort();
      }
      reject(new TaskAborted('the request was dropped'));
    });
    work.then(resolve, reject).finally(() => ctx.cancellation.onCancel(null));
  });
  return { result, settled, inline: null };
}

/** the jobs' timings; a 504 when they were dropped. From the call on, whatever becomes of the request
 *  (its client gone, a 504 or 500 answered first), the lease's slabs stay out of reuse until no task
 *  can touch them */
export async function jobsDone(run: JobsRun, lease: Lease): Promise<JobTiming[]> {
  if (run.inline !== null) return run.inline;
  lease.holdUntil(run.settled);
  try {
    return await run.result;
  } catch (err) {
    if (!(err instanceof TaskAborted)) throw err;
    throw serviceError('deadline');
  }
}

type Queued = { task: Task; controller: AbortController }[];

/** the job's timing when all its phases ran inline, else a promise of it */
function startJob(job: Runnable, ctx: RunContext, queued: Queued): JobTiming | Promise<JobTiming> {
  const total: JobTiming = { queueMs: 0, computeMs: 0 };
  for (let i = 0; i < job.phases.length; i++) {
    const started = startPhase(job.phases[i], ctx, queued);
    if (started instanceof Promise) return finishAsync(job, i, started, total, ctx, queued);
    addTiming(total, started);
    job.afterPhase?.(i);
  }
  return total;
}

/** phase `from` is under way on the pool: the rest follow it, one after the other */
async function finishAsync(job: Runnable, from: number, started: Promise<JobTiming>, total: JobTiming, ctx: RunContext, queued: Queued): Promise<JobTiming> {
  addTiming(total, await started);
  job.afterPhase?.(from);
  for (let i = from + 1; i < job.phases.length; i++) {
    addTiming(total, await startPhase(job.phases[i], ctx, queued));
    job.afterPhase?.(i);
  }
  return total;
}

function addTiming(total: JobTiming, t: JobTiming): void {
  total.queueMs += t.queueMs;
  total.computeMs += t.computeMs;
}

/** a task for units [start, end) of its template: rows, items, text blocks or BatchNorm tiles */
function slice(task: Task, start: number, end: number): Task {
  if (task.kind === 'rows') return { ...task, rowStart: start, rowEnd: end };
  if (task.kind === 'items') return { ...task, itemStart: start, itemEnd: end };
  if (task.kind === 'text') return { ...task, blockStart: start, blockEnd: end };
  return { ...task, tileStart: start, tileEnd: end };
}

/** a phase inline when small, else split across the pool; each task has its own cancel flag */
function startPhase(phase: Phase, ctx: RunContext, queued: Queued): JobTiming | Promise<JobTiming> {
  const { units, task } = phase;
  const elements = units * phase.elementsPerUnit;
  const now = performance.now();
  const submittedAt = TIME_ORIGIN + now;
  if (units === 0) return { queueMs: 0, computeMs: 0 };
  if (ctx.cancellation.cancelledAt(now)) {
    // dropped before it started (cancelled while its body arrived): still dropped work
    ctx.metrics.tasks.cell('aborted').value++;
    return { queueMs: 0, computeMs: 0 };
  }
  // faults are injected on workers only: a crash inline would take the server down
  if ((phase.inlineByUnit ? phase.elementsPerUnit : elements) * phase.cost <= ctx.limits.inlineMaxElements && ctx.fault === null) {
    const done = record(ctx.metrics, submittedAt, executeTask(task, ctx.wasm, null, submittedAt));
    return { queueMs: 0, computeMs: Math.max(0, done.finishedAt - done.startedAt) };
  }
  const chunks = Math.min(ctx.pool.workers, units, Math.max(1, Math.ceil(elements / ctx.limits.minTaskElements)));
  const tasks: Promise<Done>[] = [];
  for (let c = 0; c < chunks; c++) {
    const chunk: Task = {
      ...slice(task, Math.floor((units * c) / chunks), Math.floor((units * (c + 1)) / chunks)),
      slot: task.slot + c, // the phase's template holds its first slot
      fault: ctx.fault,
    };
    const controller = new AbortController();
    queued.push({ task: chunk, controller });
    tasks.push(runOnPool(chunk, controller.signal, ctx, submittedAt));
  }
  return allSettledOrFirstError(tasks).then((results) => timing(submittedAt, results));
}

/** like Promise.all, but waits for every promise: no task may still write to memory we give back */
async function allSettledOrFirstError<T>(promises: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

async function runOnPool(task: Task, signal: AbortSignal, ctx: RunContext, submittedAt: number): Promise<Done> {
  try {
    return record(ctx.metrics, submittedAt, await ctx.pool.run(task, signal));
  } catch (err) {
    ctx.metrics.tasks.cell((err as { code?: string }).code === 'NORM_ERR_OVERLOADED' ? 'rejected' : 'failed').value++;
    throw err;
  }
}

function record(metrics: Metrics, submittedAt: number, result: TaskResult): Done {
  if (!result.ok) {
    metrics.tasks.cell('failed').value++;
    throw serviceError('taskFailed', result.message);
  }
  if (result.skipped) {
    metrics.tasks.cell('aborted').value++;
    return result;
  }
  countTaskDone(metrics, Math.max(0, result.startedAt - submittedAt), result.finishedAt - result.startedAt);
  return result;
}

/** a task done: its wait for a worker and its run, in ms (the lone path's too: jobs/lone-inline.ts) */
export function countTaskDone(metrics: Metrics, waitMs: number, runMs: number): void {
  metrics.tasks.cell('ok').value++;
  metrics.taskWait.cell().observe(waitMs / 1000);
  metrics.taskRun.cell().observe(runMs / 1000);
}

/** an item normalized: its rows, elements and bytes, by op and input dtype */
export function countNormalized(metrics: Metrics, item: CheckedRequest): void {
  const { op, input } = item;
  metrics.rows.cell(op, input.dtype).value += rowCount(item);
  metrics.elements.cell(op, input.dtype).value += input.size;
  metrics.bytes.cell(op, input.dtype).value += input.size * DTYPES[input.dtype].itemsize;
}

function timing(submittedAt: number, results: Done[]): JobTiming {
  let queueMs = 0;
  let computeMs = 0;
  for (const r of results) {
    queueMs = Math.max(queueMs, r.startedAt - submittedAt);
    computeMs = Math.max(computeMs, r.finishedAt - r.startedAt);
  }
  return { queueMs, computeMs };
}
