// runs the SIMD channel kernels (src/kernels/wasm/channels.wat) on buffers carved out of one shared
// WebAssembly.Memory, as the service does, and checks them against the independent float64
// references of test/reference/channel-norm-reference.ts within the contract's float32 tolerance.
// Needs the build (dist/kernels/channels.wasm).
import { tileBounds, tileGeometry, partialsLength, partialsOffset } from '../../src/kernels/channel-tiles.js';
import { prepareChannelsF32, preparedChannelBytes } from '../../src/kernels/channel-params.js';
import { mergeChannel } from '../../src/kernels/channel-stats.js';
import { loadWasmKernels } from '../../src/kernels/wasm-kernels.js';
import { referenceBatchnorm, referenceGroupnorm, type ChannelStats } from '../reference/channel-norm-reference.js';
import { mismatch, tolerance } from './harness.js';

const memory = new WebAssembly.Memory({ initial: 256, maximum: 16384, shared: true }); // 16 MiB, at most 1 GiB
export const kernels = loadWasmKernels(memory);

/** byte offsets for these sizes, each 64-byte aligned plus its skew; offset 0 is "absent" */
function carve(sizes: [number, number][]): number[] {
  let at = 64;
  const out = sizes.map(([bytes, skew]) => {
    const start = at + skew;
    at = Math.ceil((start + bytes) / 64) * 64 + 64;
    return start;
  });
  if (at > memory.buffer.byteLength) memory.grow(Math.ceil((at - memory.buffer.byteLength) / 65536));
  return out;
}

const f64At = (at: number, length: number) => new Float64Array(memory.buffer, at, length);
/** float32 views need aligned offsets; misaligned buffers go through bytes */
function writeF32(at: number, values: ArrayLike<number>): void {
  new Uint8Array(memory.buffer, at, 4 * values.length).set(new Uint8Array(Float32Array.from(values).buffer));
}
function readF32(at: number, length: number): Float32Array {
  return new Float32Array(memory.buffer.slice(at, at + 4 * length));
}

/** a BatchNorm input seen as [outer, C, inner]; x holds float32 values */
export interface BatchCase {
  outer: number;
  channels: number;
  inner: number;
  x: readonly number[];
  training: boolean;
  runningMean?: readonly number[];
  runningVar?: readonly number[];
  weight?: readonly number[];
  bias?: readonly number[];
  eps: number;
}

export interface BatchRun { y: Float32Array; mean: number[]; rstd: number[]; partials: Float64Array }

export interface BatchOptions {
  /** bytes past a 64-byte boundary for x and y, any of 0 … 3 too */
  misalign?: number;
  /** the order the tiles are computed in, as tasks might; default 0, 1, … */
  order?: (tiles: number) => number[];
}

/** statistics per tile, the merge (channel-stats.ts), then the output per tile, as a job does */
export function runBatchnorm(c: BatchCase, { misalign = 0, order = (n) => [...Array(n).keys()] }: BatchOptions = {}): BatchRun {
  const { outer, channels: C, inner } = c;
  const size = outer * C * inner;
  const g = tileGeometry(outer, C, inner);
  const [X, Y, P, S, F, B, Q] = carve([
    [4 * size, misalign], [4 * size, misalign], [8 * partialsLength(g), 0], [8 * C, 0], [8 * C, 0], [8 * C, 0], [preparedChannelBytes(C), 0],
  ]);
  writeF32(X, c.x);
  new Uint8Array(memory.buffer, Y, 4 * size).fill(0xff);
  f64At(P, partialsLength(g)).fill(0); // a narrower last channel tile leaves slots unused
  const bounds = { o0: 0, o1: 0, c0: 0, c1: 0 };
  const mean: number[] = [];
  const variance: number[] = [];
  if (c.training) {
    for (const b of order(g.tiles)) {
      const { o0, o1, c0, c1 } = tileBounds(g, b, bounds);
      kernels.tileStatsF32(X, P + 8 * partialsOffset(g, b), C, inner, o0, o1, c0, c1);
    }
    const merged = new Float64Array(2);
    for (let ch = 0; ch < C; ch++) {
      mergeChannel(g, f64At(P, partialsLength(g)), ch, merged);
      mean.push(merged[0]);
      variance.push(merged[1] / (outer * inner));
    }
  } else {
    mean.push(...c.runningMean!);
    variance.push(...c.runningVar!);
  }
  const rstd = variance.map((v) => 1 / Math.sqrt(v + c.eps));
  f64At(S, C).set(mean);
  f64At(F, C).set(rstd.map((r, ch) => r * (c.weight?.[ch] ?? 1)));
  f64At(B, C).set(c.bias ?? Array(C).fill(0));
  prepareChannelsF32(f64At(S, C), f64At(F, C), f64At(B, C), new Float32Array(memory.buffer, Q, preparedChannelBytes(C) / 4));
  for (const b of order(g.tiles)) {
    const { o0, o1, c0, c1 } = tileBounds(g, b, bounds);
    kernels.batchnormF32(X, Y, S, F, B, Q, C, inner, o0, o1, c0, c1);
  }
  return { y: readF32(Y, size), mean, rstd, partials: f64At(P, partialsLength(g)).slice() };
}

/** every output, mean and rstd outside the float32 tolerance, as readable lines (at most `limit`) */
export function compareToReference(got: { y: ArrayLike<number>; mean: ArrayLike<number>; rstd: ArrayLike<number> }, ref: ChannelStats, allowNaN = false, limit = 5): string[] {
  const problems: string[] = [];
  const note = (s: string): void => void (problems.length < limit && problems.push(s));
  for (let i = 0; i < ref.output.length; i++) {
    const bad = mismatch(got.y[i], ref.output[i], tolerance('float32', ref.output[i]), allowNaN);
    if (bad) note(`y[${i}]: ${bad}`);
  }
  for (let k = 0; k < ref.mean.length; k++) {
    const badMean = mismatch(Math.fround(got.mean[k]), ref.mean[k], tolerance('float32', ref.mean[k]), allowNaN);
    if (badMean) note(`mean[${k}]: ${badMean}`);
    const badRstd = mismatch(Math.fround(got.rstd[k]), ref.rstd[k], tolerance('float32', ref.rstd[k]), allowNaN);
    if (badRstd) note(`rstd[${k}]: ${badRstd}`);
  }
  return problems;
}

export function checkBatchnorm(c: BatchCase, options: BatchOptions = {}, allowNaN = false): string[] {
  const ref = referenceBatchnorm({
    x: c.x, shape: [c.outer, c.channels, c.inner], channelAxis: 1, training: c.training,
    runningMean: c.runningMean ?? null, runningVar: c.runningVar ?? null, momentum: 0.1,
    weight: c.weight ?? null, bias: c.bias ?? null, eps: c.eps,
  });
  return compareToReference(runBatchnorm(c, options), ref, allowNaN);
}

/** a GroupNorm input [N, C, spatial]; x holds float32 values */
export interface GroupCase {
  samples: number;
  channels: number;
  spatial: number;
  groups: number;
  x: readonly number[];
  weight?: readonly number[];
  bias?: readonly number[];
  eps: number;
}

export interface GroupRun { y: Float32Array; mean: Float32Array; rstd: Float32Array }

/** `cuts`: row boundaries of the calls, e.g. [0, 3, rows]; one call by default */
export function runGroupnorm(c: GroupCase, { misalign = 0, cuts }: { misalign?: number; cuts?: number[] } = {}): GroupRun {
  const rows = c.samples * c.groups;
  const n = (c.channels / c.groups) * c.spatial;
  const size = rows * n;
  const [X, Y, G, B, M, R] = carve([[4 * size, misalign], [4 * size, misalign], [8 * c.channels, 0], [8 * c.channels, 0], [4 * rows, 0], [4 * rows, 0]]);
  writeF32(X, c.x);
  new Uint8Array(memory.buffer, Y, 4 * size).fill(0xff);
  f64At(G, c.channels).set(c.weight ?? Array(c.channels).fill(1));
  if (c.bias) f64At(B, c.channels).set(c.bias);
  const at = cuts ?? [0, rows];
  for (let k = 0; k + 1 < at.length; k++) {
    kernels.groupnormF32(X, Y, G, c.bias ? B : null, M, R, n, c.spatial, c.groups, at[k], at[k + 1], c.eps);
  }
  return { y: readF32(Y, size), mean: readF32(M, rows), rstd: readF32(R, rows) };
}

export function checkGroupnorm(c: GroupCase, options: { misalign?: number; cuts?: number[] } = {}, allowNaN = false): string[] {
  const ref = referenceGroupnorm({
    x: c.x, shape: [c.samples, c.channels, c.spatial], numGroups: c.groups, weight: c.weight ?? null, bias: c.bias ?? null, eps: c.eps,
  });
  return compareToReference(runGroupnorm(c, options), ref, allowNaN);
}

/** float32 values ~ N(center, spread²) per channel of [outer, C, inner], each channel its own center */
export function channelValues(outer: number, channels: number, inner: number, next: () => number, center: (c: number) => number, spread = 1): number[] {
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (let c = 0; c < channels; c++) {
      for (let k = 0; k < inner; k++) {
        const u = 1 - next();
        out.push(Math.fround(center(c) + spread * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next())));
      }
    }
  }
  return out;
}
