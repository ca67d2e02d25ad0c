// the worker: one task in, one result out (loaded by worker-entry.cts on a thread's first task).
import { workerData } from 'node:worker_threads';
import { loadWasmKernels } from '../kernels/wasm-kernels.js';
import { executeTask } from '../kernels/execute-task.js';
export { parseJsonTask } from './parse-json.js';
import { GATE_HELD, GATE_OPEN, type Task, type TaskResult } from './protocol.js';

const data = workerData as { memory: WebAssembly.Memory; faultGate: Int32Array | null };
// the shared memory every request slab is carved from (see memory/tensor-memory.ts)
const wasm = loadWasmKernels(data.memory);

/** a started task (its flag claimed) that waits for the test to open the gate */
function holdAtGate(): void {
  const gate = data.faultGate!;
  Atomics.add(gate, GATE_HELD, 1);
  Atomics.notify(gate, GATE_HELD);
  while (Atomics.load(gate, GATE_OPEN) === 0) Atomics.wait(gate, GATE_OPEN, 0);
}

export default function runTask(task: Task): TaskResult {
  if (task.fault?.kind === 'crash') process.exit(1); // ends this thread only: the pool replaces it
  return executeTask(task, wasm, task.fault?.kind === 'hold' ? holdAtGate : null);
}
