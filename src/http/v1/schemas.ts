// the /v1 request bodies, derived from the table of operations: what ajv validates and the OpenAPI
// document shows. A schema with a `title` becomes a named component of the document.
import { Ajv, type ValidateFunction } from 'ajv';
import { DTYPE_NAMES } from '../../codec/dtype.js';
import { OP_NAMES, OPERATIONS, type OpName } from '../../ops/registry.js';
import type { Schema } from '../../ops/operation.js';
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

/** JSON tensors: data is a list of numbers; non-finite values as strings */
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

function opBody(tensor: Schema, op: OpName) {
  const operation = OPERATIONS[op];
  return { type: 'object', additionalProperties: false, required: [...operation.required], properties: operation.fields(tensor) };
}

/** `suffix` keeps the JSON and msgpack variants apart as named components of the document */
function batchItem(tensor: Schema, op: OpName, suffix: string) {
  const operation = OPERATIONS[op];
  return {
    title: `${op[0].toUpperCase()}${op.slice(1)}Item${suffix}`,
    type: 'object',
    additionalProperties: false,
    required: ['op', ...operation.required],
    properties: { op: { const: op }, ...operation.fields(tensor) },
  };
}

function batchBody(tensor: Schema, suffix: string) {
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
        // each item is checked against its own op's fields alone (the discriminator picks the branch),
        // so an error names the field of that op: requests[0].channel_axis: unknown field
        items: {
          type: 'object',
          // the branch says which fields are allowed; this wrapper only names the discriminator
          additionalProperties: true,
          required: ['op'],
          properties: { op: { type: 'string', enum: OP_NAMES, description: 'the operation for this item' } },
          discriminator: { propertyName: 'op' },
          oneOf: OP_NAMES.map((op) => batchItem(tensor, op, suffix)),
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

export function opBodySchema(op: OpName) {
  return byMediaType(opBody(jsonTensor, op), opBody(msgpackTensor, op));
}

export function batchBodySchema() {
  return byMediaType(batchBody(jsonTensor, ''), batchBody(msgpackTensor, 'Msgpack'));
}

/** an operation's fields as the codec hands them over whatever the encoding (data bin or a list):
 *  what /v2 validates its requests against once they are in /v1's form */
export function opFieldsSchema(op: OpName) {
  return opBody(msgpackTensor, op);
}

/** ajv must know the annotation keywords; they validate nothing */
export const ajvKeywords = ['x-msgpack-data'];

/** a validator of each operation's fields, for the dialects that check a body they built themselves */
export function compileOpValidators(): Record<OpName, ValidateFunction> {
  const ajv = new Ajv({ ...AJV_OPTIONS, keywords: [...AJV_OPTIONS.keywords] });
  return Object.fromEntries(OP_NAMES.map((op) => [op, ajv.compile(opFieldsSchema(op))])) as Record<OpName, ValidateFunction>;
}

/** ajv as the routes use it: nothing coerced, removed or defaulted; the contract checks what was sent */
export const AJV_OPTIONS = {
  coerceTypes: false, removeAdditional: false, useDefaults: false, strictNumbers: true, allErrors: false, discriminator: true, keywords: ajvKeywords,
} as const;
