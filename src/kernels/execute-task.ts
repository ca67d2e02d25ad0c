// runs one task: its rows, tiles or text; on a worker, or inline on the main thread when small.
import { narrowToFloat16 } from '../codec/half.js';
import { writeNumberText } from '../codec/number-text.js';
import { addResidualRows } from './add-residual.js';
import { runChannelTask } from './channel-task.js';
import { loadRows } from './load-rows.js';
import { rowKernel, type RowParams } from './row-kernels.js';
import type { OutputArray, RowKernelConfig, ValueArray } from './types.js';
import type { WasmKernels } from './wasm-kernels.js';
import { leaveQueue, STARTED, type ItemsTask, type Region, type RowTask, type Task, type TaskResult } from '../pool/protocol.js';

/** this thread's clock origin: a getter per read costs as much as the clock itself (ab:path) */
export const TIME_ORIGIN = performance.timeOrigin;

/** ms since the epoch on this thread's clock, comparable across threads (each has its own origin) */
const epochNow = () => TIME_ORIGIN + performance.now();

type ArrayType = Float32ArrayConstructor | Float64ArrayConstructor | Uint16ArrayConstructor;

function view<T extends ArrayType>(type: T, region: Region): InstanceType<T> {
  return new (type as Float32ArrayConstructor)(region.memory, region.byteOffset, region.length) as InstanceType<T>;
}

/**
 * `wasm`: the SIMD kernels over the shared memory every region lives in, when this thread has them;
 * `onStarted`: called once the task has claimed its flag (tests block there); `now`: the clock
 * (TIME_ORIGIN + performance.now()) when the caller has just read it (a task run inline)
 */
export function executeTask(task: Task, wasm: WasmKernels | null, onStarted: (() => void) | null = null, now: number | null = null): TaskResult {
  const startedAt = now ?? epochNow();
  if (!leaveQueue(task, STARTED)) {
    return { ok: true, startedAt, finishedAt: startedAt, skipped: true };
  }
  onStarted?.();
  try {
    if (task.kind === 'rows') runRowTask(task, wasm);
    else if (task.kind === 'items') runItemsTask(task, wasm);
    else if (task.kind === 'text') writeNumberText(task);
    else runChannelTask(task, wasm);
    return { ok: true, startedAt, finishedAt: epochNow(), skipped: false };
  } catch (err) {
    return { ok: false, code: 'NORM_ERR_WORKER_FAILED', message: err instanceof Error ? err.message : String(err) };
  }
}

function runRowTask(task: RowTask, wasm: WasmKernels | null): void {
  const { n, rowStart, rowEnd, inputDtype } = task;
  const kernel = rowKernel(task.params);
  if (task.prepared !== null && wasm !== null && task.xSource === null && task.residual === null) {
    // input read where it lies, at any alignment
    runSimd(kernel, wasm, task, task.x.byteOffset);
    return;
  }
  const valueType = inputDtype === 'float64' ? Float64Array : Float32Array;
  const outType = task.outDtype === 'float64' ? Float64Array : task.outDtype === 'float32' ? Float32Array : Uint16Array;
  let x: ValueArray = view(valueType, task.x);
  if (task.xSource !== null) loadRows(task.xSource.memory, task.xSource.byteOffset, inputDtype, x, n, rowStart, rowEnd, wasm);
  if (task.residual !== null) {
    const h: ValueArray = view(valueType, task.residual);
    if (task.residualSource !== null) loadRows(task.residualSource.memory, task.residualSource.byteOffset, inputDtype, h, n, rowStart, rowEnd, wasm);
    addResidualRows(x, h, inputDtype, n, rowStart, rowEnd);
    x = h;
  }
  if (task.prepared !== null && wasm !== null) {
    runSimd(kernel, wasm, task, x.byteOffset);
    return;
  }
  const buffers = {
    x,
    y: view(outType, task.y) as OutputArray,
    outDtype: task.outDtype,
    mean: task.mean === null ? null : view(Float32Array, task.mean),
    rstd: task.rstd === null ? null : view(Float32Array, task.rstd),
  };
  const norm = {
    n,
    eps: task.eps,
    epsOutside: task.epsOutside,
    scale: view(Float64Array, task.scale),
    bias: task.bias === null ? null : view(Float64Array, task.bias),
  };
  kernel.rows(buffers, norm, rowStart, rowEnd, task.params);
}

/** each item's rows where they lie, one kernel call an item */
function runItemsTask(task: ItemsTask, wasm: WasmKernels | null): void {
  if (wasm === null) throw new Error('a batch\'s alike items run on the SIMD kernels only');
  const { rows, at } = task;
  const simd = rowKernel(rows.params).simd!;
  for (let i = task.itemStart; i < task.itemEnd; i++) simd(wasm, rows, at[2 * i], at[2 * i + 1]);
}

/** the SIMD kernel on rows [rowStart, rowEnd) (allocate set `prepared` only where it applies); a
 *  float16/bfloat16 output is narrowed from its float32 results */
function runSimd(kernel: RowKernelConfig<RowParams>, wasm: WasmKernels, task: RowTask, x: number): void {
  const { n, rowStart, rowEnd } = task;
  kernel.simd!(wasm, task, x, task.wide?.byteOffset ?? task.y.byteOffset);
  if (task.wide !== null) {
    const start = rowStart * n;
    const count = (rowEnd - rowStart) * n;
    if (task.outDtype === 'bfloat16') {
      wasm.narrowBf16(task.wide.byteOffset + 4 * start, task.y.byteOffset + 2 * start, count);
    } else {
      narrowToFloat16(view(Float32Array, task.wide).subarray(start, start + count), view(Uint16Array, task.y).subarray(start, start + count));
    }
  }
}
