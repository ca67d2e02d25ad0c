// the family of row-wise normalizations (API.md §2): RMSNorm and LayerNorm share their fields,
// their checks and their layout; each gives its kernel's parameters, its eps, its statistics, its
// own fields and its docs.
import { readTensor, type WireTensor } from '../codec/read-tensor.js';
import { DTYPE_NAMES, type Dtype } from '../codec/dtype.js';
import { serviceError } from '../errors.js';
import type { RowRequest, StatName } from '../jobs/checked-request.js';
import type { RowParams } from '../kernels/row-kernels.js';
import type { Example, Operation, Schema } from './operation.js';
import { isNumpyForm, optionalTensor, product } from './tensor-checks.js';

/** a body as the schema admits it (the family's fields; an operation may add its own) */
export interface RowNormBody {
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

export interface RowNormSpec<B extends RowNormBody> {
  name: string;
  defaultEps: number;
  /** the statistics return_stats adds, in answer order */
  stats: readonly StatName[];
  /** its fields beyond the family's, last in the body's schema */
  ownFields: Record<string, Schema>;
  /** its kernel's parameters for rows of n elements, from its own fields; `prefix` as check's */
  params(body: B, n: number, prefix: string): RowParams;
  summary: string;
  description: string;
  examples: { request: Record<string, Example>; response: Record<string, Example> };
}

// the one place the contract's defaults live (eps is the operation's own)
const DEFAULT_AXIS = -1;
const DEFAULT_WEIGHT_OFFSET = 0;

const DTYPE_FIELD = { type: 'string', enum: DTYPE_NAMES };

const STAT_DOCS: Readonly<Record<StatName, string>> = {
  mean: 'with return_stats: float32 per-row mean, of shape input.shape[:axis], or [1] where that is empty',
  rstd: 'with return_stats: float32 per-row r, of shape input.shape[:axis], or [1] where that is empty',
};

const X2X4 = [1, 2, 3, 4, -1, -2, -3, -4];

/** the worked example of a row-wise op: its 2×4 float32 input [1..4, -1..-4], eps 0, with stats, and
 *  the float32 answer the server writes (`row`: the first row's output, the second is its negation) */
export function example2x4(name: string, title: string, summary: string, row: number[], stats: Partial<Record<StatName, number[]>>) {
  const key = `${name}2x4`;
  const tensor = (shape: number[], data: number[]) => ({ dtype: 'float32', shape, data });
  return {
    request: { [key]: { summary: `${title} of a 2×4 float32 tensor, eps 0, with stats`, value: { input: tensor([2, 4], X2X4), eps: 0, return_stats: true } } },
    response: {
      [key]: {
        summary,
        value: {
          output: tensor([2, 4], [...row, ...row.map((v) => -v)]),
          ...Object.fromEntries(Object.entries(stats).map(([stat, data]) => [stat, tensor([2], data)])),
        },
      },
    },
  };
}

export function rowNormOperation<B extends RowNormBody>(spec: RowNormSpec<B>): Operation {
  return {
    name: spec.name,
    summary: spec.summary,
    description: spec.description,
    examples: spec.examples,
    required: ['input'],
    // descriptions are annotations: ajv ignores them, the OpenAPI document shows them
    fields: (tensor: Schema) => ({
      input: { ...tensor, description: 'the tensor to normalize, rank 1 to 8' },
      axis: {
        type: 'integer', default: DEFAULT_AXIS,
        description: 'normalize over the dimensions axis … rank-1; every index over the dimensions before it is one row. -rank ≤ axis < rank, negative counts from the end',
      },
      weight: { ...tensor, description: 'γ, of shape input.shape[axis:] exactly, any dtype; default all ones' },
      bias: { ...tensor, description: 'β, of shape input.shape[axis:] exactly, any dtype; default all zeros' },
      eps: {
        type: 'number', minimum: 0,
        description: 'finite, ≥ 0 (0 is allowed); default 1e-6 for rmsnorm, 1e-5 for layernorm',
        default: spec.defaultEps,
      },
      eps_placement: {
        type: 'string', enum: ['inside', 'outside'], default: 'inside',
        description: '"inside": r = 1/sqrt(s + eps); "outside": r = 1/(sqrt(s) + eps)',
      },
      weight_offset: { type: 'number', default: DEFAULT_WEIGHT_OFFSET, description: 'finite; the scale is weight_offset + γ (Gemma-style models send 1)' },
      residual: {
        ...tensor,
        description: 'same shape and dtype as input: the operation normalizes h = input + residual, rounded to the input dtype, and returns h',
      },
      return_stats: { type: 'boolean', default: false, description: 'also return per-row rstd (and mean for layernorm)' },
      output_dtype: { ...DTYPE_FIELD, description: "dtype of output; default the input's dtype" },
      ...spec.ownFields,
    }),
    responseFields: (tensor: Schema) => ({
      output: { ...tensor, description: "input's shape, in output_dtype" },
      residual: { ...tensor, description: 'only when residual was sent: h = input + residual, rounded to the input dtype' },
      ...Object.fromEntries(spec.stats.map((stat) => [stat, { ...tensor, description: STAT_DOCS[stat] }])),
    }),
    check: (body, path, fromJson) => checkRowNorm(spec, body as unknown as B, path, fromJson),
  };
}

function checkRowNorm<B extends RowNormBody>(spec: RowNormSpec<B>, body: B, prefix: string, fromJson: boolean): RowRequest {
  const input = readTensor(body.input, `${prefix}input`, fromJson);
  const rank = input.shape.length;
  const axisValue = body.axis ?? DEFAULT_AXIS;
  if (axisValue < -rank || axisValue >= rank) {
    throw serviceError('axisRange', `${prefix}axis`, axisValue, rank, -rank, rank);
  }
  const axis = axisValue < 0 ? axisValue + rank : axisValue;
  const rowShape = input.shape.slice(0, axis);
  const normShape = input.shape.slice(axis);
  const n = product(normShape);
  if (n === 0) {
    throw serviceError('emptyRow', `${prefix}input.shape`, normShape.join(', '));
  }
  const params = spec.params(body, n, prefix);
  const weight = optionalTensor(body.weight, `${prefix}weight`, normShape, fromJson);
  const bias = optionalTensor(body.bias, `${prefix}bias`, normShape, fromJson);
  const residual = optionalTensor(body.residual, `${prefix}residual`, input.shape, fromJson);
  if (residual !== null && residual.dtype !== input.dtype) {
    throw serviceError('dtypeMismatch', `${prefix}residual`, residual.dtype, input.dtype);
  }
  return {
    layout: 'rows',
    op: spec.name,
    params,
    input, weight, bias, residual,
    statShape: rowShape.length === 0 ? [1] : rowShape,
    rows: product(rowShape),
    n,
    eps: body.eps ?? spec.defaultEps,
    epsOutside: body.eps_placement === 'outside',
    weightOffset: body.weight_offset ?? DEFAULT_WEIGHT_OFFSET,
    stats: body.return_stats === true ? spec.stats : [],
    outDtype: body.output_dtype ?? input.dtype,
    numpyForm: isNumpyForm(body.input),
  };
}
