// independent float64 references for API.md §2's `partial` (pRMSNorm), §8 BatchNorm and §9 GroupNorm,
// written apart from src/: exact sums (fsum) and exact sums of squares, two-pass variances, so that the
// only roundings are the divisions, the deviations, the square root and the output formula. Inputs are
// the values as the service holds them (already rounded to their dtypes); results are unrounded.
import { fsum, sumOfSquares } from './norm-reference.js';

/** k = ⌊n·p⌋ with n·p in float64, as Python's int(n * p) */
export function partialCount(n: number, p: number): number {
  return Math.floor(n * p);
}

export interface BatchnormInput {
  x: readonly number[];
  shape: readonly number[];
  /** may be negative, as on the wire */
  channelAxis: number;
  training: boolean;
  runningMean: readonly number[] | null;
  runningVar: readonly number[] | null;
  momentum: number;
  weight: readonly number[] | null;
  bias: readonly number[] | null;
  eps: number;
}

export interface ChannelStats {
  /** unrounded float64 output, in the input's layout */
  output: number[];
  /** the μ and r used, one per channel (batchnorm) or per (n, g) row (groupnorm) */
  mean: number[];
  rstd: number[];
  /** per element |μ|·r·|γ|: the float64 widening of API.md §2 */
  largeMean: number[];
}

export interface BatchnormExpected extends ChannelStats {
  channels: number;
  /** M = size / C */
  perChannel: number;
  /** the biased batch variance (training), or running_var (inference) */
  variance: number[];
  /** updated running statistics, unrounded; null unless training with running statistics */
  runningMean: number[] | null;
  runningVar: number[] | null;
}

function product(dims: readonly number[]): number {
  return dims.reduce((p, d) => p * d, 1);
}

/** μ and the biased variance of `group`, two-pass around the correctly rounded mean */
function meanAndVariance(group: readonly number[]): [number, number] {
  const mean = fsum(group) / group.length;
  return [mean, sumOfSquares(group.map((v) => v - mean)) / group.length];
}

export function referenceBatchnorm(b: BatchnormInput): BatchnormExpected {
  const rank = b.shape.length;
  const axis = b.channelAxis < 0 ? b.channelAxis + rank : b.channelAxis;
  const C = b.shape[axis];
  const inner = product(b.shape.slice(axis + 1));
  const size = product(b.shape);
  const M = C === 0 ? 0 : size / C;
  const channelOf = (i: number) => Math.floor(i / inner) % C;

  const groups: number[][] = Array.from({ length: C }, () => []);
  for (let i = 0; i < size; i++) groups[channelOf(i)].push(b.x[i]);

  const mean: number[] = [];
  const variance: number[] = [];
  for (let c = 0; c < C; c++) {
    if (b.training) {
      const [mu, v] = meanAndVariance(groups[c]);
      mean.push(mu);
      variance.push(v);
    } else {
      mean.push(b.runningMean![c]);
      variance.push(b.runningVar![c]);
    }
  }
  const rstd = variance.map((v) => 1 / Math.sqrt(v + b.eps));
  const gamma = (c: number) => (b.weight === null ? 1 : b.weight[c]);
  const beta = (c: number) => (b.bias === null ? 0 : b.bias[c]);

  const output: number[] = [];
  const largeMean: number[] = [];
  for (let i = 0; i < size; i++) {
    const c = channelOf(i);
    output.push((b.x[i] - mean[c]) * rstd[c] * gamma(c) + beta(c));
    largeMean.push(Math.abs(mean[c]) * rstd[c] * Math.abs(gamma(c)));
  }

  let runningMean: number[] | null = null;
  let runningVar: number[] | null = null;
  if (b.training && b.runningMean !== null && b.runningVar !== null) {
    const m = b.momentum;
    runningMean = b.runningMean.map((old, c) => (1 - m) * old + m * mean[c]);
    runningVar = b.runningVar.map((old, c) => (1 - m) * old + m * variance[c] * (M / (M - 1)));
  }
  return { output, mean, rstd, largeMean, channels: C, perChannel: M, variance, runningMean, runningVar };
}

export interface GroupnormInput {
  x: readonly number[];
  /** [N, C, d₁, …] */
  shape: readonly number[];
  numGroups: number;
  weight: readonly number[] | null;
  bias: readonly number[] | null;
  eps: number;
}

/** rows (n, g) are contiguous in C order: channels g·C/G … (g+1)·C/G − 1 of sample n */
export function referenceGroupnorm(g: GroupnormInput): ChannelStats {
  const [N, C] = g.shape;
  const G = g.numGroups;
  const spatial = product(g.shape.slice(2));
  const rowLength = (C / G) * spatial;
  const result: ChannelStats = { output: [], mean: [], rstd: [], largeMean: [] };
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < G; k++) {
      const start = (n * G + k) * rowLength;
      const row = g.x.slice(start, start + rowLength);
      const [mu, v] = meanAndVariance(row);
      const r = 1 / Math.sqrt(v + g.eps);
      result.mean.push(mu);
      result.rstd.push(r);
      for (let j = 0; j < rowLength; j++) {
        const c = k * (C / G) + Math.floor(j / spatial);
        const gamma = g.weight === null ? 1 : g.weight[c];
        const beta = g.bias === null ? 0 : g.bias[c];
        result.output.push((row[j] - mu) * r * gamma + beta);
        result.largeMean.push(Math.abs(mu) * r * Math.abs(gamma));
      }
    }
  }
  return result;
}
