// measures where a thread hop starts to pay: median wall time of one RMSNorm task of
// rows×4096... elements run inline on this thread vs on a warm one-worker Piscina pool.
// usage: npm run build && node scripts/measure-inline-threshold.mjs
import { createPool } from '../dist/pool/pool.js';
import { createSlabPool } from '../dist/pool/slab-pool.js';
import { executeTask } from '../dist/pool/execute-task.js';

const slabs = createSlabPool(1 << 30);
const pool = createPool({ workers: 1, maxQueue: 16 }, (err) => console.error(err));

function makeTask(n, rows) {
  const size = n * rows;
  const slab = slabs.acquire(size * 8 + n * 8 + 64);
  const memory = slab.memory;
  const x = { memory, byteOffset: slab.offset, length: size };
  const y = { memory, byteOffset: slab.offset + size * 4, length: size };
  const scale = { memory, byteOffset: slab.offset + size * 8, length: n };
  new Float32Array(memory, x.byteOffset, size).forEach((_, i, a) => { a[i] = Math.sin(i); });
  new Float64Array(memory, scale.byteOffset, n).fill(1);
  return {
    op: 'rmsnorm', n, rowStart: 0, rowEnd: rows, inputDtype: 'float32', outDtype: 'float32', eps: 1e-6, epsOutside: false,
    x, xSource: null, residual: null, residualSource: null, y, scale, bias: null, mean: null, rstd: null, fault: null,
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
    let t = performance.now();
    executeTask(task);
    inline.push(performance.now() - t);
    t = performance.now();
    await pool.run(task);
    pooled.push(performance.now() - t);
  }
  console.log(`${String(elements).padStart(8)}  ${(median(inline) * 1000).toFixed(1).padStart(9)}  ${(median(pooled) * 1000).toFixed(1).padStart(7)}`);
}
await pool.close();
