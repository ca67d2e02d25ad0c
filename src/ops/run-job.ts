// one job → its rows computed: inline when small, else split across the pool's workers.
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import { executeTask } from '../pool/execute-task.js';
import type { NormPool } from '../pool/pool.js';
import type { NormTask, TaskResult } from '../pool/protocol.js';
import type { Job } from './allocate-job.js';

export interface JobTiming {
  /** ms from submission until the last task started */
  queueMs: number;
  /** ms of the longest task */
  computeMs: number;
}

type Limits = Pick<Config, 'inlineMaxElements' | 'minTaskElements'>;

export async function runJob(job: Job, pool: NormPool, limits: Limits): Promise<JobTiming> {
  const { task } = job;
  const rows = task.rowEnd - task.rowStart;
  const elements = rows * task.n;
  const submittedAt = performance.timeOrigin + performance.now();
  if (rows === 0) return { queueMs: 0, computeMs: 0 };
  if (elements <= limits.inlineMaxElements) {
    return timing(submittedAt, [check(executeTask(task))]);
  }
  const chunks = Math.min(pool.workers, rows, Math.ceil(elements / limits.minTaskElements));
  const tasks: NormTask[] = [];
  for (let c = 0; c < chunks; c++) {
    tasks.push({
      ...task,
      rowStart: task.rowStart + Math.floor((rows * c) / chunks),
      rowEnd: task.rowStart + Math.floor((rows * (c + 1)) / chunks),
    });
  }
  const results = await Promise.all(tasks.map((t) => pool.run(t)));
  return timing(submittedAt, results.map(check));
}

function check(result: TaskResult): Extract<TaskResult, { ok: true }> {
  if (!result.ok) throw serviceError(result.code, result.message);
  return result;
}

function timing(submittedAt: number, results: Extract<TaskResult, { ok: true }>[]): JobTiming {
  let queueMs = 0;
  let computeMs = 0;
  for (const r of results) {
    queueMs = Math.max(queueMs, r.startedAt - submittedAt);
    computeMs = Math.max(computeMs, r.finishedAt - r.startedAt);
  }
  return { queueMs, computeMs };
}
