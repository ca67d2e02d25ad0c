// GroupNorm (API.md §9): channels at axis 1 split into G groups; each group of each sample is one row,
// normalized as LayerNorm's, then y = (x − μ)·r·γ_c + β_c with c each element's own channel.
import { readTensor, type WireTensor } from '../codec/read-tensor.js';
import type { Dtype } from '../codec/dtype.js';
import { serviceError } from '../errors.js';
import type { RowRequest } from '../jobs/checked-request.js';
import { channelFields, checkRank, DEFAULT_CHANNEL_EPS, statFields } from './channel-fields.js';
import type { Example, Operation, Schema } from './operation.js';
import { isNumpyForm, optionalTensor, product } from './tensor-checks.js';

export interface GroupNormBody {
  input: WireTensor;
  num_groups: number;
  weight?: WireTensor;
  bias?: WireTensor;
  eps?: number;
  return_stats?: boolean;
  output_dtype?: Dtype;
}

function check(body: GroupNormBody, prefix: string, fromJson: boolean): RowRequest {
  const input = readTensor(body.input, `${prefix}input`, fromJson);
  const { shape } = input;
  checkRank(shape, `${prefix}input.shape`, 'groupnorm');
  const [N, C] = shape;
  const G = body.num_groups;
  if (C % G !== 0) throw serviceError('groupsDivide', `${prefix}num_groups`, G, C);
  const channelRun = product(shape.slice(2));
  const n = (C / G) * channelRun;
  if (N > 0 && n === 0) throw serviceError('emptyRow', `${prefix}input.shape`, [C / G, ...shape.slice(2)].join(', '));
  return {
    layout: 'rows',
    op: 'groupnorm',
    params: { kernel: 'groupnorm', channelRun, groups: G },
    input,
    weight: optionalTensor(body.weight, `${prefix}weight`, [C], fromJson),
    bias: optionalTensor(body.bias, `${prefix}bias`, [C], fromJson),
    residual: null,
    eps: body.eps ?? DEFAULT_CHANNEL_EPS,
    epsOutside: false,
    weightOffset: 0,
    stats: body.return_stats === true ? ['mean', 'rstd'] : [],
    statShape: [N, G],
    rows: N * G,
    n,
    outDtype: body.output_dtype ?? input.dtype,
    numpyForm: isNumpyForm(body.input),
  };
}

const tensor = (shape: number[], data: number[]) => ({ dtype: 'float32', shape, data });

// float32 results, as the server writes them
const EXAMPLES: { request: Record<string, Example>; response: Record<string, Example> } = {
  request: {
    groupnorm1x4x2: {
      summary: 'GroupNorm of a [1, 4, 2] float32 tensor in 2 groups, per-channel γ and β, eps 0, with stats',
      value: {
        input: tensor([1, 4, 2], [1, 2, 3, 4, 5, 6, 7, 8]), num_groups: 2, eps: 0, return_stats: true,
        weight: tensor([4], [1, 2, 1, 2]), bias: tensor([4], [0, 0, 0.5, 0.5]),
      },
    },
  },
  response: {
    groupnorm1x4x2: {
      summary: 'each group ±[1.3416, 0.4472] before its channels\' γ and β; mean [2.5, 6.5], rstd 1/sqrt(1.25)',
      value: {
        output: tensor([1, 4, 2], [
          -1.3416407108306885, -0.4472135901451111, 0.8944271802902222, 2.683281421661377,
          -0.8416407108306885, 0.052786409854888916, 1.3944271802902222, 3.183281421661377]),
        mean: tensor([1, 2], [2.5, 6.5]),
        rstd: tensor([1, 2], [0.8944271802902222, 0.8944271802902222]),
      },
    },
  },
};

export const groupnorm: Operation = {
  name: 'groupnorm',
  summary: 'GroupNorm (and InstanceNorm) of every group of every sample',
  description: 'Input [N, C, d₁, …], channels at axis 1 split into num_groups groups G. Row (n, g) is the (C/G)·d₁·… elements of channels g·C/G … (g+1)·C/G − 1 of sample n: μ = mean, σ² = biased variance (two-pass), r = 1/sqrt(σ² + eps), y = (x − μ)·r·γ_c + β_c with c each element\'s own channel. InstanceNorm is num_groups = C; num_groups = 1 is a LayerNorm over [C, d₁, …] with a per-channel affine. Computed in float64, rounded once to output_dtype. N = 0 gives an empty output; otherwise a row of zero elements is a 400.',
  required: ['input', 'num_groups'],
  fields: (tensor: Schema) => ({
    input: { ...tensor, description: 'the tensor to normalize, [N, C, d₁, …], rank 2 to 8' },
    num_groups: { type: 'integer', minimum: 1, description: 'G ≥ 1, dividing C' },
    ...channelFields(tensor, 'mean and rstd per group, float32 of shape [N, G]'),
  }),
  responseFields: (tensor: Schema) => ({
    output: { ...tensor, description: "input's shape, in output_dtype" },
    ...statFields(tensor, '[N, G]'),
  }),
  check: (body, path, fromJson) => check(body as unknown as GroupNormBody, path, fromJson),
  examples: EXAMPLES,
};
