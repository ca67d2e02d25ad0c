// what the pipeline computes: a request every check has passed, in the layout the kernels need.
import type { Dtype } from '../codec/dtype.js';
import type { TensorIn } from '../codec/read-tensor.js';
import type { RowKernel } from '../pool/protocol.js';

/** per-row statistics a result may carry */
export type StatName = 'mean' | 'rstd';

export interface CheckedRequest {
  /** the operation's name, for metrics */
  op: string;
  kernel: RowKernel;
  input: TensorIn;
  weight: TensorIn | null;
  bias: TensorIn | null;
  residual: TensorIn | null;
  /** shape of the leading (row) dimensions, input.shape[:axis] */
  rowShape: number[];
  rows: number;
  n: number;
  eps: number;
  epsOutside: boolean;
  weightOffset: number;
  /** the statistics to return, in the order they are answered; empty without return_stats */
  stats: readonly StatName[];
  outDtype: Dtype;
  /** input came as a msgpack-numpy ndarray: answer in kind */
  numpyForm: boolean;
}
