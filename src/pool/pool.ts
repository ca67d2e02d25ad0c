// the Piscina pool that runs normalization tasks on worker threads.
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import type { NormTask, TaskResult } from './protocol.js';

// src/pool/*.ts (under vitest) and dist/pool/*.js both sit two levels below the package root;
// workers always run the compiled file
const WORKER_FILE = fileURLToPath(new URL('../../dist/pool/worker.js', import.meta.url));

export interface NormPool {
  readonly workers: number;
  run(task: NormTask): Promise<TaskResult>;
  close(): Promise<void>;
  readonly piscina: Piscina;
}

export function createPool(config: Pick<Config, 'workers' | 'maxQueue'>): NormPool {
  const piscina = new Piscina({
    filename: WORKER_FILE,
    minThreads: config.workers,
    maxThreads: config.workers,
    maxQueue: config.maxQueue,
    idleTimeout: Number.MAX_SAFE_INTEGER, // keep warm threads: start-up costs more than idle memory
  });
  return {
    workers: config.workers,
    piscina,
    async run(task) {
      try {
        return (await piscina.run(task)) as TaskResult;
      } catch (err) {
        if (err instanceof Error && err.message === 'Task queue is at limit') {
          throw serviceError('NORM_ERR_OVERLOADED', 'the work queue is full; retry later');
        }
        throw serviceError('NORM_ERR_WORKER_FAILED', `a worker failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    close: () => piscina.close(),
  };
}
