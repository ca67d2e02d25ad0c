// npm run bench: the compiled kernels on one thread, as GB/s and as a share of a memory copy
// of the same bytes measured in the same run; and the real pool, 1 worker against 2. The
// per-channel ops (BatchNorm, GroupNorm) are measured the same way in bench-channels.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { widenBfloat16 } from '../dist/codec/half.js';
import { layernormRows } from '../dist/kernels/layernorm.js';
import { rmsnormRows } from '../dist/kernels/rmsnorm.js';
import type { NormBuffers, NormParams } from '../dist/kernels/types.js';
import { loadWasmKernels, preparedBytes } from '../dist/kernels/wasm-kernels.js';
import { allocateRowJob } from '../dist/jobs/allocate.js';
import type { RowRequest } from '../dist/jobs/checked-request.js';
import { OPERATIONS } from '../dist/ops/registry.js';
import { benchChannels, printChannels } from './bench-channels.js';
import { closeSides, compareSides, poolSides } from './bench-pool.js';
import { createTimer } from './bench-timing.js';
import { commandLine, machine } from './machine.js';
import { bfloat16Bits, bfloat16Value, compareValues, randomRows, referenceRows, type Op } from './reference.js';
import { writeReport } from './report.js';
import type { BenchResults, KernelFigures, PoolFigures } from './results.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KERNELS: Record<Op, (b: NormBuffers, p: NormParams, start: number, end: number) => void> = { rmsnorm: rmsnormRows, layernorm: layernormRows };
const F32_SHAPES: [number, number][] = [[1, 4096], [64, 4096], [4096, 768], [8192, 4096]];
const BF16_SHAPE: [number, number] = [4096, 768];
const POOL_SHAPE: [number, number] = [1024, 4096]; // the load suite's large request

const { values: args } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    samples: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write(`npm run bench -- [--short] [--samples <n>] [--out <dir>]

  --short        CI mode: rows cut to at most 64 (per-channel ops: the batch to 2), two samples;
                 proves the bench runs, times nothing
  --samples <n>  timed samples per figure, median reported (default 7; pool 11)
  --out <dir>    where bench.json and RESULTS.md go (default load/; with --short, dist-load/short/)
`);
  process.exit(0);
}
const short = args.short!;
const samples = args.samples === undefined ? (short ? 2 : 7) : Math.max(1, Number(args.samples));
const minSampleMs = short ? 1 : 100; // each sample repeats a call until this long, so small shapes time well
const out = resolve(args.out ?? (short ? join(ROOT, 'dist-load', 'short') : join(ROOT, 'load')));
const cut = (s: [number, number]): [number, number] => (short ? [Math.min(s[0], 64), s[1]] : s);

const timer = createTimer(samples, minSampleMs);

/** rows first, middle and last of y against the float64 reference */
function checkRows(op: Op, x: Float32Array, y: ArrayLike<number>, rows: number, n: number, bf16: boolean): string | null {
  for (const r of new Set([0, rows >> 1, rows - 1])) {
    const ref = referenceRows(op, x.subarray(r * n, (r + 1) * n), n);
    const got = Array.from({ length: n }, (_, i) => (bf16 ? bfloat16Value(y[r * n + i]) : y[r * n + i]));
    const problem = compareValues(got, ref, bf16);
    if (problem !== null) return `row ${r}: ${problem}`;
  }
  return null;
}

function kernelFigures(
  op: Op, impl: KernelFigures['impl'], s: [number, number], dtype: string, bytes: number, copyBytes: number,
  ms: number, copyMs: number, check: string | null,
): KernelFigures {
  const gbPerS = bytes / ms / 1e6;
  const memcpyGbPerS = (2 * copyBytes) / copyMs / 1e6; // a copy reads and writes every byte
  return {
    kernel: op, impl, shape: s, inDtype: dtype, outDtype: dtype, bytes, medianMs: ms, gbPerS, memcpyGbPerS,
    fractionOfMemcpy: gbPerS / memcpyGbPerS, checkFailure: check,
  };
}

const PAGE = 64 * 1024;
const at64 = (bytes: number) => Math.ceil(bytes / 64) * 64;

/** one shared WebAssembly.Memory holding regions of these byte sizes, each 64-byte aligned */
function carve(sizes: number[]): { memory: WebAssembly.Memory; buffer: SharedArrayBuffer; at: number[] } {
  const at: number[] = [];
  let end = 64; // offset 0 means "absent" to the wasm kernels
  for (const size of sizes) {
    at.push(end);
    end = at64(end + size);
  }
  const pages = Math.ceil(end / PAGE);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  return { memory, buffer: memory.buffer as unknown as SharedArrayBuffer, at };
}

/** x, y and scale in one shared WebAssembly.Memory (the JS kernels read the same bytes through views) */
function benchFloat32(s: [number, number]): KernelFigures[] {
  const [rows, n] = s;
  const { memory, buffer, at: [xAt, yAt, scaleAt, preparedAt] } = carve([4 * rows * n, 4 * rows * n, 8 * n, preparedBytes(n)]);
  const x = new Float32Array(buffer, xAt, rows * n);
  x.set(randomRows(rows, n, 1));
  const y = new Float32Array(buffer, yAt, rows * n);
  const scale = new Float64Array(buffer, scaleAt, n).fill(1);
  const copy = () => y.set(x);
  const wasm = loadWasmKernels(memory);
  const figures: KernelFigures[] = [];
  for (const op of ['rmsnorm', 'layernorm'] as const) {
    const eps = op === 'rmsnorm' ? 1e-6 : 1e-5;
    const runs: [KernelFigures['impl'], () => void][] = [];
    const buffers: NormBuffers = { x, y, outDtype: 'float32', mean: null, rstd: null };
    const params: NormParams = { n, eps, epsOutside: false, scale, bias: null };
    const kernel = KERNELS[op];
    runs.push(['js', () => kernel(buffers, params, 0, rows)]);
    // prepareF32 runs once per request in the service, so once per call here
    runs.push(['wasm', op === 'rmsnorm'
      ? () => {
        wasm.prepareF32(scaleAt, null, n, preparedAt);
        wasm.rmsnormF32(xAt, yAt, scaleAt, null, preparedAt, null, n, 0, rows, eps, false);
      }
      : () => {
        wasm.prepareF32(scaleAt, null, n, preparedAt);
        wasm.layernormF32(xAt, yAt, scaleAt, null, preparedAt, null, null, n, 0, rows, eps, false);
      }]);
    for (const [impl, run] of runs) {
      const [ms, copyMs] = timer.alternately(run, copy);
      y.fill(NaN);
      run(); // the copy ran last and overwrote y
      figures.push(kernelFigures(op, impl, s, 'float32', 8 * rows * n, 4 * rows * n, ms, copyMs, checkRows(op, x, y, rows, n, false)));
    }
  }
  return figures;
}

/**
 * bfloat16 in and out. js: the codec's table widen into float32 scratch, then the JS kernel, which
 * narrows on store. wasm, the service's path: widenBf16, the SIMD kernel in place, narrowBf16.
 */
function benchBfloat16(s: [number, number]): KernelFigures[] {
  const [rows, n] = s;
  const { memory, buffer, at: [bitsAt, xAt, yAt, scaleAt, preparedAt] } = carve([2 * rows * n, 4 * rows * n, 2 * rows * n, 8 * n, preparedBytes(n)]);
  const wasm = loadWasmKernels(memory);
  const values = randomRows(rows, n, 2);
  const bits = new Uint16Array(buffer, bitsAt, rows * n);
  for (let i = 0; i < values.length; i++) bits[i] = bfloat16Bits(values[i]);
  const x = new Float32Array(buffer, xAt, rows * n);
  const y = new Uint16Array(buffer, yAt, rows * n);
  const scale = new Float64Array(buffer, scaleAt, n).fill(1);
  // the same bytes as float32 elements, for a Float32Array.prototype.set copy
  const copyFrom = new Float32Array(buffer, bitsAt, (rows * n) >> 1);
  const copyTo = new Float32Array(buffer, yAt, (rows * n) >> 1);
  const copy = () => copyTo.set(copyFrom);
  const widened = new Float32Array(rows * n);
  for (let i = 0; i < widened.length; i++) widened[i] = bfloat16Value(bits[i]);
  const figures: KernelFigures[] = [];
  for (const op of ['rmsnorm', 'layernorm'] as const) {
    const eps = op === 'rmsnorm' ? 1e-6 : 1e-5;
    const buffers: NormBuffers = { x, y, outDtype: 'bfloat16', mean: null, rstd: null };
    const params: NormParams = { n, eps, epsOutside: false, scale, bias: null };
    const kernel = KERNELS[op];
    const runs: [KernelFigures['impl'], () => void][] = [
      ['js', () => {
        widenBfloat16(bits, x);
        kernel(buffers, params, 0, rows);
      }],
      ['wasm', () => {
        wasm.widenBf16(bitsAt, xAt, rows * n);
        wasm.prepareF32(scaleAt, null, n, preparedAt);
        if (op === 'rmsnorm') wasm.rmsnormF32(xAt, xAt, scaleAt, null, preparedAt, null, n, 0, rows, eps, false);
        else wasm.layernormF32(xAt, xAt, scaleAt, null, preparedAt, null, null, n, 0, rows, eps, false);
        wasm.narrowBf16(xAt, yAt, rows * n);
      }],
    ];
    for (const [impl, run] of runs) {
      const [ms, copyMs] = timer.alternately(run, copy);
      y.fill(0x7fc0);
      run(); // the copy ran last and overwrote y
      figures.push(kernelFigures(op, impl, s, 'bfloat16', 4 * rows * n, 2 * rows * n, ms, copyMs, checkRows(op, widened, y, rows, n, true)));
    }
  }
  return figures;
}

/** the service's own path for one request's compute, on 1 worker and on 2 (bench-pool.ts) */
async function benchPool(s: [number, number]): Promise<PoolFigures[]> {
  const [rows, n] = s;
  const values = randomRows(rows, n, 3);
  const body = { input: { dtype: 'float32', shape: [rows, n], data: new Uint8Array(values.buffer) } };
  const sides = poolSides();
  const figures: PoolFigures[] = [];
  try {
    for (const op of ['rmsnorm', 'layernorm'] as const) {
      const sideFigures = await compareSides(
        sides, args.samples === undefined && !short ? 11 : samples,
        (side) => allocateRowJob(OPERATIONS[op].check(body, '', false) as RowRequest, side.slabs, side.pool.workers, side.wasm, null, null),
        (job) => {
          const y = job.outputs[0][1];
          return checkRows(op, values, new Float32Array(y.memory, y.byteOffset, y.length), rows, n, false);
        },
      );
      for (const f of sideFigures) figures.push({ op, shape: s, gbPerS: (8 * rows * n) / f.medianMs / 1e6, ...f });
    }
  } finally {
    await closeSides(sides);
  }
  return figures;
}

const fmt = (v: number, d = 2) => v.toFixed(d);

const loadAtStart = loadavg()[0];
const kernels: KernelFigures[] = [];
for (const s of F32_SHAPES) kernels.push(...benchFloat32(cut(s)));
kernels.push(...benchBfloat16(cut(BF16_SHAPE)));
process.stdout.write('kernel     impl  shape       dtype      ms/call      GB/s  memcpy GB/s  of memcpy  check\n');
for (const k of kernels) {
  process.stdout.write(`${k.kernel.padEnd(10)} ${k.impl.padEnd(5)} ${`${k.shape[0]}×${k.shape[1]}`.padEnd(11)} ${k.inDtype.padEnd(8)} ${fmt(k.medianMs, 3).padStart(9)} ${fmt(k.gbPerS).padStart(9)} ${fmt(k.memcpyGbPerS).padStart(12)} ${`${fmt(100 * k.fractionOfMemcpy, 1)} %`.padStart(10)}  ${k.checkFailure ?? 'ok'}\n`);
}
const pool = await benchPool(cut(POOL_SHAPE));
process.stdout.write('\npool       shape       workers       ms      GB/s  speed-up  check\n');
for (const p of pool) {
  process.stdout.write(`${p.op.padEnd(10)} ${`${p.shape[0]}×${p.shape[1]}`.padEnd(11)} ${String(p.workers).padStart(7)} ${fmt(p.medianMs).padStart(8)} ${fmt(p.gbPerS).padStart(9)} ${`${fmt(p.speedup)}×`.padStart(9)}  ${p.checkFailure ?? 'ok'}\n`);
}
const channels = await benchChannels({ short, timer, poolSamples: args.samples === undefined && !short ? 11 : samples });
printChannels(channels.kernels, channels.pool, (line) => process.stdout.write(line));

const results: BenchResults = {
  kind: 'bench', date: new Date().toISOString(), command: commandLine('dist-load/bench.js'), machine: machine(),
  loadAverage: { start: loadAtStart, end: loadavg()[0] },
  short, samples, kernels, pool, channelKernels: channels.kernels, channelPool: channels.pool,
};
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'bench.json'), `${JSON.stringify(results, null, 2)}\n`);
await writeReport(out);
const checked = [...kernels, ...pool, ...channels.kernels, ...channels.pool];
const failures = checked.filter((f) => f.checkFailure !== null).length;
process.stdout.write(`wrote ${join(out, 'bench.json')} and RESULTS.md\nchecks: ${checked.length - failures} passed, ${failures} failed\n`);
process.exit(failures === 0 ? 0 : 1);
