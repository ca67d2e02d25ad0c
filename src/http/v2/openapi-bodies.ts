// the bodies of the Open Inference Protocol's infer route (OIP.md, docs/api.md §12) as JSON Schema:
// the request (documentation only, see openapi-routes.ts) and the answer. Each model's parameters are
// derived from its operation's own fields, as src/http/v2/models.ts derives its inputs and outputs.
import { isDeepStrictEqual } from 'node:util';
import { OP_NAMES, OPERATIONS } from '../../ops/registry.js';
import type { Schema } from '../../ops/operation.js';
import { DATATYPES } from './datatypes.js';
import { MODELS, MODEL_VERSION } from './models.js';

const datatype = { type: 'string', enum: Object.keys(DATATYPES) };
const shape = { type: 'array', description: 'row-major shape, rank 1 to 8', items: { type: 'integer', minimum: 0 }, minItems: 1, maxItems: 8 };
const BARE = 'JSON numbers; a non-finite value is one of the bare tokens NaN, Infinity, -Infinity (as Python\'s json writes them), which JSON Schema cannot show';
const nonFinite = { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] };
const id = { type: 'string', description: 'echoed in the answer' };
const modelName = { type: 'string', enum: [...OP_NAMES] };
const modelVersion = { type: 'string', enum: [MODEL_VERSION] };

/** what only OIP has, for every model */
const OIP_PARAMETERS: Readonly<Record<string, Schema>> = {
  binary_data_output: { type: 'boolean', default: false, description: 'every model: send every output binary unless its outputs[].parameters.binary_data says otherwise' },
  timeout: {
    type: 'integer',
    minimum: 1,
    description: 'every model: a deadline in microseconds (a whole-number float counts), rounded up to milliseconds and capped at REQUEST_TIMEOUT_MS; with X-Request-Timeout-Ms too, the shorter wins',
  },
};

const outputDtype = { type: 'string', enum: Object.keys(DATATYPES), description: "datatype of output; default the input's datatype" };

/** one schema per parameter name over every model that takes it, its description prefixed with those models */
function modelParameters(): Record<string, Schema> {
  const seen = new Map<string, { op: string; schema: Schema }[]>();
  for (const op of OP_NAMES) {
    const fields = OPERATIONS[op].fields({});
    for (const name of MODELS[op].parameters) seen.set(name, [...(seen.get(name) ?? []), { op, schema: name === 'output_dtype' ? outputDtype : fields[name] }]);
  }
  const out: Record<string, Schema> = {};
  for (const [name, uses] of seen) {
    const core = ({ description: _d, default: _v, ...rest }: Schema) => rest;
    if (uses.some(({ schema }) => !isDeepStrictEqual(core(schema), core(uses[0].schema)))) throw new Error(`OpenAPI: parameter ${name} differs between models`);
    const byText = new Map<string, string[]>();
    for (const { op, schema } of uses) byText.set(String(schema.description), [...(byText.get(String(schema.description)) ?? []), op]);
    const described = [...byText].map(([text, ops]) => `${ops.join(', ')}: ${text}`).join('. ');
    const defaults = uses.map(({ schema }) => schema.default);
    const same = defaults.every((d) => d === defaults[0]);
    out[name] = {
      ...core(uses[0].schema),
      ...(same && defaults[0] !== undefined ? { default: defaults[0] } : {}),
      description: same ? described : `${described}. Default by model: ${uses.map(({ op, schema }) => `${op} ${String(schema.default)}`).join(', ')}`,
    };
  }
  return { ...out, ...OIP_PARAMETERS };
}

const parameters = {
  title: 'OipInferenceParameters',
  type: 'object',
  additionalProperties: false,
  properties: modelParameters(),
};

const binarySize = (what: string, required: string[]) => ({
  type: 'object',
  additionalProperties: false,
  ...(required.length > 0 ? { required } : {}),
  properties: { binary_data_size: { type: 'integer', minimum: 0, description: `the bytes of this ${what} after the JSON header: prod(shape) × the datatype's size` } },
});

const requestInput = {
  title: 'OipRequestInput',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'datatype', 'shape'],
  properties: {
    name: { type: 'string', description: "one of the model's inputs (GET /v2/models/{model}), each at most once" },
    datatype,
    shape,
    data: {
      type: 'array',
      description: `prod(shape) values, row-major, flat or nested in the shape's lists: ${BARE}, or those strings`,
      items: { anyOf: [{ type: 'number' }, nonFinite, { type: 'array', description: 'a nested list' }] },
    },
    parameters: binarySize('input', []),
  },
  // data inline, or its bytes after the JSON header: one of them
  oneOf: [{ required: ['data'] }, { required: ['parameters'], properties: { parameters: binarySize('input', ['binary_data_size']) } }],
};

const requestOutput = {
  title: 'OipRequestOutput',
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', description: "one of the model's outputs that this request produces, each at most once" },
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: { binary_data: { type: 'boolean', description: 'send this output binary; default parameters.binary_data_output' } },
    },
  },
};

export const inferenceRequest = {
  title: 'OipInferenceRequest',
  type: 'object',
  additionalProperties: false,
  required: ['inputs'],
  properties: {
    id,
    model_name: { ...modelName, description: "allowed when it is the path's model" },
    model_version: modelVersion,
    parameters,
    inputs: { type: 'array', description: 'input is required; the others as the model takes them', items: requestInput },
    outputs: { type: 'array', description: 'the outputs to answer with, in this order; without it, every output the request produces', items: requestOutput },
  },
};

const responseOutput = {
  title: 'OipResponseOutput',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'datatype', 'shape'],
  properties: {
    name: { type: 'string' },
    datatype,
    shape: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1, maxItems: 8 },
    data: { type: 'array', description: `prod(shape) values, flat, row-major: ${BARE}`, items: { type: 'number' } },
    parameters: binarySize('output', ['binary_data_size']),
  },
  // a binary output (only in an application/octet-stream answer) has parameters instead of data
  oneOf: [{ required: ['data'] }, { required: ['parameters'] }],
};

export const inferenceResponse = {
  title: 'OipInferenceResponse',
  type: 'object',
  additionalProperties: false,
  required: ['model_name', 'model_version', 'outputs'],
  properties: { model_name: modelName, model_version: modelVersion, id, outputs: { type: 'array', items: responseOutput } },
};

/** the body of a binary request or answer: the JSON header, then the tensors' bytes */
export const binaryBody = (what: 'request' | 'answer') => ({
  type: 'string',
  format: 'binary',
  description: what === 'request'
    ? 'Inference-Header-Content-Length bytes of JSON (an OipInferenceRequest), then the raw little-endian bytes of every input with parameters.binary_data_size, in the order of the inputs; the blocks must add up to the body exactly. BF16 is the upper half of the float32 pattern.'
    : 'Inference-Header-Content-Length bytes of JSON (an OipInferenceResponse whose binary outputs have parameters.binary_data_size instead of data), then the raw little-endian bytes of those outputs, in the order listed.',
});

/** what a named component of this dialect says about itself (tidy.ts) */
export const oipComponentDescriptions: Readonly<Record<string, string>> = {
  OipInferenceRequest: 'An Open Inference Protocol inference request: the JSON body, or the JSON header of a binary body.',
  OipInferenceParameters: "The model's options under their /v1 names, plus binary_data_output and timeout. A parameter the path's model does not take is a 400 naming it; nothing is coerced.",
  OipRequestInput: 'An input tensor: data inline, or parameters.binary_data_size with its bytes after the JSON header (not both).',
  OipRequestOutput: 'An output asked for, and whether to send it binary.',
  OipInferenceResponse: 'The answer: the JSON body, or the JSON header of a binary answer.',
  OipResponseOutput: 'An output tensor: data inline, or, in a binary answer, parameters.binary_data_size with its bytes after the JSON header.',
};
