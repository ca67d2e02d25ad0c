// runs one task's rows: on a worker, or inline on the main thread for small tensors.
import { addResidualRows } from '../kernels/add-residual.js';
import { layernormRows } from '../kernels/layernorm.js';
import { rmsnormRows } from '../kernels/rmsnorm.js';
import type { OutputArray, ValueArray } from '../kernels/types.js';
import type { NormTask, Region, TaskResult } from './protocol.js';

type ArrayType = Float32ArrayConstructor | Float64ArrayConstructor | Uint16ArrayConstructor;

function view<T extends ArrayType>(type: T, memory: SharedArrayBuffer, region: Region): InstanceType<T> {
  return new (type as Float32ArrayConstructor)(memory, region.byteOffset, region.length) as InstanceType<T>;
}

export function executeTask(task: NormTask): TaskResult {
  const startedAt = performance.timeOrigin + performance.now();
  try {
    const { memory } = task;
    const valueType = task.inputDtype === 'float64' ? Float64Array : Float32Array;
    const outType = task.outDtype === 'float64' ? Float64Array : task.outDtype === 'float32' ? Float32Array : Uint16Array;
    let x: ValueArray = view(valueType, memory, task.x);
    if (task.residual !== null) {
      const h: ValueArray = view(valueType, memory, task.residual);
      addResidualRows(x, h, task.inputDtype, task.n, task.rowStart, task.rowEnd);
      x = h;
    }
    const buffers = {
      x,
      y: view(outType, memory, task.y) as OutputArray,
      outDtype: task.outDtype,
      mean: task.mean === null ? null : view(Float32Array, memory, task.mean),
      rstd: task.rstd === null ? null : view(Float32Array, memory, task.rstd),
    };
    const params = {
      n: task.n,
      eps: task.eps,
      epsOutside: task.epsOutside,
      scale: view(Float64Array, memory, task.scale),
      bias: task.bias === null ? null : view(Float64Array, memory, task.bias),
    };
    if (task.op === 'rmsnorm') rmsnormRows(buffers, params, task.rowStart, task.rowEnd);
    else layernormRows(buffers, params, task.rowStart, task.rowEnd);
    return { ok: true, startedAt, finishedAt: performance.timeOrigin + performance.now() };
  } catch (err) {
    return { ok: false, code: 'NORM_ERR_WORKER_FAILED', message: err instanceof Error ? err.message : String(err) };
  }
}
