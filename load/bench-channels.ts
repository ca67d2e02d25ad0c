// npm run bench, the per-channel ops (BatchNorm training and inference, channels first and last;
// GroupNorm) through the service's own job layout (allocateChannelJob / allocateRowJob): on one
// thread, as a share of a memcpy of the same bytes in the same run, and on the real pool, 1 worker
// against 2. Every figure's output is checked against float64 (bench-channel-reference.ts).
import { Worker } from 'node:worker_threads';
import { executeTask } from '../dist/kernels/execute-task.js';
import { loadWasmKernels, type WasmKernels } from '../dist/kernels/wasm-kernels.js';
import { allocateRowJob } from '../dist/jobs/allocate.js';
import { allocateChannelJob } from '../dist/jobs/allocate-channels.js';
import type { ChannelRequest, CheckedRequest, RowRequest } from '../dist/jobs/checked-request.js';
import { COST, type Job } from '../dist/jobs/job.js';
import { OPERATIONS } from '../dist/ops/registry.js';
import { createTensorMemory, type TensorMemory } from '../dist/memory/tensor-memory.js';
import { caseName, channelBody, channelData, checkChannels, layoutName, type ChannelCase, type ChannelData } from './bench-channel-reference.js';
import { closeSides, compareSides, poolSides } from './bench-pool.js';
import { median } from './machine.js';
import type { Timer } from './bench-timing.js';
import type { ChannelKernelFigures, ChannelPoolFigures } from './results.js';

const NCHW: number[] = [32, 64, 56, 56];
const NHWC: number[] = [32, 56, 56, 64];
export const CHANNEL_CASES: ChannelCase[] = [
  { op: 'batchnorm', training: true, shape: NCHW, channelAxis: 1, groups: 1 },
  { op: 'batchnorm', training: true, shape: NHWC, channelAxis: -1, groups: 1 },
  { op: 'batchnorm', training: false, shape: NCHW, channelAxis: 1, groups: 1 },
  { op: 'batchnorm', training: false, shape: NHWC, channelAxis: -1, groups: 1 },
  { op: 'groupnorm', training: false, shape: [8, 256, 32, 32], channelAxis: 1, groups: 32 },
];

export interface ChannelBenchOptions {
  /** CI: the batch dimension cut to 2 (1 for GroupNorm), still past the inline limits */
  short: boolean;
  timer: Timer;
  poolSamples: number;
}

/** a job's phases as the JavaScript kernels run them (the SIMD choice is the job's, made by allocate) */
function withoutSimd(job: Job): Job {
  return {
    ...job,
    phases: job.phases.map((p) => ({ ...p, cost: COST.js, task: p.task.kind === 'rows' ? { ...p.task, prepared: null, wide: null } : { ...p.task, simd: false } })),
  };
}

function allocate(req: CheckedRequest, slabs: TensorMemory, maxTasks: number, wasm: WasmKernels): Job {
  return req.layout === 'rows' ? allocateRowJob(req as RowRequest, slabs, maxTasks, wasm, null, null) : allocateChannelJob(req as ChannelRequest, slabs, maxTasks, null);
}

/** every phase on this thread, one task each, with the main thread's work between phases */
function runInline(job: Job, wasm: WasmKernels): void {
  job.phases.forEach((phase, i) => {
    const result = executeTask(phase.task, wasm);
    if (!result.ok) throw new Error(result.message);
    job.afterPhase?.(i);
  });
}

/** the answer's output, mean and rstd checked against float64 */
function checkJob(c: ChannelCase, d: ChannelData, job: Job): string | null {
  const view = (name: string) => {
    const t = job.outputs.find(([field]) => field === name)![1];
    return new Float32Array(t.memory, t.byteOffset, t.length);
  };
  return checkChannels(c, d, view('output'), view('mean'), view('rstd'));
}

/** the input's bytes in the pool's shared memory, where a request body would be read in place */
function placeInput(slabs: TensorMemory, x: Float32Array): Uint8Array {
  const slab = slabs.acquire(x.byteLength);
  const bytes = new Uint8Array(slab.memory, slab.offset, x.byteLength);
  bytes.set(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
  return bytes;
}

const cut = (c: ChannelCase, short: boolean): ChannelCase => (short ? { ...c, shape: [c.op === 'groupnorm' ? 1 : 2, ...c.shape.slice(1)] } : c);

function benchSingle(c: ChannelCase, seed: number, timer: Timer): ChannelKernelFigures[] {
  const d = channelData(c, seed);
  const slabs = createTensorMemory(1024 * 2 ** 20);
  const wasm = loadWasmKernels(slabs.memory);
  const input = placeInput(slabs, d.x);
  const req = OPERATIONS[c.op].check(channelBody(c, d, input), '', false);
  const copyTo = slabs.acquire(d.x.byteLength);
  const from = new Float32Array(input.buffer, input.byteOffset, d.x.length);
  const to = new Float32Array(copyTo.memory, copyTo.offset, d.x.length);
  const copy = () => to.set(from);
  const service = allocate(req, slabs, 1, wasm);
  slabs.release(service.slab);
  const impls: [ChannelKernelFigures['impl'], (job: Job) => Job][] = [['js', withoutSimd]];
  if (service.phases.some((p) => p.cost === COST.simd)) impls.push(['wasm', (job) => job]);
  const figures: ChannelKernelFigures[] = [];
  for (const [impl, as] of impls) {
    // allocated and run per call, as the service does per request
    const call = () => {
      const job = as(allocate(req, slabs, 1, wasm));
      runInline(job, wasm);
      slabs.release(job.slab);
    };
    const [ms, copyMs] = timer.alternately(call, copy);
    const job = as(allocate(req, slabs, 1, wasm));
    runInline(job, wasm);
    const checkFailure = checkJob(c, d, job);
    slabs.release(job.slab);
    const bytes = 8 * d.x.length; // float32 read + float32 written
    const gbPerS = bytes / ms / 1e6;
    const memcpyGbPerS = bytes / copyMs / 1e6;
    figures.push({
      op: caseName(c), layout: layoutName(c), impl, shape: c.shape, dtype: 'float32', bytes, medianMs: ms, gbPerS, memcpyGbPerS,
      fractionOfMemcpy: gbPerS / memcpyGbPerS, checkFailure,
    });
  }
  return figures;
}

async function benchPools(cases: ChannelCase[], samples: number): Promise<ChannelPoolFigures[]> {
  const sides = poolSides();
  const figures: ChannelPoolFigures[] = [];
  try {
    for (const [k, c] of cases.entries()) {
      const d = channelData(c, 100 + k);
      const reqs = new Map(sides.map((side) => [side, OPERATIONS[c.op].check(channelBody(c, d, placeInput(side.slabs, d.x)), '', false)]));
      const sideFigures = await compareSides(sides, samples, (side) => allocate(reqs.get(side)!, side.slabs, side.pool.workers, side.wasm), (job) => checkJob(c, d, job));
      for (const f of sideFigures) figures.push({ op: caseName(c), layout: layoutName(c), shape: c.shape, gbPerS: (8 * d.x.length) / f.medianMs / 1e6, ...f });
    }
  } finally {
    await closeSides(sides);
  }
  return figures;
}

// a copy of the tensor by one thread, then by two (a half each): how far two workers can scale on this
// machine in this run, for ops bound by memory rather than arithmetic
const COPY_WORKER = `const { parentPort, workerData: { memory, length } } = require('node:worker_threads');
const x = new Float32Array(memory, 0, length), y = new Float32Array(memory, 4 * length, length);
parentPort.on('message', ([a, b]) => { y.subarray(a, b).set(x.subarray(a, b)); parentPort.postMessage(0); });`;

async function benchCopyScaling(shape: number[], samples: number): Promise<ChannelPoolFigures[]> {
  const length = shape.reduce((p, d) => p * d, 1);
  const memory = new SharedArrayBuffer(8 * length);
  const x = new Float32Array(memory, 0, length);
  for (let i = 0; i < length; i++) x[i] = i;
  const threads = [0, 1].map(() => new Worker(COPY_WORKER, { eval: true, workerData: { memory, length } }));
  const copy = (w: Worker, a: number, b: number) => new Promise((done) => { w.once('message', done); w.postMessage([a, b]); });
  const sides = [() => copy(threads[0], 0, length), () => Promise.all([copy(threads[0], 0, length >> 1), copy(threads[1], length >> 1, length)])];
  try {
    const times: number[][] = [[], []];
    for (let i = 0; i < samples + 3; i++) {
      for (let s = 0; s < 2; s++) {
        const t0 = performance.now();
        await sides[s]();
        if (i >= 3) times[s].push(performance.now() - t0);
      }
    }
    const y = new Float32Array(memory, 4 * length, length);
    const checkFailure = y.every((v, i) => v === x[i]) ? null : 'the copy differs from its source';
    return times.map((t, s) => ({
      op: 'memcpy (control)', layout: '–', shape, workers: s + 1, medianMs: median(t), gbPerS: (8 * length) / median(t) / 1e6,
      speedup: median(times[0]) / median(t), checkFailure,
    }));
  } finally {
    await Promise.all(threads.map((w) => w.terminate()));
  }
}

export async function benchChannels(o: ChannelBenchOptions): Promise<{ kernels: ChannelKernelFigures[]; pool: ChannelPoolFigures[] }> {
  const cases = CHANNEL_CASES.map((c) => cut(c, o.short));
  const kernels = cases.flatMap((c, k) => benchSingle(c, 10 + k, o.timer));
  const control = await benchCopyScaling(cases[0].shape, o.poolSamples);
  return { kernels, pool: [...control, ...(await benchPools(cases, o.poolSamples))] };
}

const fmt = (v: number, d = 2) => v.toFixed(d);
const dims = (s: number[]) => s.join('×');

export function printChannels(kernels: ChannelKernelFigures[], pool: ChannelPoolFigures[], out: (line: string) => void): void {
  out('\nchannels           layout   impl  shape             ms/call      GB/s  memcpy GB/s  of memcpy  check\n');
  for (const k of kernels) {
    out(`${k.op.padEnd(18)} ${k.layout.padEnd(8)} ${k.impl.padEnd(5)} ${dims(k.shape).padEnd(15)} ${fmt(k.medianMs, 3).padStart(9)} ${fmt(k.gbPerS).padStart(9)} ${fmt(k.memcpyGbPerS).padStart(12)} ${`${fmt(100 * k.fractionOfMemcpy, 1)} %`.padStart(10)}  ${k.checkFailure ?? 'ok'}\n`);
  }
  out('\nchannels pool      layout   shape           workers       ms      GB/s  speed-up  check\n');
  for (const p of pool) {
    out(`${p.op.padEnd(18)} ${p.layout.padEnd(8)} ${dims(p.shape).padEnd(15)} ${String(p.workers).padStart(7)} ${fmt(p.medianMs).padStart(8)} ${fmt(p.gbPerS).padStart(9)} ${`${fmt(p.speedup)}×`.padStart(9)}  ${p.checkFailure ?? 'ok'}\n`);
  }
}
