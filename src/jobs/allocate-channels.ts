// phase two for BatchNorm: lay out one tensor's work in a shared slab. Training runs two phases, the
// per-tile statistics and then the output, with the merge between them on the main thread;
// inference runs the output phase alone, with μ and r from the running statistics.
import { DTYPES, valueStorage } from '../codec/dtype.js';
import { narrowToBfloat16, narrowToFloat16 } from '../codec/half.js';
import { writeValues, type TensorIn } from '../codec/read-tensor.js';
import { tileGeometry, partialsLength } from '../kernels/channel-tiles.js';
import { prepareChannelsF32, preparedChannelBytes } from '../kernels/channel-params.js';
import { mergeChannel } from '../kernels/channel-stats.js';
import type { SlabSource } from '../memory/slab-carver.js';
import type { ChannelTask, Region } from '../pool/protocol.js';
import type { TensorOut } from '../codec/write-tensor.js';
import { producedOutputs, type ChannelRequest } from './checked-request.js';
import { COST, openJobSlab, outputStorage, placement, placeValues, regionOf, tensorAt, type Job } from './job.js';

/** the regions of a channel job's slab, in this order (openJobSlab's plan) */
const PLAN = { cancel: 0, x: 1, partials: 2, shift: 3, factor: 4, bias: 5, prepared: 6, mean: 7, rstd: 8, runningMean: 9, runningVar: 10 } as const;

const f64 = (r: Region) => new Float64Array(r.memory, r.byteOffset, r.length);

/** a [C] tensor's values as float64 (γ, β, running statistics); `fill` when absent */
function channelValues(t: TensorIn | null, channels: number, fill: number): Float64Array {
  const values = new Float64Array(channels);
  if (t === null) values.fill(fill);
  else writeValues(t, values);
  return values;
}

/** `maxTasks`: the most tasks a phase may be split into; `prefix`: as allocateRowJob's */
export function allocateChannelJob(req: ChannelRequest, slabs: SlabSource, maxTasks: number, prefix: Buffer | null): Job {
  const { channels: C, input } = req;
  const size = input.size;
  const geometry = tileGeometry(req.outer, C, req.inner);
  const valueType = valueStorage(input.dtype);
  // the SIMD kernels (kernels/wasm/channels.wat) take float32 values, float16/bfloat16 widened to
  // them: the statistics always, the output pass when it is float32 (the JS pass rounds float64
  // once to a half dtype). Decided from the request alone, never by the thread or the split, so the
  // answer is the same bits on any number of workers.
  const simdStats = valueType === 'float32';
  const simdApply = simdStats && req.outDtype === 'float32';
  // with SIMD phases only, x is read where it lies, at any byte offset
  const inputPlace = placement(input, valueType, simdApply);
  const updates = req.training && req.runningMean !== null;
  const statBytes = (t: TensorIn | null) => (updates && t !== null ? C * DTYPES[t.dtype].itemsize : 0);
  const hasMean = req.stats.includes('mean');
  const hasRstd = req.stats.includes('rstd');
  const phases = req.training ? 2 : 1;
  // sizes in the order of PLAN
  const laid = openJobSlab(slabs, [
    4 * maxTasks * phases,
    'inPlace' in inputPlace ? 0 : DTYPES[valueType].itemsize * size,
    req.training ? 8 * partialsLength(geometry) : 0,
    8 * C, 8 * C, 8 * C, simdApply ? preparedChannelBytes(C) : 0,
    hasMean ? 4 * C : 0, hasRstd ? 4 * C : 0,
    statBytes(req.runningMean), statBytes(req.runningVar),
  ], prefix, size, size * DTYPES[req.outDtype].itemsize);
  const { slab, y, direct } = laid;
  const { memory } = slab;
  const region = (i: number, length: number) => regionOf(laid, i, length);
  const cancel = region(PLAN.cancel, maxTasks * phases);
  const [x, xSource] = placeValues(inputPlace, () => region(PLAN.x, size), valueType);
  const shift = region(PLAN.shift, C);
  const factor = region(PLAN.factor, C);
  const bias = region(PLAN.bias, C);
  const prepared = simdApply ? laid.offsets[PLAN.prepared] : null;
  const mean = hasMean ? region(PLAN.mean, C) : null;
  const rstd = hasRstd ? region(PLAN.rstd, C) : null;
  f64(bias).set(channelValues(req.bias, C, 0));
  const gamma = channelValues(req.weight, C, 1);

  /** μ and σ² per channel → the output pass's parameters and the answered statistics */
  const setChannels = (mu: Float64Array, variance: Float64Array) => {
    const shiftView = f64(shift);
    const factorView = f64(factor);
    const meanView = mean === null ? null : new Float32Array(memory, mean.byteOffset, C);
    const rstdView = rstd === null ? null : new Float32Array(memory, rstd.byteOffset, C);
    for (let c = 0; c < C; c++) {
      const r = 1 / Math.sqrt(variance[c] + req.eps);
      shiftView[c] = mu[c];
      factorView[c] = r * gamma[c];
      if (meanView !== null) meanView[c] = mu[c];
      if (rstdView !== null) rstdView[c] = r;
    }
    if (prepared !== null) prepareChannelsF32(shiftView, factorView, f64(bias), new Float32Array(memory, prepared, preparedChannelBytes(C) / 4));
  };
  const partials = region(PLAN.partials, req.training ? partialsLength(geometry) : 0);
  const template = (kind: ChannelTask['kind'], source: Region | null): ChannelTask => ({
    kind, tileStart: 0, tileEnd: geometry.tiles, geometry,
    inputDtype: input.dtype, outDtype: req.outDtype,
    x, xSource: source, simd: kind === 'channelStats' ? simdStats : simdApply, prepared, partials,
    shift, factor, bias, y, cancel, slot: 0, fault: null,
  });
  const elementsPerUnit = size / Math.max(1, geometry.tiles);
  const apply = template('channelApply', req.training ? null : xSource);
  const job: Job = {
    request: req,
    slab,
    phases: req.training
      ? [{ task: template('channelStats', xSource), units: geometry.tiles, elementsPerUnit, cost: simdStats ? COST.simd : COST.js },
        { task: { ...apply, slot: maxTasks }, units: geometry.tiles, elementsPerUnit, cost: simdApply ? COST.simd : COST.js }]
      : [{ task: apply, units: geometry.tiles, elementsPerUnit, cost: simdApply ? COST.simd : COST.js }],
    afterPhase: null,
    outputs: [],
    direct,
  };
  const runningOut: [string, TensorIn, Region][] = updates
    ? [['running_mean', req.runningMean!, region(PLAN.runningMean, C)], ['running_var', req.runningVar!, region(PLAN.runningVar, C)]]
    : [];
  const tensors: Record<string, TensorOut> = { output: tensorAt(y, req.outDtype, input.shape, outputStorage(req.outDtype)) };
  for (const [name, t, r] of runningOut) tensors[name] = tensorAt(r, t.dtype, [C], outputStorage(t.dtype));
  if (mean !== null) tensors.mean = tensorAt(mean, 'float32', [C], 'float32');
  if (rstd !== null) tensors.rstd = tensorAt(rstd, 'float32', [C], 'float32');
  job.outputs = producedOutputs(req).map((name) => [name, tensors[name]]);

  if (!req.training) {
    setChannels(channelValues(req.runningMean, C, 0), channelValues(req.runningVar, C, 1));
    return job;
  }
  job.afterPhase = (phase) => {
    if (phase !== 0) return;
    const M = req.outer * req.inner;
    const mu = new Float64Array(C);
    const m2 = new Float64Array(C);
    const biased = new Float64Array(C);
    const merged = new Float64Array(2);
    const tileStats = f64(partials);
    for (let c = 0; c < C; c++) {
      mergeChannel(geometry, tileStats, c, merged);
      mu[c] = merged[0];
      m2[c] = merged[1];
      biased[c] = merged[1] / M;
    }
    setChannels(mu, biased);
    if (!updates) return;
    const m = req.momentum;
    const [meanOut, varOut] = runningOut;
    const oldMean = channelValues(meanOut[1], C, 0);
    const oldVar = channelValues(varOut[1], C, 1);
    for (let c = 0; c < C; c++) {
      oldMean[c] = (1 - m) * oldMean[c] + m * mu[c];
      oldVar[c] = (1 - m) * oldVar[c] + m * (m2[c] / (M - 1)); // unbiased, as PyTorch
    }
    storeAs(meanOut[1].dtype, meanOut[2], oldMean);
    storeAs(varOut[1].dtype, varOut[2], oldVar);
  };
  return job;
}

/** values rounded once to `dtype` into `region` (float16/bfloat16 as bits) */
function storeAs(dtype: TensorIn['dtype'], region: Region, values: Float64Array): void {
  const { memory, byteOffset, length } = region;
  if (dtype === 'float64') new Float64Array(memory, byteOffset, length).set(values);
  else if (dtype === 'float32') new Float32Array(memory, byteOffset, length).set(values);
  else (dtype === 'float16' ? narrowToFloat16 : narrowToBfloat16)(values, new Uint16Array(memory, byteOffset, length));
}
