// phase one of a request: every check the schemas cannot express (shapes, axis, dtypes),
// with no memory allocated, so a batch is validated whole before anything is computed.
import { readTensor, type TensorIn, type WireTensor } from '../codec/read-tensor.js';
import { NUMPY_FORM } from '../codec/wire-body.js';
import type { Dtype } from '../codec/dtype.js';
import { serviceError } from '../errors.js';
import type { NormOp } from '../pool/protocol.js';

/** a request body as the schema admits it */
export interface NormBody {
  input: WireTensor;
  axis?: number;
  weight?: WireTensor;
  bias?: WireTensor;
  eps?: number;
  eps_placement?: 'inside' | 'outside';
  weight_offset?: number;
  residual?: WireTensor;
  return_stats?: boolean;
  output_dtype?: Dtype;
}

export interface CheckedRequest {
  op: NormOp;
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
  returnStats: boolean;
  outDtype: Dtype;
  /** input came as a msgpack-numpy ndarray: answer in kind */
  numpyForm: boolean;
}

// the one place the contract's defaults live
export const DEFAULT_EPS: Readonly<Record<NormOp, number>> = { rmsnorm: 1e-6, layernorm: 1e-5 };
export const DEFAULT_AXIS = -1;
export const DEFAULT_WEIGHT_OFFSET = 0;

/** `prefix` is '' for a single request, `requests[3].` inside a batch */
export function checkRequest(op: NormOp, body: NormBody, prefix: string, fromJson: boolean): CheckedRequest {
  const input = readTensor(body.input, `${prefix}input`, fromJson);
  const rank = input.shape.length;
  const axisValue = body.axis ?? DEFAULT_AXIS;
  if (axisValue < -rank || axisValue >= rank) {
    throw serviceError('NORM_ERR_AXIS_RANGE', `${prefix}axis: ${axisValue} is out of range for an input of rank ${rank} (needs ${-rank} ≤ axis < ${rank})`);
  }
  const axis = axisValue < 0 ? axisValue + rank : axisValue;
  const rowShape = input.shape.slice(0, axis);
  const normShape = input.shape.slice(axis);
  const n = product(normShape);
  if (n === 0) {
    throw serviceError('NORM_ERR_EMPTY_ROW', `${prefix}input.shape: the normalized dimensions [${normShape.join(', ')}] hold no elements`);
  }
  const weight = optionalTensor(body.weight, `${prefix}weight`, normShape, fromJson);
  const bias = optionalTensor(body.bias, `${prefix}bias`, normShape, fromJson);
  const residual = optionalTensor(body.residual, `${prefix}residual`, input.shape, fromJson);
  if (residual !== null && residual.dtype !== input.dtype) {
    throw serviceError('NORM_ERR_SHAPE_MISMATCH', `${prefix}residual.dtype: ${residual.dtype} must match input.dtype ${input.dtype}`);
  }
  return {
    op, input, weight, bias, residual, rowShape,
    rows: product(rowShape),
    n,
    eps: body.eps ?? DEFAULT_EPS[op],
    epsOutside: body.eps_placement === 'outside',
    weightOffset: body.weight_offset ?? DEFAULT_WEIGHT_OFFSET,
    returnStats: body.return_stats ?? false,
    outDtype: body.output_dtype ?? input.dtype,
    numpyForm: (body.input as { [NUMPY_FORM]?: boolean })[NUMPY_FORM] === true,
  };
}

function optionalTensor(wire: WireTensor | undefined, path: string, expected: number[], fromJson: boolean): TensorIn | null {
  if (wire === undefined) return null;
  const tensor = readTensor(wire, path, fromJson);
  if (!sameShape(tensor.shape, expected)) {
    throw serviceError('NORM_ERR_SHAPE_MISMATCH', `${path}.shape: [${tensor.shape.join(', ')}] must be [${expected.join(', ')}]`);
  }
  return tensor;
}

function product(dims: number[]): number {
  let p = 1;
  for (const d of dims) p *= d;
  return p;
}

function sameShape(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
