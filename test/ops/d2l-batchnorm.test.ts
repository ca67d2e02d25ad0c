// API.md §8 beside the BatchNorm class of d2l §7.5, written out here in float64: its momentum 0.9
// weights the old value (ours is momentum 0.1, PyTorch's convention) and it updates moving_var with the
// biased batch variance. Three training steps, each step's running statistics fed back to the service:
// running_mean agrees step by step; running_var agrees once d2l's update uses σ²·M/(M − 1).
import { describe, expect, it } from 'vitest';
import { okBody, postMsgpack, useFreshApp } from '../helpers/http.js';
import { expectClose } from '../helpers/reference.js';
import { bytesOf, product, randomValues, type Dtype } from '../helpers/tensors.js';
import { tensorValues } from './helpers.js';

const ctx = useFreshApp({}, 'file');

interface D2lState {
  movingMean: number[];
  movingVar: number[];
}

/**
 * d2l's batch_norm for 2-D [N, C] or 4-D [N, C, H, W] input, in training mode:
 *   mean = X.mean over all but C; var = ((X - mean)**2).mean(...)
 *   X_hat = (X - mean) / sqrt(var + eps)
 *   moving_mean = momentum * moving_mean + (1.0 - momentum) * mean
 *   moving_var = momentum * moving_var + (1.0 - momentum) * var
 *   Y = gamma * X_hat + beta
 * `unbiasedVar` replaces var by var·M/(M − 1) in the moving_var update only (the contract's, as PyTorch)
 */
function d2lBatchNorm(X: readonly number[], shape: readonly number[], gamma: readonly number[], beta: readonly number[], state: D2lState,
  eps: number, momentum: number, unbiasedVar = false): { Y: number[]; state: D2lState; mean: number[]; var: number[] } {
  const C = shape[1];
  const inner = product(shape.slice(2));
  const M = X.length / C;
  const channel = (i: number) => Math.floor(i / inner) % C;
  const mean = new Array<number>(C).fill(0);
  X.forEach((x, i) => { mean[channel(i)] += x; });
  for (let c = 0; c < C; c++) mean[c] /= M;
  const variance = new Array<number>(C).fill(0);
  X.forEach((x, i) => { variance[channel(i)] += (x - mean[channel(i)]) ** 2; });
  for (let c = 0; c < C; c++) variance[c] /= M;
  const Y = X.map((x, i) => gamma[channel(i)] * ((x - mean[channel(i)]) / Math.sqrt(variance[channel(i)] + eps)) + beta[channel(i)]);
  const next: D2lState = {
    movingMean: state.movingMean.map((old, c) => momentum * old + (1.0 - momentum) * mean[c]),
    movingVar: state.movingVar.map((old, c) => momentum * old + (1.0 - momentum) * (unbiasedVar ? (variance[c] * M) / (M - 1) : variance[c])),
  };
  return { Y, state: next, mean, var: variance };
}

/** d2l's batch_norm outside training: X_hat = (X - moving_mean) / sqrt(moving_var + eps) */
function d2lInference(X: readonly number[], shape: readonly number[], gamma: readonly number[], beta: readonly number[], state: D2lState, eps: number): number[] {
  const C = shape[1];
  const inner = product(shape.slice(2));
  const channel = (i: number) => Math.floor(i / inner) % C;
  return X.map((x, i) => gamma[channel(i)] * ((x - state.movingMean[channel(i)]) / Math.sqrt(state.movingVar[channel(i)] + eps)) + beta[channel(i)]);
}

const wire = (dtype: Dtype, shape: number[], values: readonly number[]) => ({ dtype, shape, data: bytesOf(dtype, values) });

describe.each<[string, number[], Dtype]>([
  ['2-D [16, 5]', [16, 5], 'float64'],
  ['4-D [4, 3, 6, 6]', [4, 3, 6, 6], 'float64'],
  ['4-D [4, 3, 6, 6] float32', [4, 3, 6, 6], 'float32'],
])('d2l BatchNorm %s beside the service, three training steps', (_name, shape, dtype) => {
  const C = shape[1];
  const M = product(shape) / C;
  const eps = 1e-5;
  // d2l's BatchNorm.__init__: gamma ones, beta zeros, moving_mean zeros, moving_var ones
  const gamma = new Array<number>(C).fill(1);
  const beta = new Array<number>(C).fill(0);
  const round = (xs: readonly number[]) => (dtype === 'float32' ? xs.map(Math.fround) : [...xs]);

  it('running_mean agrees step by step; running_var agrees with σ²·M/(M − 1), not with d2l\'s biased σ²', async () => {
    let d2l: D2lState = { movingMean: new Array(C).fill(0), movingVar: new Array(C).fill(1) };
    let d2lCorrected: D2lState = { ...d2l };
    let runningMean: number[] = [...d2l.movingMean];
    let runningVar: number[] = [...d2l.movingVar];
    const batches: number[][] = [];
    for (let step = 0; step < 3; step++) {
      const X = round(randomValues(700 + step, product(shape), 1 + step, step - 1));
      batches.push(X);
      const body = okBody(await postMsgpack(ctx.app, '/v1/batchnorm', {
        input: wire(dtype, shape, X), training: true, momentum: 0.1,
        running_mean: wire(dtype, [C], runningMean), running_var: wire(dtype, [C], runningVar),
      }));
      const literal = d2lBatchNorm(X, shape, gamma, beta, d2l, eps, 0.9);
      const corrected = d2lBatchNorm(X, shape, gamma, beta, d2lCorrected, eps, 0.9, true);
      d2l = literal.state;
      d2lCorrected = corrected.state;

      expectClose(tensorValues(body.output, dtype, shape), literal.Y, dtype);
      runningMean = tensorValues(body.running_mean, dtype, [C]);
      runningVar = tensorValues(body.running_var, dtype, [C]);
      expectClose(runningMean, d2l.movingMean, dtype);
      expectClose(runningVar, d2lCorrected.movingVar, dtype);
      // the literal class differs by 0.1·σ²/(M − 1) per channel: more than the tolerance, so the factor is really there
      runningVar.forEach((v, c) => {
        const gap = Math.abs(v - d2l.movingVar[c]);
        expect(gap, `step ${step}, channel ${c}`).toBeGreaterThan(0.5 * 0.1 * literal.var[c] / (M - 1));
      });
    }

    // then inference with the fed-back statistics: the same as d2l's eval branch with its corrected moving stats
    const X = round(randomValues(710, product(shape), 2, 0.5));
    const body = okBody(await postMsgpack(ctx.app, '/v1/batchnorm', {
      input: wire(dtype, shape, X), running_mean: wire(dtype, [C], runningMean), running_var: wire(dtype, [C], runningVar),
    }));
    expect(Object.keys(body)).toEqual(['output']);
    expectClose(tensorValues(body.output, dtype, shape), d2lInference(X, shape, gamma, beta, d2lCorrected, eps), dtype);
  });
});
