// what the pipeline computes: a request every check has passed, in the layout the kernels need.
// Row-wise ops (RMSNorm, LayerNorm, GroupNorm) normalize independent rows; BatchNorm normalizes
// each channel across the rows.
import type { Dtype } from '../codec/dtype.js';
import type { TensorIn } from '../codec/read-tensor.js';
import type { RowParams } from '../kernels/row-kernels.js';

/** per-row (or per-channel) statistics a result may carry */
export type StatName = 'mean' | 'rstd';

interface CheckedCommon {
  /** the operation's name, for metrics */
  op: string;
  input: TensorIn;
  /** γ and β: one per element of a row, or one per channel (GroupNorm, BatchNorm) */
  weight: TensorIn | null;
  bias: TensorIn | null;
  eps: number;
  /** the statistics to return, in the order they are answered; empty without return_stats */
  stats: readonly StatName[];
  /** the shape of those statistics */
  statShape: number[];
  outDtype: Dtype;
  /** input came as a msgpack-numpy ndarray: answer in kind */
  numpyForm: boolean;
}

export interface RowRequest extends CheckedCommon {
  layout: 'rows';
  /** the kernel (params.kernel) and the operation's own parameters for it */
  params: RowParams;
  residual: TensorIn | null;
  rows: number;
  n: number;
  epsOutside: boolean;
  weightOffset: number;
}

export interface ChannelRequest extends CheckedCommon {
  layout: 'channels';
  /** the input as [outer, channels, inner], channels on channel_axis */
  outer: number;
  channels: number;
  inner: number;
  training: boolean;
  runningMean: TensorIn | null;
  runningVar: TensorIn | null;
  momentum: number;
}

export type CheckedRequest = RowRequest | ChannelRequest;

/** rows for the metrics: a channel counts as one row of BatchNorm */
export function rowCount(req: CheckedRequest): number {
  return req.layout === 'rows' ? req.rows : req.channels;
}

/** the tensors a request answers with, in answer order: the one rule the allocators and /v2's output checks share */
export function producedOutputs(req: CheckedRequest): string[] {
  const names = ['output'];
  if (req.layout === 'rows' && req.residual !== null) names.push('residual');
  if (req.layout === 'channels' && req.training && req.runningMean !== null) names.push('running_mean', 'running_var');
  return [...names, ...req.stats];
}
