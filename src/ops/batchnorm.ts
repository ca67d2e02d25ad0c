// BatchNorm (API.md §8): statistics per channel taken across the rest of the tensor (training) or
// given as running statistics (inference); y = (x − μ_c)·r_c·γ_c + β_c. Training answers the updated
// running statistics, PyTorch's momentum and unbiased variance.
import { readTensor, type WireTensor } from '../codec/read-tensor.js';
import type { Dtype } from '../codec/dtype.js';
import { serviceError } from '../errors.js';
import type { ChannelRequest } from '../jobs/checked-request.js';
import { channelFields, checkRank, DEFAULT_CHANNEL_EPS, statFields } from './channel-fields.js';
import type { Example, Operation, Schema } from './operation.js';
import { isNumpyForm, optionalTensor, product } from './tensor-checks.js';

export interface BatchNormBody {
  input: WireTensor;
  channel_axis?: number;
  training?: boolean;
  running_mean?: WireTensor;
  running_var?: WireTensor;
  momentum?: number;
  weight?: WireTensor;
  bias?: WireTensor;
  eps?: number;
  return_stats?: boolean;
  output_dtype?: Dtype;
}

const DEFAULT_CHANNEL_AXIS = 1;
const DEFAULT_MOMENTUM = 0.1;

/** both running statistics, or (in training only) neither; the missing one is named */
function checkRunningPair(body: BatchNormBody, training: boolean, prefix: string): void {
  const hasMean = body.running_mean !== undefined;
  const hasVar = body.running_var !== undefined;
  if (!training && !hasMean) throw serviceError('pairMissing', `${prefix}running_mean`, 'training is false');
  if (!training && !hasVar) throw serviceError('pairMissing', `${prefix}running_var`, 'training is false');
  if (hasMean && !hasVar) throw serviceError('pairMissing', `${prefix}running_var`, 'running_mean is sent');
  if (hasVar && !hasMean) throw serviceError('pairMissing', `${prefix}running_mean`, 'running_var is sent');
}

function check(body: BatchNormBody, prefix: string, fromJson: boolean): ChannelRequest {
  const input = readTensor(body.input, `${prefix}input`, fromJson);
  const { shape } = input;
  const rank = shape.length;
  checkRank(shape, `${prefix}input.shape`, 'batchnorm');
  const axisValue = body.channel_axis ?? DEFAULT_CHANNEL_AXIS;
  if (axisValue < -rank || axisValue >= rank) throw serviceError('axisRange', `${prefix}channel_axis`, axisValue, rank, -rank, rank);
  const axis = axisValue < 0 ? axisValue + rank : axisValue;
  const training = body.training ?? false;
  checkRunningPair(body, training, prefix);
  const C = shape[axis];
  const perChannel = (wire: WireTensor | undefined, name: string) => optionalTensor(wire, `${prefix}${name}`, [C], fromJson);
  const runningMean = perChannel(body.running_mean, 'running_mean');
  const runningVar = perChannel(body.running_var, 'running_var');
  const weight = perChannel(body.weight, 'weight');
  const bias = perChannel(body.bias, 'bias');
  const outer = product(shape.slice(0, axis));
  const inner = product(shape.slice(axis + 1));
  // no variance from one value or none; with no channel there is nothing to estimate
  if (training && C > 0 && outer * inner <= 1) throw serviceError('tooFewValues', `${prefix}input.shape`, shape.join(', '), outer * inner);
  return {
    layout: 'channels',
    op: 'batchnorm',
    input, weight, bias, runningMean, runningVar,
    outer, channels: C, inner,
    training,
    momentum: body.momentum ?? DEFAULT_MOMENTUM,
    eps: body.eps ?? DEFAULT_CHANNEL_EPS,
    stats: body.return_stats === true ? ['mean', 'rstd'] : [],
    statShape: [C],
    outDtype: body.output_dtype ?? input.dtype,
    numpyForm: isNumpyForm(body.input),
  };
}

const tensor = (shape: number[], data: number[]) => ({ dtype: 'float32', shape, data });

// float32 results, as the server writes them
const EXAMPLES: { request: Record<string, Example>; response: Record<string, Example> } = {
  request: {
    batchnorm4x2: {
      summary: 'BatchNorm training step on a 4×2 float32 batch, eps 0, with running statistics and stats',
      value: {
        input: tensor([4, 2], [1, 10, 2, 20, 3, 30, 4, 40]), training: true, eps: 0, return_stats: true,
        running_mean: tensor([2], [0, 0]), running_var: tensor([2], [1, 1]),
      },
    },
  },
  response: {
    batchnorm4x2: {
      summary: 'both columns → ±[1.3416, 0.4472]; running_mean 0.1·μ, running_var 0.9 + 0.1·(unbiased variance)',
      value: {
        output: tensor([4, 2], [
          -1.3416407108306885, -1.341640830039978, -0.4472135901451111, -0.44721361994743347,
          0.4472135901451111, 0.44721361994743347, 1.3416407108306885, 1.341640830039978]),
        running_mean: tensor([2], [0.25, 2.5]),
        running_var: tensor([2], [1.0666667222976685, 17.566667556762695]),
        mean: tensor([2], [2.5, 25]),
        rstd: tensor([2], [0.8944271802902222, 0.08944272249937057]),
      },
    },
  },
};

export const batchnorm: Operation = {
  name: 'batchnorm',
  summary: 'BatchNorm: per-channel statistics across the batch (training) or running statistics (inference)',
  description: 'For channel c (index c on channel_axis), its group is the M = size / C elements with that index. training: μ_c = mean of the group, σ²_c = its biased variance, and with running statistics sent the answer carries running_mean = (1 − m)·running_mean + m·μ_c and running_var = (1 − m)·running_var + m·σ²_c·M/(M − 1) (PyTorch\'s momentum m and unbiased variance), each in its own dtype; M ≤ 1 is a 400. Inference (training false): μ_c = running_mean_c, σ²_c = running_var_c. Then r_c = 1/sqrt(σ²_c + eps), y = (x − μ_c)·r_c·γ_c + β_c, computed in float64 and rounded once to output_dtype. The input is cut into fixed blocks whose statistics are merged in a fixed order (Chan et al.), so the answer is bit-for-bit the same whatever the number of workers. C = 0 gives an empty output.',
  required: ['input'],
  fields: (t: Schema) => ({
    input: { ...t, description: 'the tensor to normalize, rank 2 to 8, e.g. [N, C], [N, C, L], [N, C, H, W]' },
    channel_axis: {
      type: 'integer', default: DEFAULT_CHANNEL_AXIS,
      description: 'the dimension holding the C channels, -rank ≤ channel_axis < rank (negative counts from the end; -1 for channels-last)',
    },
    training: { type: 'boolean', default: false, description: 'true: normalize with this batch\'s statistics (and update the running ones); false: with the running statistics' },
    running_mean: { ...t, description: 'shape [C], any dtype; required (with running_var) when training is false; optional in training, both or neither, and then answered updated' },
    running_var: { ...t, description: 'shape [C], any dtype; as running_mean' },
    momentum: { type: 'number', minimum: 0, maximum: 1, default: DEFAULT_MOMENTUM, description: 'PyTorch\'s convention: new = (1 − momentum)·old + momentum·batch' },
    ...channelFields(t, 'mean and rstd per channel, float32 of shape [C]'),
  }),
  responseFields: (t: Schema) => ({
    output: { ...t, description: "input's shape, in output_dtype" },
    running_mean: { ...t, description: 'training with running statistics sent: the updated running_mean, in its dtype' },
    running_var: { ...t, description: 'training with running statistics sent: the updated running_var (unbiased batch variance), in its dtype' },
    ...statFields(t, '[C]'),
  }),
  check: (body, path, fromJson) => check(body as unknown as BatchNormBody, path, fromJson),
  examples: EXAMPLES,
};
