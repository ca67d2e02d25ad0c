// the Piscina worker entry: one task in, one result out.
import { executeTask } from './execute-task.js';
import type { NormTask, TaskResult } from './protocol.js';

export default function runTask(task: NormTask): TaskResult {
  return executeTask(task);
}
