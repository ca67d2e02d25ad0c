// the Piscina pool that runs normalization tasks on worker threads, behind a queue of our own.
// Piscina keeps tasks that carry an AbortSignal in a queue where an undistributed task goes back to
// the tail, so under load it overtakes and starves older ones (measured: with one busy worker, 173 of
// 400 tasks overtaken, one by 44, and 504s on a busy host); here tasks wait in arrival order and
// Piscina gets at most one per worker. A waiting task is dropped from this queue when its signal
// fires; once handed over it runs, and its cancel flag (protocol.ts) tells it whether to do anything.
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
  /** tasks waiting for a worker, in arrival order */
  readonly queued: number;
  run(task: Task, signal: AbortSignal): Promise<TaskResult>;
  /** a long JSON body parsed on a worker (codec/json-body.ts) */
  parse(task: ParseTask): Promise<ParseResult>;
  /** has the workers load their kernels; false (the error logged) when they cannot: the pool is not up */
  warmUp(): Promise<boolean>;
  close(): Promise<void>;
}

interface Waiting {
  task: Task | ParseTask;
  /** normalization work, counted against MAX_QUEUE; else bulk text work (a JSON body, an answer's text) */
  bounded: boolean;
  resolve(result: unknown): void;
  reject(err: unknown): void;
  /** takes the task out of the queue when its signal fires before a worker is free */
  drop: (() => void) | null;
  signal: AbortSignal | null;
}

const SKIPPED: TaskResult = { ok: true, startedAt: 0, finishedAt: 0, skipped: true };

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
    idleTimeout: Number.MAX_SAFE_INTEGER, // keep warm threads: start-up costs more than idle memory
    workerData: { memory, faultGate },
  });
  // a worker that dies with no task is reported here; unhandled, it would take the process down
  piscina.on('error', log);
  let closing = false;
  const waiting: Waiting[] = [];
  let waitingWork = 0; // the bounded ones
  let handedOver = 0;
  let bulkHandedOver = 0;
  // bulk text work runs on all workers but one: formatting 80 MB of JSON on every core would leave the
  // main thread, which moves every request's bytes, waiting for a core (measured: the small requests'
  // p99 beside large JSON answers, load/mixed.ts). Normalization work takes any free worker.
  const bulkLimit = Math.max(1, config.workers - 1);

  function leave(entry: Waiting): void {
    waiting.splice(waiting.indexOf(entry), 1);
    if (entry.bounded) waitingWork--;
  }

  /** the oldest waiting task that may start now: the oldest of all unless bulk work is at its limit */
  function nextToRun(): Waiting | undefined {
    return bulkHandedOver < bulkLimit ? waiting[0] : waiting.find((entry) => entry.bounded);
  }

  /** hands waiting tasks to Piscina, oldest first, while a worker is free */
  function dispatch(): void {
    for (let next = nextToRun(); handedOver < config.workers && next !== undefined; next = nextToRun()) {
      const entry = next;
      leave(entry);
      if (entry.drop !== null) entry.signal!.removeEventListener('abort', entry.drop);
      handedOver++;
      if (!entry.bounded) bulkHandedOver++;
      piscina.run(entry.task).then(entry.resolve, (err: unknown) => entry.reject(serviceError('workerFailed', err instanceof Error ? err.message : String(err))))
        .finally(() => {
          handedOver--;
          if (!entry.bounded) bulkHandedOver--;
          dispatch();
        });
    }
  }

  function enqueue<T>(task: Task | ParseTask, signal: AbortSignal | null): Promise<T> {
    if (closing) return Promise.reject(serviceError('workerFailed', 'the pool is closing'));
    // MAX_QUEUE bounds the normalization work waiting; a JSON body to parse or an answer to write
    // belongs to a request already in (bounded by the work slots and the memory budget), and a
    // 503 after its work was done would waste that work
    const bounded = task.kind !== 'text' && task.kind !== 'parseJson';
    if (bounded && waitingWork >= config.maxQueue) return Promise.reject(serviceError('queueFull'));
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = { task, bounded, resolve: resolve as (r: unknown) => void, reject, drop: null, signal };
      if (signal !== null) {
        entry.drop = () => {
          leave(entry);
          resolve(SKIPPED as T);
        };
        signal.addEventListener('abort', entry.drop, { once: true });
      }
      waiting.push(entry);
      if (bounded) waitingWork++;
      dispatch();
    });
  }

  return {
    workers: config.workers,
    piscina,
    get closing() { return closing; },
    get queued() { return waiting.length; },
    run(task, signal) {
      if (signal.aborted) return Promise.resolve(SKIPPED);
      return enqueue<TaskResult>(task, signal);
    },
    parse(task) {
      return enqueue<ParseResult>(task, null);
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
      for (const entry of waiting.splice(0)) entry.reject(serviceError('workerFailed', 'the pool is closing'));
      await piscina.close();
    },
  };
}
