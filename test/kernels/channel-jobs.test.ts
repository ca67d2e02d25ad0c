// BatchNorm and GroupNorm jobs as allocate lays them out (src/jobs/allocate-channels.ts, allocate.ts)
// and the tasks run them (kernels/execute-task.ts): which phases take the SIMD kernels, every dtype in
// and out against the float64 reference, and the same bytes however a phase is split into tasks.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DTYPES as DTYPE_INFO, type Dtype } from '../../src/codec/dtype.js';
import { bfloat16BitsFromNumber, float16BitsFromNumber } from '../../src/codec/half.js';
import { executeTask } from '../../src/kernels/execute-task.js';
import { loadWasmKernels } from '../../src/kernels/wasm-kernels.js';
import { allocateRowJob } from '../../src/jobs/allocate.js';
import { allocateChannelJob } from '../../src/jobs/allocate-channels.js';
import type { ChannelRequest, RowRequest } from '../../src/jobs/checked-request.js';
import { COST, type Job } from '../../src/jobs/job.js';
import { createTensorMemory } from '../../src/memory/tensor-memory.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import type { Task } from '../../src/pool/protocol.js';
import { referenceBatchnorm, referenceGroupnorm } from '../reference/channel-norm-reference.js';
import { DTYPES, mismatch, normals, readOutput, roundTo, tolerance } from './harness.js';

const slabs = createTensorMemory(512 * 2 ** 20);
const wasm = loadWasmKernels(slabs.memory);

/** values of `dtype` as the bytes of a request body, `skew` bytes into a slab of the shared memory */
function body(dtype: Dtype, values: readonly number[], skew: number): Uint8Array {
  const size = DTYPE_INFO[dtype].itemsize;
  const slab = slabs.acquire(values.length * size + 8);
  const bytes = new Uint8Array(slab.memory, slab.offset + skew, values.length * size);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  values.forEach((v, i) => {
    if (dtype === 'float64') view.setFloat64(8 * i, v, true);
    else if (dtype === 'float32') view.setFloat32(4 * i, v, true);
    else view.setUint16(2 * i, dtype === 'float16' ? float16BitsFromNumber(v) : bfloat16BitsFromNumber(v), true);
  });
  return bytes;
}

/** each phase as tasks over these unit ranges, run in the order given, with the main thread's work between phases */
function runJob(job: Job, split: (units: number) => [number, number][] = (u) => [[0, u]]): void {
  job.phases.forEach((phase, i) => {
    split(phase.units).forEach(([start, end], k) => {
      const t = phase.task;
      const task: Task = t.kind === 'rows' ? { ...t, rowStart: start, rowEnd: end, slot: t.slot + k } : { ...t, tileStart: start, tileEnd: end, slot: t.slot + k };
      const result = executeTask(task, wasm);
      if (!result.ok) throw new Error(result.message);
    });
    job.afterPhase?.(i);
  });
}

function output(job: Job, name: string, dtype: Dtype): number[] {
  const t = job.outputs.find(([field]) => field === name)![1];
  const type = t.storage === 'bits' ? Uint16Array : t.storage === 'float64' ? Float64Array : Float32Array;
  return readOutput(dtype, new type(t.memory, t.byteOffset, t.length));
}

interface BatchnormJobCase { shape: number[]; channelAxis: number; training: boolean; inDtype: Dtype; outDtype: Dtype; skew?: number }

function batchnormJob(c: BatchnormJobCase, seed = 1): { job: Job; values: number[]; req: ChannelRequest } {
  const axis = c.channelAxis < 0 ? c.channelAxis + c.shape.length : c.channelAxis;
  const C = c.shape[axis];
  const values = normals(seed, c.shape.reduce((p, d) => p * d, 1), 0.5, 2).map((v) => roundTo(c.inDtype, v));
  const vec = (data: number[]) => ({ dtype: 'float32', shape: [C], data: data.map(Math.fround) });
  const around = (offset: number, center: number, scale: number) => vec(normals(seed + offset, C, center, scale));
  const running = { running_mean: around(1, 0.5, 1), running_var: vec(Array.from({ length: C }, (_, k) => 0.5 + k / C)) };
  const req = OPERATIONS.batchnorm.check({
    input: { dtype: c.inDtype, shape: c.shape, data: body(c.inDtype, values, c.skew ?? 0) }, channel_axis: c.channelAxis,
    training: c.training, weight: around(3, 1, 0.3), bias: around(4, 0, 0.5), return_stats: true, output_dtype: c.outDtype, ...running,
  }, '', false) as ChannelRequest;
  return { job: allocateChannelJob(req, slabs, 16, null), values, req };
}

/** output, mean and rstd against the reference, seen as [outer, C, inner] */
function checkBatchnormJob(c: BatchnormJobCase, job: Job, values: number[], req: ChannelRequest): string[] {
  const ref = referenceBatchnorm({
    x: values, shape: [req.outer, req.channels, req.inner], channelAxis: 1, training: c.training,
    runningMean: listOf(req.runningMean), runningVar: listOf(req.runningVar), momentum: 0.1,
    weight: listOf(req.weight), bias: listOf(req.bias), eps: req.eps,
  });
  const problems: string[] = [];
  const y = output(job, 'output', c.outDtype);
  ref.output.forEach((r, i) => {
    const bad = mismatch(y[i], r, tolerance(c.outDtype, r, ref.largeMean[i]));
    if (bad && problems.length < 5) problems.push(`y[${i}]: ${bad}`);
  });
  for (const [name, want] of [['mean', ref.mean], ['rstd', ref.rstd]] as const) {
    output(job, name, 'float32').forEach((v, k) => {
      const bad = mismatch(v, want[k], tolerance('float32', want[k]));
      if (bad && problems.length < 5) problems.push(`${name}[${k}]: ${bad}`);
    });
  }
  return problems;
}

/** a [C] float32 tensor sent as a list of float32 values */
function listOf(t: ChannelRequest['weight']): number[] | null {
  return t === null ? null : (t.source as { list: number[] }).list;
}

/** each answered tensor's name and a digest of its bytes */
const bytesOf = (job: Job) => job.outputs.map(([name, t]) => {
  const size = t.storage === 'bits' ? 2 : t.storage === 'float64' ? 8 : 4;
  return `${name} ${createHash('sha256').update(new Uint8Array(t.memory, t.byteOffset, t.length * size)).digest('hex')}`;
});

describe('batchnorm jobs: the SIMD choice, from the request alone', () => {
  it.each<[Dtype, Dtype, boolean, boolean]>([
    ['float32', 'float32', true, true], ['float16', 'float32', true, true], ['bfloat16', 'float32', true, true],
    ['float32', 'bfloat16', true, false], ['float32', 'float64', true, false], ['float64', 'float32', false, false],
  ])('batchnorm training [6, 3, 5] %s → %s: statistics SIMD %s, output SIMD %s', (inDtype, outDtype, stats, apply) => {
    const { job } = batchnormJob({ shape: [6, 3, 5], channelAxis: 1, training: true, inDtype, outDtype });
    expect(job.phases.map((p) => p.cost === COST.simd)).toEqual([stats, apply]);
    expect(job.phases.map((p) => (p.task.kind === 'channelStats' || p.task.kind === 'channelApply' ? p.task.simd : null))).toEqual([stats, apply]);
    slabs.release(job.slab);
  });
});

describe('batchnorm jobs against the reference', () => {
  for (const inDtype of DTYPES) {
    for (const outDtype of DTYPES) {
      for (const [shape, channelAxis] of [[[9, 5, 7, 3], 1], [[9, 7, 3, 5], -1]] as const) {
        it(`batchnorm training and inference [${shape}] channel_axis ${channelAxis}, ${inDtype} → ${outDtype}`, () => {
          for (const training of [true, false]) {
            const c = { shape: [...shape], channelAxis, training, inDtype, outDtype };
            const { job, values, req } = batchnormJob(c);
            runJob(job);
            expect(checkBatchnormJob(c, job, values, req)).toEqual([]);
            slabs.release(job.slab);
          }
        });
      }
    }
  }

  it.each<[Dtype, number]>([['float32', 1], ['float32', 3], ['float64', 4], ['bfloat16', 1]])(
    'batchnorm training [40, 6, 300] %s at %d bytes past alignment: read in place by SIMD, else loaded first; right either way', (inDtype, skew) => {
      const c = { shape: [40, 6, 300], channelAxis: 1, training: true, inDtype, outDtype: 'float32' as Dtype, skew };
      const { job, values, req } = batchnormJob(c, 5);
      const stats = job.phases[0].task;
      expect(stats.kind === 'channelStats' && stats.xSource === null).toBe(inDtype === 'float32');
      runJob(job);
      expect(checkBatchnormJob(c, job, values, req)).toEqual([]);
      slabs.release(job.slab);
    });
});

describe('batchnorm jobs: the same bytes however the phases are split', () => {
  const splits: [string, (u: number) => [number, number][]][] = [
    ['halves, second first', (u) => [[u >> 1, u], [0, u >> 1]]],
    ['one tile each, backwards', (u) => [...Array(u).keys()].reverse().map((b) => [b, b + 1])],
    ['thirds', (u) => [[0, Math.floor(u / 3)], [Math.floor(u / 3), Math.floor((2 * u) / 3)], [Math.floor((2 * u) / 3), u]]],
  ];
  for (const [shape, channelAxis] of [[[16, 8, 64, 64], 1], [[16, 64, 64, 8], -1], [[3, 70000], -1]] as const) {
    for (const dtype of ['float32', 'bfloat16'] as const) {
      it(`batchnorm training [${shape}] channel_axis ${channelAxis}, ${dtype}: output, stats and running stats`, () => {
        const c = { shape: [...shape], channelAxis, training: true, inDtype: dtype, outDtype: dtype };
        const whole = batchnormJob(c, 9);
        runJob(whole.job);
        expect(whole.job.phases[0].units).toBeGreaterThan(2);
        const expected = bytesOf(whole.job);
        for (const [, split] of splits) {
          const other = batchnormJob(c, 9);
          runJob(other.job, split);
          expect(bytesOf(other.job)).toEqual(expected);
          slabs.release(other.job.slab);
        }
        slabs.release(whole.job.slab);
      });
    }
  }
});

describe('groupnorm jobs', () => {
  for (const outDtype of DTYPES) {
    it(`groupnorm [3, 8, 5, 7] float32 → ${outDtype}, 4 groups, weight, bias, stats: SIMD unless float64 out; rows split any way, same bytes`, () => {
      const shape = [3, 8, 5, 7];
      const values = normals(21, 3 * 8 * 35, -1, 3).map(Math.fround);
      const vec = (seed: number) => ({ dtype: 'float32', shape: [8], data: normals(seed, 8, 0.5, 0.5).map(Math.fround) });
      const req = OPERATIONS.groupnorm.check({
        input: { dtype: 'float32', shape, data: body('float32', values, 1) }, num_groups: 4, weight: vec(22), bias: vec(23),
        return_stats: true, output_dtype: outDtype,
      }, '', false) as RowRequest;
      const run = (split?: (u: number) => [number, number][]) => {
        const job = allocateRowJob(req, slabs, 4, wasm, null, null);
        runJob(job, split);
        return job;
      };
      const job = run();
      expect(job.phases[0].cost === COST.simd).toBe(outDtype !== 'float64');
      const ref = referenceGroupnorm({
        x: values, shape, numGroups: 4, eps: 1e-5, weight: listOf(req.weight), bias: listOf(req.bias),
      });
      const y = output(job, 'output', outDtype);
      expect(ref.output.flatMap((r, i) => (mismatch(y[i], r, tolerance(outDtype, r, ref.largeMean[i])) ? [i] : []))).toEqual([]);
      const other = run((u) => [[5, u], [0, 1], [1, 5]]);
      expect(bytesOf(other)).toEqual(bytesOf(job));
      slabs.release(job.slab);
      slabs.release(other.slab);
    });
  }
});
