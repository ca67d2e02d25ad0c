// the Open Inference Protocol's worked examples: test/openapi replays every request and checks the
// server answers exactly the documented response.
import type { Example } from '../../ops/operation.js';
import { OP_NAMES, type OpName } from '../../ops/registry.js';

/** a worked inference of the Open Inference Protocol: the request to POST /v2/models/{model}/infer and
 *  the server's answer, as it writes it */
export interface InferExample { model: OpName; summary: string; request: unknown; response: unknown }

export const inferExamples: Readonly<Record<string, InferExample>> = {
  rmsnorm2x4: {
    model: 'rmsnorm',
    summary: 'RMSNorm of a 2×4 FP32 tensor given as nested lists, eps 0, with an id',
    request: { id: 'example-1', parameters: { eps: 0 }, inputs: [{ name: 'input', datatype: 'FP32', shape: [2, 4], data: [[1, 2, 3, 4], [-1, -2, -3, -4]] }] },
    response: {
      model_name: 'rmsnorm', model_version: '1', id: 'example-1',
      outputs: [{
        name: 'output', datatype: 'FP32', shape: [2, 4],
        data: [0.3651483654975891, 0.7302967309951782, 1.095445156097412, 1.4605934619903564, -0.3651483654975891, -0.7302967309951782, -1.095445156097412, -1.4605934619903564],
      }],
    },
  },
  layernormOutputs: {
    model: 'layernorm',
    summary: 'LayerNorm with a weight, FP64 output and stats, asking for output and rstd only',
    request: {
      parameters: { return_stats: true, output_dtype: 'FP64' },
      inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }, { name: 'weight', datatype: 'FP32', shape: [4], data: [1, 1, 2, 2] }],
      outputs: [{ name: 'output' }, { name: 'rstd' }],
    },
    response: {
      model_name: 'layernorm', model_version: '1',
      outputs: [
        { name: 'output', datatype: 'FP64', shape: [1, 4], data: [-1.3416354199689269, -0.447211806656309, 0.894423613312618, 2.6832708399378538] },
        { name: 'rstd', datatype: 'FP32', shape: [1], data: [0.8944236040115356] },
      ],
    },
  },
  batchnormTraining: {
    model: 'batchnorm',
    summary: 'a BatchNorm training step on 4×2: the output and the updated running statistics (momentum 0.1)',
    request: {
      parameters: { training: true, eps: 0 },
      inputs: [
        { name: 'input', datatype: 'FP32', shape: [4, 2], data: [1, 10, 2, 20, 3, 30, 4, 40] },
        { name: 'running_mean', datatype: 'FP32', shape: [2], data: [0, 0] },
        { name: 'running_var', datatype: 'FP32', shape: [2], data: [1, 1] },
      ],
    },
    response: {
      model_name: 'batchnorm', model_version: '1',
      outputs: [
        {
          name: 'output', datatype: 'FP32', shape: [4, 2],
          data: [-1.3416407108306885, -1.341640830039978, -0.4472135901451111, -0.44721361994743347, 0.4472135901451111, 0.44721361994743347, 1.3416407108306885, 1.341640830039978],
        },
        { name: 'running_mean', datatype: 'FP32', shape: [2], data: [0.25, 2.5] },
        { name: 'running_var', datatype: 'FP32', shape: [2], data: [1.0666667222976685, 17.566667556762695] },
      ],
    },
  },
};

/** {"error"} answers of the /v2 routes; the contract test sends the request each summary names */
export const oipErrorExamples: Readonly<Record<number, Record<string, Example>>> = {
  400: {
    unknownParameter: {
      summary: 'POST /v2/models/rmsnorm/infer with a misspelled eps: "parameters": {"epsilon": 0}',
      value: { error: 'parameters.epsilon: unknown field' },
    },
  },
  404: {
    unknownModel: {
      summary: 'GET /v2/models/softmax',
      value: { error: `model softmax: unknown; the models are ${OP_NAMES.join(', ')}` },
    },
  },
};
