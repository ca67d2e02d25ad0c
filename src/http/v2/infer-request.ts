// an OIP inference request (OIP.md "Inference", "Binary tensor data") → the operation's fields in
// /v1's form, which the shared pipeline then checks like any /v1 body. Binary inputs stay where the
// body put them in shared memory: their fields are views, never copies.
import { DTYPES } from '../../codec/dtype.js';
import { serviceError } from '../../errors.js';
import { DATATYPE_NAMES, DATATYPES } from './datatypes.js';
import { MODEL_VERSION, type Model } from './models.js';

export interface RequestedOutput { name: string; binary: boolean | null }

export interface InferRequest {
  /** the operation's fields, as a /v1 body */
  body: Record<string, unknown>;
  id: string | undefined;
  /** the outputs asked for, in order; null: every output the request produces */
  outputs: RequestedOutput[] | null;
  /** parameters.binary_data_output */
  binaryDefault: boolean;
  /** parameters.timeout, in ms, rounded up */
  timeoutMs: number | null;
  /** each input's shape, for messages */
  shapes: Record<string, number[]>;
}

const TOP_LEVEL = new Set(['id', 'parameters', 'inputs', 'outputs', 'model_name', 'model_version']);
const MAX_NESTING = 8; // a tensor's rank is at most 8

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (path: string, what: string) => serviceError('fieldInvalid', path, what);

/** `binary`: the bytes after the JSON header (empty without Inference-Header-Content-Length) */
export function readInferRequest(modelName: string, model: Model, header: unknown, binary: Uint8Array): InferRequest {
  if (!isObject(header)) throw serviceError('bodyInvalid', 'must be a JSON object');
  for (const key of Object.keys(header)) if (!TOP_LEVEL.has(key)) throw serviceError('fieldUnknown', key);
  if (header.model_name !== undefined && header.model_name !== modelName) throw invalid('model_name', `must be "${modelName}", the model of the path`);
  if (header.model_version !== undefined && header.model_version !== MODEL_VERSION) throw invalid('model_version', `must be "${MODEL_VERSION}"`);
  if (header.id !== undefined && typeof header.id !== 'string') throw serviceError('fieldType', 'id', 'string');
  const request: InferRequest = { body: {}, id: header.id as string | undefined, outputs: null, binaryDefault: false, timeoutMs: null, shapes: {} };
  readParameters(header.parameters, model, request);
  readInputs(header.inputs, model, binary, request);
  if (header.outputs !== undefined) request.outputs = readOutputs(header.outputs, model);
  return request;
}

function readParameters(parameters: unknown, model: Model, request: InferRequest): void {
  if (parameters === undefined) return;
  if (!isObject(parameters)) throw serviceError('fieldType', 'parameters', 'object');
  for (const [name, value] of Object.entries(parameters)) {
    const path = `parameters.${name}`;
    if (name === 'binary_data_output') {
      if (typeof value !== 'boolean') throw serviceError('fieldType', path, 'boolean');
      request.binaryDefault = value;
    } else if (name === 'timeout') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid(path, 'must be a whole number of microseconds ≥ 1');
      request.timeoutMs = Math.ceil(value / 1000);
    } else if (name === 'output_dtype' && model.parameters.includes(name)) {
      if (typeof value !== 'string' || !Object.hasOwn(DATATYPES, value)) throw invalid(path, `must be one of ${DATATYPE_NAMES}`);
      request.body.output_dtype = DATATYPES[value];
    } else if (model.parameters.includes(name)) {
      request.body[name] = value; // checked with the operation's other fields
    } else {
      throw serviceError('fieldUnknown', path);
    }
  }
}

function readInputs(inputs: unknown, model: Model, binary: Uint8Array, request: InferRequest): void {
  if (inputs === undefined) throw serviceError('fieldMissing', 'inputs');
  if (!Array.isArray(inputs)) throw serviceError('fieldType', 'inputs', 'array');
  let offset = 0;
  inputs.forEach((input, i) => {
    const at = `inputs[${i}]`;
    if (!isObject(input)) throw serviceError('fieldType', at, 'object');
    for (const key of Object.keys(input)) if (!['name', 'datatype', 'shape', 'data', 'parameters'].includes(key)) throw serviceError('fieldUnknown', `${at}.${key}`);
    const { name, datatype } = input;
    if (typeof name !== 'string') throw serviceError('fieldType', `${at}.name`, 'string');
    if (!model.inputs.includes(name)) throw invalid(`${at}.name`, `"${name.slice(0, 32)}" is not an input of this model (${model.inputs.join(', ')})`);
    if (Object.hasOwn(request.body, name)) throw invalid(`${at}.name`, `input ${name} is given twice`);
    if (datatype === undefined) throw serviceError('fieldMissing', `${name} datatype`);
    if (typeof datatype !== 'string' || !Object.hasOwn(DATATYPES, datatype)) throw invalid(`${name} datatype ${String(datatype).slice(0, 16)}`, `must be one of ${DATATYPE_NAMES}`);
    if (!Array.isArray(input.shape) || input.shape.some((d) => typeof d !== 'number' || !Number.isInteger(d) || d < 0) || input.shape.length < 1 || input.shape.length > 8) {
      throw invalid(`${name} shape`, 'must be a list of 1 to 8 integers ≥ 0');
    }
    const dtype = DATATYPES[datatype];
    // a copy: the header may be a kept one, frozen (kept-header.ts), and slicing a frozen array takes
    // V8's slow path (100 ns against 15)
    const shape = [...(input.shape as number[])];
    request.shapes[name] = shape;
    const size = binarySize(input.parameters, name);
    if (size !== null) {
      if (input.data !== undefined) throw invalid(`${name} data`, 'an input with binary_data_size takes no data');
      const needed = shape.reduce((p, d) => p * d, 1) * DTYPES[dtype].itemsize;
      if (size !== needed) throw invalid(`${name} binary_data_size ${size}`, `shape [${shape.join(', ')}] of ${datatype} needs ${needed} bytes`);
      if (offset + size > binary.length) throw invalid('Inference-Header-Content-Length', `the binary data ends before input ${name}'s ${size} bytes`);
      request.body[name] = { dtype, shape, data: binary.subarray(offset, offset + size) };
      offset += size;
    } else {
      if (input.data === undefined) throw serviceError('fieldMissing', `${name} data`);
      request.body[name] = { dtype, shape, data: flatten(input.data, `${name} data`) };
    }
  });
  if (offset !== binary.length) throw invalid('Inference-Header-Content-Length', `${binary.length} bytes follow the JSON header, but the inputs' binary_data_size add up to ${offset}`);
}

/** an input's parameters: binary_data_size alone */
function binarySize(parameters: unknown, name: string): number | null {
  if (parameters === undefined) return null;
  if (!isObject(parameters)) throw serviceError('fieldType', `${name} parameters`, 'object');
  for (const key of Object.keys(parameters)) if (key !== 'binary_data_size') throw serviceError('fieldUnknown', `${name} parameters.${key}`);
  const size = parameters.binary_data_size;
  if (size === undefined) return null;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) throw invalid(`${name} parameters.binary_data_size`, 'must be an integer ≥ 0');
  return size;
}

/** flat or nested lists of numbers → one flat list, row-major (the tensor reader checks the values) */
function flatten(data: unknown, path: string): unknown[] {
  if (!Array.isArray(data)) throw invalid(path, 'must be a list of numbers (flat or nested)');
  if (!data.some(Array.isArray)) return data;
  const flat: unknown[] = [];
  const walk = (list: unknown[], depth: number) => {
    if (depth > MAX_NESTING) throw invalid(path, `nested deeper than ${MAX_NESTING} levels`);
    for (const item of list) {
      if (Array.isArray(item)) walk(item, depth + 1);
      else flat.push(item);
    }
  };
  walk(data, 1);
  return flat;
}

function readOutputs(outputs: unknown, model: Model): RequestedOutput[] {
  if (!Array.isArray(outputs)) throw serviceError('fieldType', 'outputs', 'array');
  const seen = new Set<string>();
  return outputs.map((output, i) => {
    const at = `outputs[${i}]`;
    if (!isObject(output)) throw serviceError('fieldType', at, 'object');
    for (const key of Object.keys(output)) if (key !== 'name' && key !== 'parameters') throw serviceError('fieldUnknown', `${at}.${key}`);
    const { name, parameters } = output;
    if (typeof name !== 'string') throw serviceError('fieldType', `${at}.name`, 'string');
    if (!model.outputs.includes(name)) throw invalid(`${at}.name`, `"${name.slice(0, 32)}" is not an output of this model (${model.outputs.join(', ')})`);
    if (seen.has(name)) throw invalid(`${at}.name`, `output ${name} is asked for twice`);
    seen.add(name);
    let binary: boolean | null = null;
    if (parameters !== undefined) {
      if (!isObject(parameters)) throw serviceError('fieldType', `${at}.parameters`, 'object');
      for (const key of Object.keys(parameters)) if (key !== 'binary_data') throw serviceError('fieldUnknown', `${name} parameters.${key}`);
      if (parameters.binary_data !== undefined) {
        if (typeof parameters.binary_data !== 'boolean') throw serviceError('fieldType', `${name} parameters.binary_data`, 'boolean');
        binary = parameters.binary_data;
      }
    }
    return { name, binary };
  });
}
