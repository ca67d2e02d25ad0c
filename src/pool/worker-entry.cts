// the file Piscina loads in each thread. Piscina tries require() first, and Node 20's require()
// of an ES module aborts the whole process when the pool terminates a thread mid-load (seen as
// test processes dying); a CommonJS file is required the ordinary way and imports the real
// worker on the thread's first task.
import type { NormTask, TaskResult } from './protocol.js';

let run: ((task: NormTask) => TaskResult) | undefined;

export = async function runTask(task: NormTask): Promise<TaskResult> {
  run ??= (await import('./worker.js')).default;
  return run(task);
};
