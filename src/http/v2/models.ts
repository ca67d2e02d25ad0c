// the Open Inference Protocol's models (OIP.md): one per operation of the table, with its tensor
// inputs, outputs and parameters derived from the operation's own fields, never listed again here.
import { OP_NAMES, OPERATIONS, type OpName } from '../../ops/registry.js';
import { serviceError } from '../../errors.js';

/** what marks a tensor among an operation's fields */
const TENSOR_MARK = { 'x-oip-tensor': true };
const isTensor = (schema: Record<string, unknown>) => schema['x-oip-tensor'] === true;

/** inputs in the order OIP.md's table lists them */
const INPUT_ORDER = ['input', 'weight', 'bias', 'residual', 'running_mean', 'running_var'];

export const MODEL_VERSION = '1';
/** the server's name (GET /v2) and every model's platform */
export const PLATFORM = 'tensor-norm-service';
/** the protocol extensions served (GET /v2) */
export const EXTENSIONS = ['binary_tensor_data', 'parameters'];

export interface Model {
  op: OpName;
  inputs: string[];
  outputs: string[];
  /** the operation's options, sent as request parameters */
  parameters: string[];
}

export const MODELS: Readonly<Record<string, Model>> = Object.freeze(Object.fromEntries(OP_NAMES.map((op) => {
  const fields = OPERATIONS[op].fields(TENSOR_MARK);
  const names = Object.keys(fields);
  return [op, {
    op,
    inputs: names.filter((name) => isTensor(fields[name])).sort((a, b) => INPUT_ORDER.indexOf(a) - INPUT_ORDER.indexOf(b)),
    outputs: Object.keys(OPERATIONS[op].responseFields(TENSOR_MARK)),
    parameters: names.filter((name) => !isTensor(fields[name])),
  }];
})));

/** the model a path names; an unknown model or version is a 404 naming it */
export function modelFor(name: string, version: string | undefined): Model {
  const model = Object.hasOwn(MODELS, name) ? MODELS[name] : undefined;
  if (model === undefined) throw serviceError('modelUnknown', name.slice(0, 64), OP_NAMES.join(', '));
  if (version !== undefined && version !== MODEL_VERSION) throw serviceError('modelVersionUnknown', name, version.slice(0, 16), MODEL_VERSION);
  return model;
}

/** GET /v2/models/{model}: datatype FP32 and shape [-1] stand for "any" (the others are accepted too) */
export function modelMetadata(name: string, model: Model) {
  const tensor = (tensorName: string) => ({ name: tensorName, datatype: 'FP32', shape: [-1] });
  return {
    name,
    versions: [MODEL_VERSION],
    platform: PLATFORM,
    inputs: model.inputs.map(tensor),
    outputs: model.outputs.map(tensor),
  };
}
