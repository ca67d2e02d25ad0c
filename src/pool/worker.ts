// the worker: one task in, one result out (loaded by worker-entry.cts on a thread's first task).
import { workerData } from 'node:worker_threads';
import { loadWasmKernels } from '../kernels/wasm-kernels.js';
import { executeTask } from '../kernels/execute-task.js';
import type { NormTask, TaskResult } from './protocol.js';

// the shared memory every request slab is carved from (see memory/slab-pool.ts)
const wasm = loadWasmKernels((workerData as { memory: WebAssembly.Memory }).memory);
const sleeper = new Int32Array(new SharedArrayBuffer(4));

export default function runTask(task: NormTask): TaskResult {
  if (task.fault?.kind === 'crash') process.exit(1); // ends this thread only: the pool replaces it
  if (task.fault?.kind === 'sleep') Atomics.wait(sleeper, 0, 0, task.fault.ms);
  return executeTask(task, wasm);
}
