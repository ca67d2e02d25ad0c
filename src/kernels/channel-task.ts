// one BatchNorm task: its tiles' statistics, or their output (loading x from the body's bytes first
// when this task is the first to read them). The SIMD kernels (wasm/channels.wat) or the JS ones, as
// the task says: the same for every task of a request, whichever thread runs it.
import { batchnormTiles } from './batchnorm.js';
import { tileBounds, partialsOffset, type TileBounds } from './channel-tiles.js';
import { tileStats } from './channel-stats.js';
import { loadRows } from './load-rows.js';
import type { OutputArray, ValueArray } from './types.js';
import type { WasmKernels } from './wasm-kernels.js';
import type { ChannelTask, Region } from '../pool/protocol.js';

const bounds: TileBounds = { o0: 0, o1: 0, c0: 0, c1: 0 };

const f64 = (r: Region) => new Float64Array(r.memory, r.byteOffset, r.length);

/** x as the JS kernels read it: float32 values, float64 for a float64 input */
function values(task: ChannelTask): ValueArray {
  const { memory, byteOffset, length } = task.x;
  return task.inputDtype === 'float64' ? new Float64Array(memory, byteOffset, length) : new Float32Array(memory, byteOffset, length);
}

export function runChannelTask(task: ChannelTask, wasm: WasmKernels | null): void {
  const { geometry: g, tileStart, tileEnd } = task;
  if (task.simd && wasm === null) throw new Error('the SIMD kernels are not loaded on this thread');
  if (task.xSource !== null) {
    const x = values(task); // a slab region: aligned
    for (let b = tileStart; b < tileEnd; b++) {
      const { o0, o1, c0, c1 } = tileBounds(g, b, bounds);
      for (let o = o0; o < o1; o++) {
        // channels c0 … c1 of one outer index: one contiguous run
        loadRows(task.xSource.memory, task.xSource.byteOffset, task.inputDtype, x, 1, (o * g.channels + c0) * g.inner, (o * g.channels + c1) * g.inner, wasm);
      }
    }
  }
  if (task.simd) {
    runSimd(task, wasm!);
    return;
  }
  const x = values(task);
  if (task.kind === 'channelStats') {
    const partials = f64(task.partials);
    for (let b = tileStart; b < tileEnd; b++) tileStats(x, g, b, partials);
    return;
  }
  const y: OutputArray = task.outDtype === 'float64' ? f64(task.y)
    : task.outDtype === 'float32' ? new Float32Array(task.y.memory, task.y.byteOffset, task.y.length)
      : new Uint16Array(task.y.memory, task.y.byteOffset, task.y.length);
  batchnormTiles(x, y, task.outDtype, g, { shift: f64(task.shift), factor: f64(task.factor), bias: f64(task.bias) }, tileStart, tileEnd);
}

/** tile by tile, float32 x (at any byte offset) to the partials or to a float32 y */
function runSimd(task: ChannelTask, wasm: WasmKernels): void {
  const { geometry: g, x, y } = task;
  for (let b = task.tileStart; b < task.tileEnd; b++) {
    const { o0, o1, c0, c1 } = tileBounds(g, b, bounds);
    if (task.kind === 'channelStats') {
      wasm.tileStatsF32(x.byteOffset, task.partials.byteOffset + 8 * partialsOffset(g, b), g.channels, g.inner, o0, o1, c0, c1);
    } else {
      wasm.batchnormF32(
        x.byteOffset, y.byteOffset, task.shift.byteOffset, task.factor.byteOffset, task.bias.byteOffset, task.prepared!,
        g.channels, g.inner, o0, o1, c0, c1,
      );
    }
  }
}
