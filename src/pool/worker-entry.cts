// the file Piscina loads in each thread. Piscina tries require() first, and Node 20's require()
// of an ES module aborts the whole process when the pool terminates a thread mid-load (seen as
// test processes dying); a CommonJS file is required the ordinary way and imports the real
// worker on the thread's first task.
import type { ParseTask, Task, TaskResult, WarmUp } from './protocol.js';

let worker: typeof import('./worker.js') | undefined;

export = async function runTask(task: Task | ParseTask | WarmUp): Promise<unknown> {
  worker ??= await import('./worker.js');
  // the kernels loaded: a build whose worker cannot load them fails here, before /readyz says 200
  if (task.kind === 'warmUp') return { ok: true, startedAt: 0, finishedAt: 0, skipped: true } satisfies TaskResult;
  if (task.kind === 'parseJson') return worker.parseJsonTask(task);
  return worker.default(task);
};
