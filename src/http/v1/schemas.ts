// the request and response schemas: validation (ajv) and the OpenAPI document come from here.
import { DTYPE_NAMES } from '../../codec/dtype.js';
import type { NormOp } from '../../pool/protocol.js';
import { JSON_TYPE, MSGPACK_TYPES } from '../media-types.js';

const NON_FINITE_NAMES = ['NaN', 'Infinity', '-Infinity'];

const shapeSchema = {
  type: 'array',
  description: 'row-major shape, rank 1 to 8',
  items: { type: 'integer', minimum: 0 },
  minItems: 1,
  maxItems: 8,
};

const dtypeSchema = { type: 'string', enum: DTYPE_NAMES };

/** JSON tensors: data is a list of numbers; non-finite values as strings (the title names it in the OpenAPI document) */
export const jsonTensor = {
  title: 'Tensor',
  type: 'object',
  additionalProperties: false,
  required: ['shape', 'data'],
  properties: {
    dtype: { ...dtypeSchema, default: 'float32' },
    shape: shapeSchema,
    data: {
      type: 'array',
      description: 'prod(shape) numbers, row-major',
      items: { anyOf: [{ type: 'number' }, { type: 'string', enum: NON_FINITE_NAMES }] },
    },
  },
};

/**
 * msgpack tensors: data is bin (raw little-endian elements), a list of numbers, or a msgpackr
 * Float32Array/Float64Array extension; the codec checks which, since JSON Schema has no type for bytes.
 * msgpack-numpy ndarray maps are turned into this form before validation.
 */
const msgpackTensor = {
  type: 'object',
  additionalProperties: false,
  required: ['shape', 'data'],
  properties: {
    dtype: { ...dtypeSchema, description: 'required when data is binary; float32 for a list' },
    shape: shapeSchema,
    data: { 'x-msgpack-data': true, description: 'bin of prod(shape) × itemsize bytes, or a list of prod(shape) numbers' },
  },
};

// descriptions are annotations: ajv ignores them, the OpenAPI document shows them
function normFields(tensor: object, op: NormOp | null) {
  return {
    input: { ...tensor, description: 'the tensor to normalize, rank 1 to 8' },
    axis: {
      type: 'integer', default: -1,
      description: 'normalize over the dimensions axis … rank-1; every index over the dimensions before it is one row. -rank ≤ axis < rank, negative counts from the end',
    },
    weight: { ...tensor, description: 'γ, of shape input.shape[axis:] exactly, any dtype; default all ones' },
    bias: { ...tensor, description: 'β, of shape input.shape[axis:] exactly, any dtype; default all zeros' },
    eps: {
      type: 'number', minimum: 0,
      description: 'finite, ≥ 0 (0 is allowed); default 1e-6 for rmsnorm, 1e-5 for layernorm',
      ...(op === null ? {} : { default: op === 'rmsnorm' ? 1e-6 : 1e-5 }),
    },
    eps_placement: {
      type: 'string', enum: ['inside', 'outside'], default: 'inside',
      description: '"inside": r = 1/sqrt(s + eps); "outside": r = 1/(sqrt(s) + eps)',
    },
    weight_offset: { type: 'number', default: 0, description: 'finite; the scale is weight_offset + γ (Gemma-style models send 1)' },
    residual: {
      ...tensor,
      description: 'same shape and dtype as input: the operation normalizes h = input + residual, rounded to the input dtype, and returns h',
    },
    return_stats: { type: 'boolean', default: false, description: 'also return per-row rstd (and mean for layernorm)' },
    output_dtype: { ...dtypeSchema, description: "dtype of output; default the input's dtype" },
  };
}

function normBody(tensor: object, op: NormOp) {
  return { type: 'object', additionalProperties: false, required: ['input'], properties: normFields(tensor, op) };
}

function batchBody(tensor: object) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['requests'],
    properties: {
      requests: {
        type: 'array',
        description: 'one §2 request per item, with its op; if any item is invalid the whole batch is a 400 naming it (requests[3].weight: …) and nothing is computed',
        minItems: 1,
        maxItems: 1024,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['op', 'input'],
          properties: { op: { type: 'string', enum: ['rmsnorm', 'layernorm'], description: 'the operation for this item' }, ...normFields(tensor, null) },
        },
      },
    },
  };
}

function byMediaType(json: object, msgpack: object) {
  const content: Record<string, { schema: object }> = { [JSON_TYPE]: { schema: json } };
  for (const type of MSGPACK_TYPES) content[type] = { schema: msgpack };
  return { content };
}

export function normBodySchema(op: NormOp) {
  return byMediaType(normBody(jsonTensor, op), normBody(msgpackTensor, op));
}

export function batchBodySchema() {
  return byMediaType(batchBody(jsonTensor), batchBody(msgpackTensor));
}

/** ajv must know the annotation keyword; it validates nothing */
export const ajvKeywords = ['x-msgpack-data'];
