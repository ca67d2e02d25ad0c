// the Piscina pool that runs normalization tasks on worker threads.
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import type { ParseResult, ParseTask, Task, TaskResult, WarmUp } from './protocol.js';

// src/pool/*.ts (under vitest) and dist/pool/*.js both sit two levels below the package root;
// workers always run the compiled file
const WORKER_FILE = fileURLToPath(new URL('../../dist/pool/worker-entry.cjs', import.meta.url));

/** a job dropped at its deadline or when its client left */
export class TaskAborted extends Error {}

export interface WorkerPool {
  readonly workers: number;
  readonly piscina: Piscina;
  readonly closing: boolean;
  run(task: Task, signal: AbortSignal): Promise<TaskResult>;
  /** a long JSON body parsed on a worker (codec/json-body.ts) */
  parse(task: ParseTask): Promise<ParseResult>;
  /** has the workers load their kernels; false (the error logged) when they cannot: the pool is not up */
  warmUp(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * `memory`: the shared memory the slabs come from; each worker runs the wasm kernels over it.
 * `faultGate`: the tests' gate for held tasks (protocol.ts), null in service
 * `workerFile`: what each thread loads; only the tests of a broken build change it
 */
export function createWorkerPool(
  config: Pick<Config, 'workers' | 'maxQueue'>, memory: WebAssembly.Memory, log: (err: Error) => void, faultGate: Int32Array | null = null,
  workerFile = WORKER_FILE,
): WorkerPool {
  const piscina = new Piscina({
    filename: workerFile,
    minThreads: config.workers,
    maxThreads: config.workers,
    maxQueue: config.maxQueue,
    idleTimeout: Number.MAX_SAFE_INTEGER, // keep warm threads: start-up costs more than idle memory
    workerData: { memory, faultGate },
  });
  // a worker that dies with no task is reported here; unhandled, it would take the process down
  piscina.on('error', log);
  let closing = false;
  return {
    workers: config.workers,
    piscina,
    get closing() { return closing; },
    async run(task, signal) {
      // piscina's maxQueue does not count tasks that carry a signal
      if (piscina.queueSize >= config.maxQueue) {
        throw serviceError('queueFull');
      }
      try {
        // the caller aborts only tasks that have not started (Task.cancel), so piscina removes
        // them from its queue, or at worst stops a worker that had not touched memory yet
        return (await piscina.run(task, { signal })) as TaskResult;
      } catch (err) {
        if (signal.aborted) return { ok: true, startedAt: 0, finishedAt: 0, skipped: true };
        if (err instanceof Error && err.message === 'Task queue is at limit') {
          throw serviceError('queueFull');
        }
        throw serviceError('workerFailed', err instanceof Error ? err.message : String(err));
      }
    },
    async parse(task) {
      if (piscina.queueSize >= config.maxQueue) throw serviceError('queueFull');
      try {
        return (await piscina.run(task)) as ParseResult;
      } catch (err) {
        if (err instanceof Error && err.message === 'Task queue is at limit') throw serviceError('queueFull');
        throw serviceError('workerFailed', err instanceof Error ? err.message : String(err));
      }
    },
    async warmUp() {
      // one task per worker; piscina hands each to an idle thread, so every thread usually gets one
      const warmUp: WarmUp = { kind: 'warmUp' };
      try {
        await Promise.all(Array.from({ length: config.workers }, () => piscina.run(warmUp)));
        return true;
      } catch (err) {
        log(new Error(`the workers cannot load their kernels: ${err instanceof Error ? err.message : String(err)}`));
        return false;
      }
    },
    async close() {
      closing = true;
      await piscina.close();
    },
  };
}
