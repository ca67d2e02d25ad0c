// one BatchNorm task: its blocks' statistics, or their output (loading x from the body's bytes first
// when this task is the first to read them).
import { batchnormBlocks } from './batchnorm.js';
import { blockBounds, type BlockBounds } from './channel-blocks.js';
import { blockStats } from './channel-stats.js';
import { loadRows } from './load-rows.js';
import type { OutputArray, ValueArray } from './types.js';
import type { WasmKernels } from './wasm-kernels.js';
import type { ChannelTask } from '../pool/protocol.js';

const bounds: BlockBounds = { o0: 0, o1: 0, c0: 0, c1: 0 };

export function runChannelTask(task: ChannelTask, wasm: WasmKernels | null): void {
  const { geometry: g, blockStart, blockEnd } = task;
  const x: ValueArray = task.inputDtype === 'float64'
    ? new Float64Array(task.x.memory, task.x.byteOffset, task.x.length)
    : new Float32Array(task.x.memory, task.x.byteOffset, task.x.length);
  if (task.xSource !== null) {
    for (let b = blockStart; b < blockEnd; b++) {
      const { o0, o1, c0, c1 } = blockBounds(g, b, bounds);
      for (let o = o0; o < o1; o++) {
        // channels c0 … c1 of one outer index: one contiguous run
        loadRows(task.xSource.memory, task.xSource.byteOffset, task.inputDtype, x, 1, (o * g.channels + c0) * g.inner, (o * g.channels + c1) * g.inner, wasm);
      }
    }
  }
  const f64 = (r: { memory: SharedArrayBuffer; byteOffset: number; length: number }) => new Float64Array(r.memory, r.byteOffset, r.length);
  if (task.kind === 'channelStats') {
    const partials = f64(task.partials);
    for (let b = blockStart; b < blockEnd; b++) blockStats(x, g, b, partials);
    return;
  }
  const y: OutputArray = task.outDtype === 'float64' ? f64(task.y)
    : task.outDtype === 'float32' ? new Float32Array(task.y.memory, task.y.byteOffset, task.y.length)
      : new Uint16Array(task.y.memory, task.y.byteOffset, task.y.length);
  batchnormBlocks(x, y, task.outDtype, g, { shift: f64(task.shift), factor: f64(task.factor), bias: f64(task.bias) }, blockStart, blockEnd);
}
