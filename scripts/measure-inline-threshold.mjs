// measures where a thread hop starts to pay: median wall time of one RMSNorm task of
// rows×4096... elements run inline on this thread vs on a warm one-worker Piscina pool.
// usage: npm run build && node scripts/measure-inline-threshold.mjs [--js]   (--js: the JS kernels)
import { createWorkerPool } from '../dist/pool/worker-pool.js';
import { createTensorMemory } from '../dist/memory/tensor-memory.js';
import { executeTask } from '../dist/kernels/execute-task.js';
import { loadWasmKernels, preparedBytes } from '../dist/kernels/wasm-kernels.js';

const slabs = createTensorMemory(1 << 30);
const pool = createWorkerPool({ workers: 1, maxQueue: 16 }, slabs.memory, (err) => console.error(err));
const wasm = loadWasmKernels(slabs.memory);
const USE_WASM = !process.argv.includes('--js');

function makeTask(n, rows) {
  const size = n * rows;
  const slab = slabs.acquire(size * 8 + n * 8 + preparedBytes(n) + 64);
  const memory = slab.memory;
  const x = { memory, byteOffset: slab.offset, length: size };
  const y = { memory, byteOffset: slab.offset + size * 4, length: size };
  const scale = { memory, byteOffset: slab.offset + size * 8, length: n };
  new Float32Array(memory, x.byteOffset, size).forEach((_, i, a) => { a[i] = Math.sin(i); });
  new Float64Array(memory, scale.byteOffset, n).fill(1);
  const prepared = USE_WASM ? scale.byteOffset + n * 8 : null;
  if (prepared !== null) wasm.prepareF32(scale.byteOffset, null, n, prepared);
  const cancel = slabs.acquire(4);
  return {
    op: 'rmsnorm', n, rowStart: 0, rowEnd: rows, inputDtype: 'float32', outDtype: 'float32', eps: 1e-6, epsOutside: false,
    x, xSource: null, residual: null, residualSource: null, y, scale, bias: null, mean: null, rstd: null, fault: null,
    prepared, wide: null, slot: 0, cancel: { memory: cancel.memory, byteOffset: cancel.offset, length: 1 },
  };
}

const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const REPS = 200;
console.log('elements  inline_us  pool_us');
for (const elements of [256, 1024, 4096, 16384, 32768, 65536, 131072, 262144]) {
  const n = Math.min(elements, 4096);
  const task = makeTask(n, elements / n);
  const inline = [];
  const pooled = [];
  for (let r = 0; r < REPS; r++) {
    new Int32Array(task.cancel.memory, task.cancel.byteOffset, 1)[0] = 0;
    let t = performance.now();
    executeTask(task, wasm);
    inline.push(performance.now() - t);
    t = performance.now();
    new Int32Array(task.cancel.memory, task.cancel.byteOffset, 1)[0] = 0;
    await pool.run(task, new AbortController().signal);
    pooled.push(performance.now() - t);
  }
  console.log(`${String(elements).padStart(8)}  ${(median(inline) * 1000).toFixed(1).padStart(9)}  ${(median(pooled) * 1000).toFixed(1).padStart(7)}`);
}
await pool.close();
