// the Piscina worker entry: one task in, one result out.
import { executeTask } from './execute-task.js';
import type { NormTask, TaskResult } from './protocol.js';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export default function runTask(task: NormTask): TaskResult {
  if (task.fault?.kind === 'crash') process.exit(1); // ends this thread only: the pool replaces it
  if (task.fault?.kind === 'sleep') Atomics.wait(sleeper, 0, 0, task.fault.ms);
  return executeTask(task);
}
