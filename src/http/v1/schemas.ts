// the /v1 request bodies, derived from the table of operations: what ajv validates and the OpenAPI
// document shows. A schema with a `title` becomes a named component of the document.
import { isDeepStrictEqual } from 'node:util';
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

/**
 * every operation's fields in one item; a field whose default differs by operation loses its default.
 * Fields that differ in anything else cannot share one item schema: items then need validating by op.
 */
function mergedFields(tensor: Schema): Record<string, Schema> {
  const merged: Record<string, Schema> = {};
  for (const op of OP_NAMES) {
    for (const [name, field] of Object.entries(OPERATIONS[op].fields(tensor))) {
      const seen = merged[name];
      if (seen === undefined) merged[name] = field;
      else if (!isDeepStrictEqual(withoutKey(seen, 'default'), withoutKey(field, 'default'))) throw new Error(`batch items: ${name} differs between operations`);
      else if (seen.default !== field.default) merged[name] = withoutKey(seen, 'default');
    }
  }
  return merged;
}

function withoutKey(schema: Schema, key: string): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== key));
}

function batchBody(tensor: Schema) {
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
          properties: { op: { type: 'string', enum: OP_NAMES, description: 'the operation for this item' }, ...mergedFields(tensor) },
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
  return byMediaType(batchBody(jsonTensor), batchBody(msgpackTensor));
}

/** ajv must know the annotation keyword; it validates nothing */
export const ajvKeywords = ['x-msgpack-data'];
