// the per-channel ops' bench tensors and their check against float64, written apart from src/
// (plain two-pass float64 sums over each group), so a wrong kernel cannot post a good figure.
import { mulberry32, tolerance } from '../test/reference/contract.mjs';

export interface ChannelCase {
  op: 'batchnorm' | 'groupnorm';
  /** batchnorm: the batch's statistics (true) or the running ones */
  training: boolean;
  shape: number[];
  /** batchnorm's channel_axis as sent; 1 for groupnorm */
  channelAxis: number;
  /** groupnorm's num_groups */
  groups: number;
}

export interface ChannelData {
  x: Float32Array;
  /** per channel, float32 values */
  weight: number[];
  bias: number[];
  runningMean: number[];
  runningVar: number[];
}

const EPS = 1e-5; // both ops' default

export const caseName = (c: ChannelCase) => (c.op === 'groupnorm' ? `groupnorm G=${c.groups}` : `batchnorm ${c.training ? 'train' : 'infer'}`);
export const layoutName = (c: ChannelCase) => (c.channelAxis === 1 ? 'C first' : 'C last');

/** the input seen as [outer, C, inner], C on the channel axis */
export function geometryOf(c: ChannelCase): { outer: number; channels: number; inner: number } {
  const axis = c.channelAxis < 0 ? c.channelAxis + c.shape.length : c.channelAxis;
  const product = (dims: number[]) => dims.reduce((p, d) => p * d, 1);
  return { outer: product(c.shape.slice(0, axis)), channels: c.shape[axis], inner: product(c.shape.slice(axis + 1)) };
}

/** each channel with its own offset and spread, so the mean has something to remove */
export function channelData(c: ChannelCase, seed: number): ChannelData {
  const { outer, channels: C, inner } = geometryOf(c);
  const next = mulberry32(seed);
  const offset = Array.from({ length: C }, () => 4 * next() - 2);
  const spread = Array.from({ length: C }, () => (0.5 + 2.5 * next()) * 2 * Math.sqrt(3));
  const x = new Float32Array(outer * C * inner);
  for (let o = 0, i = 0; o < outer; o++) {
    for (let ch = 0; ch < C; ch++) {
      for (let k = 0; k < inner; k++, i++) x[i] = offset[ch] + spread[ch] * (next() - 0.5);
    }
  }
  const f32 = (v: number) => Math.fround(v);
  return {
    x,
    weight: offset.map(() => f32(0.5 + next())),
    bias: offset.map(() => f32(next() - 0.5)),
    runningMean: offset.map((m) => f32(m + 0.1 * (next() - 0.5))),
    runningVar: spread.map((s) => f32((s * s) / 12 * (0.8 + 0.4 * next()))),
  };
}

/** the request body, with the input's bytes where the service's body reader would put them */
export function channelBody(c: ChannelCase, d: ChannelData, input: Uint8Array): Record<string, unknown> {
  const C = d.weight.length;
  const vec = (values: number[]) => ({ dtype: 'float32', shape: [C], data: values });
  const body: Record<string, unknown> = {
    input: { dtype: 'float32', shape: c.shape, data: input }, weight: vec(d.weight), bias: vec(d.bias), return_stats: true,
  };
  if (c.op === 'groupnorm') return { ...body, num_groups: c.groups };
  return { ...body, channel_axis: c.channelAxis, training: c.training, running_mean: vec(d.runningMean), running_var: vec(d.runningVar) };
}

/** μ and r per normalized group: per channel (batchnorm), per (sample, group) (groupnorm) */
function statistics(c: ChannelCase, d: ChannelData): { mu: Float64Array; r: Float64Array } {
  const { outer, channels: C, inner } = geometryOf(c);
  const count = c.op === 'groupnorm' ? outer * c.groups : C;
  const mu = new Float64Array(count);
  const r = new Float64Array(count);
  if (c.op === 'batchnorm' && !c.training) {
    for (let ch = 0; ch < C; ch++) {
      mu[ch] = d.runningMean[ch];
      r[ch] = 1 / Math.sqrt(d.runningVar[ch] + EPS);
    }
    return { mu, r };
  }
  // group k's elements: batchnorm, channel k of every outer index; groupnorm, one contiguous row
  const rowLength = (C / c.groups) * inner;
  const each = (k: number, visit: (v: number) => void) => {
    if (c.op === 'groupnorm') {
      for (let i = k * rowLength, end = i + rowLength; i < end; i++) visit(d.x[i]);
      return;
    }
    for (let o = 0; o < outer; o++) for (let i = (o * C + k) * inner, end = i + inner; i < end; i++) visit(d.x[i]);
  };
  for (let k = 0; k < count; k++) {
    let s = 0;
    let n = 0;
    each(k, (v) => { s += v; n++; });
    const m = s / n;
    let q = 0;
    each(k, (v) => { q += (v - m) * (v - m); });
    mu[k] = m;
    r[k] = 1 / Math.sqrt(q / n + EPS);
  }
  return { mu, r };
}

/** null when output, mean and rstd are all within the contract's float32 bound, else the first miss */
export function checkChannels(c: ChannelCase, d: ChannelData, y: Float32Array, mean: Float32Array, rstd: Float32Array): string | null {
  const { outer, channels: C, inner } = geometryOf(c);
  const { mu, r } = statistics(c, d);
  const miss = (what: string, got: number, want: number) => {
    const bound = tolerance('float32', want);
    const diff = Math.abs(got - want);
    return diff <= bound ? null : `${what} = ${got}, reference ${want} (|diff| ${diff.toExponential(2)} > ${bound.toExponential(2)})`;
  };
  for (let k = 0; k < mu.length; k++) {
    const problem = miss(`mean[${k}]`, mean[k], mu[k]) ?? miss(`rstd[${k}]`, rstd[k], r[k]);
    if (problem !== null) return problem;
  }
  const perGroup = C / c.groups;
  for (let o = 0, i = 0; o < outer; o++) {
    for (let ch = 0; ch < C; ch++) {
      const k = c.op === 'groupnorm' ? o * c.groups + Math.floor(ch / perGroup) : ch;
      const a = r[k] * d.weight[ch];
      for (let j = 0; j < inner; j++, i++) {
        const want = (d.x[i] - mu[k]) * a + d.bias[ch];
        const got = y[i];
        if (!(Math.abs(got - want) <= tolerance('float32', want))) return miss(`output[${i}]`, got, want);
      }
    }
  }
  return null;
}
