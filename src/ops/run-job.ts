// one job → its rows computed: inline when small, else split across the pool's workers.
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { executeTask } from '../pool/execute-task.js';
import { TaskAborted, type NormPool } from '../pool/pool.js';
import type { NormTask, TaskFault, TaskResult } from '../pool/protocol.js';
import type { Job } from './allocate-job.js';

export interface JobTiming {
  /** ms from submission until the last task started */
  queueMs: number;
  /** ms of the longest task */
  computeMs: number;
}

export interface RunContext {
  pool: NormPool;
  limits: Pick<Config, 'inlineMaxElements' | 'minTaskElements'>;
  metrics: Metrics;
  /** fires at the deadline or when the client goes away */
  signal: AbortSignal;
  fault: TaskFault | null;
}

type Done = Extract<TaskResult, { ok: true }>;

export async function runJob(job: Job, ctx: RunContext): Promise<JobTiming> {
  const { task } = job;
  const rows = task.rowEnd - task.rowStart;
  const elements = rows * task.n;
  const submittedAt = performance.timeOrigin + performance.now();
  if (rows === 0) return { queueMs: 0, computeMs: 0 };
  if (ctx.signal.aborted) {
    // dropped before it reached the queue (the deadline passed while its body arrived): still dropped work
    ctx.metrics.tasks.inc({ outcome: 'aborted' });
    throw new TaskAborted('deadline passed before the work started');
  }
  // faults are injected on workers only: a crash inline would take the server down
  if (elements <= ctx.limits.inlineMaxElements && ctx.fault === null) {
    return timing(submittedAt, [record(ctx.metrics, submittedAt, executeTask(task))]);
  }
  const chunks = Math.min(ctx.pool.workers, rows, Math.max(1, Math.ceil(elements / ctx.limits.minTaskElements)));
  const tasks: NormTask[] = [];
  for (let c = 0; c < chunks; c++) {
    tasks.push({
      ...task,
      fault: ctx.fault,
      rowStart: task.rowStart + Math.floor((rows * c) / chunks),
      rowEnd: task.rowStart + Math.floor((rows * (c + 1)) / chunks),
    });
  }
  return timing(submittedAt, await settleAll(tasks.map((t) => runOnPool(t, ctx, submittedAt))));
}

/** like Promise.all, but waits for every promise: no task may still write to memory we give back */
export async function settleAll<T>(promises: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

async function runOnPool(task: NormTask, ctx: RunContext, submittedAt: number): Promise<Done> {
  try {
    return record(ctx.metrics, submittedAt, await ctx.pool.run(task, ctx.signal));
  } catch (err) {
    const outcome = err instanceof TaskAborted ? 'aborted'
      : (err as { code?: string }).code === 'NORM_ERR_OVERLOADED' ? 'rejected' : 'failed';
    ctx.metrics.tasks.inc({ outcome });
    throw err;
  }
}

function record(metrics: Metrics, submittedAt: number, result: TaskResult): Done {
  if (!result.ok) {
    metrics.tasks.inc({ outcome: 'failed' });
    throw serviceError(result.code, result.message);
  }
  metrics.tasks.inc({ outcome: 'ok' });
  metrics.taskWait.observe(Math.max(0, result.startedAt - submittedAt) / 1000);
  metrics.taskRun.observe((result.finishedAt - result.startedAt) / 1000);
  return result;
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
