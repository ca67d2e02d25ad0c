// what BatchNorm and GroupNorm share: per-channel γ and β, eps, statistics and output dtype.
import { DTYPE_NAMES } from '../codec/dtype.js';
import { serviceError } from '../errors.js';
import type { Schema } from './operation.js';

export const DEFAULT_CHANNEL_EPS = 1e-5;

/** the fields both take; `stats` says what return_stats adds */
export function channelFields(tensor: Schema, stats: string): Record<string, Schema> {
  return {
    weight: { ...tensor, description: 'γ, one per channel: shape [C], any dtype; default all ones' },
    bias: { ...tensor, description: 'β, one per channel: shape [C], any dtype; default all zeros' },
    eps: { type: 'number', minimum: 0, default: DEFAULT_CHANNEL_EPS, description: 'finite, ≥ 0 (0 is allowed); r = 1/sqrt(σ² + eps)' },
    return_stats: { type: 'boolean', default: false, description: `also return ${stats}` },
    output_dtype: { type: 'string', enum: DTYPE_NAMES, description: "dtype of output; default the input's dtype" },
  };
}

export function statFields(tensor: Schema, shape: string): Record<string, Schema> {
  return {
    mean: { ...tensor, description: `with return_stats: float32 μ used, of shape ${shape}` },
    rstd: { ...tensor, description: `with return_stats: float32 r used, of shape ${shape}` },
  };
}

/** rank ≥ 2, as both need a channel axis beside another */
export function checkRank(shape: readonly number[], path: string, op: string): void {
  if (shape.length < 2) throw serviceError('rankTooLow', path, shape.length, op);
}
