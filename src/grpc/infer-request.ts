// a ModelInferRequest (OIP.md "gRPC", "Inference") → the operation's fields in /v1's form, as REST's
// reader makes them (http/v2/infer-request.ts), which the shared pipeline then checks. Read in two
// steps: the message's own checks (INVALID_ARGUMENT comes before admission's UNAVAILABLE), then every
// input's values copied into one shared slab, where the message counts against the tensor memory
// budget (one that does not fit is UNAVAILABLE) and the kernels read them in place.
import { DTYPES, type Dtype } from '../codec/dtype.js';
import { serviceError } from '../errors.js';
import type { Lease } from '../memory/lease.js';
import type { TensorMemory } from '../memory/tensor-memory.js';
import { OP_NAMES, OPERATIONS, type OpName } from '../ops/registry.js';
import { DATATYPE_NAMES, DATATYPE_OF, DATATYPES } from '../http/v2/datatypes.js';
import type { InferRequest, RequestedOutput } from '../http/v2/infer-request.js';
import type { Model } from '../http/v2/models.js';
import { align } from '../jobs/job.js';

/** an InferParameter as proto-loader decodes it (grpc/definitions.ts: oneofs named, longs as numbers;
 *  only the choice sent is present) */
export interface InferParameter {
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'double_param' | 'uint64_param';
  bool_param?: boolean;
  int64_param?: number;
  string_param?: string;
  double_param?: number;
  uint64_param?: number;
}

type Parameters = Record<string, InferParameter>;

interface Contents { [field: string]: unknown[] | undefined }

interface InputTensor { name: string; datatype: string; shape: number[]; parameters: Parameters; contents: Contents | null }

export interface ModelInferRequest {
  model_name: string;
  model_version: string;
  id: string;
  parameters: Parameters;
  inputs: InputTensor[];
  outputs: { name: string; parameters: Parameters }[];
  raw_input_contents: Buffer[];
  /** set when the bytes were not a ModelInferRequest: why (grpc/infer-codec.ts) */
  malformed?: string;
}

const invalid = (path: string, what: string) => serviceError('fieldInvalid', path, what);

/** the typed contents field of each datatype that has one */
const TYPED_FIELD: Readonly<Partial<Record<Dtype, string>>> = { float32: 'fp32_contents', float64: 'fp64_contents' };

export interface CheckedInput { name: string; dtype: Dtype; shape: number[]; bytes: number; values: ArrayLike<number> | Buffer }

/** the request checked, its tensors' data still to be placed (placeInputs) */
export interface ReadInfer { infer: InferRequest; inputs: CheckedInput[] }

export function readGrpcInferRequest(model: Model, message: ModelInferRequest): ReadInfer {
  const infer: InferRequest = { body: {}, id: message.id || undefined, outputs: null, binaryDefault: false, timeoutMs: null, shapes: {} };
  readParameters(message.parameters, model, infer);
  const inputs = readInputs(message, model, infer);
  // data is set by placeInputs; the fields' schema does not look at it
  for (const { name, dtype, shape } of inputs) infer.body[name] = { dtype, shape, data: null };
  if (message.outputs.length > 0) infer.outputs = readOutputs(message.outputs, model);
  return { infer, inputs };
}

function readInputs(message: ModelInferRequest, model: Model, request: InferRequest): CheckedInput[] {
  if (message.inputs.length === 0) throw serviceError('fieldMissing', 'inputs');
  const raw = message.raw_input_contents;
  const checked = message.inputs.map((input, i): CheckedInput => {
    const { name, datatype, shape } = input;
    if (!model.inputs.includes(name)) throw invalid(`inputs[${i}].name`, `"${name.slice(0, 32)}" is not an input of this model (${model.inputs.join(', ')})`);
    if (Object.hasOwn(request.shapes, name)) throw invalid(`inputs[${i}].name`, `input ${name} is given twice`);
    if (!Object.hasOwn(DATATYPES, datatype)) throw invalid(`${name} datatype ${datatype.slice(0, 16)}`, `must be one of ${DATATYPE_NAMES}`);
    if (shape.length < 1 || shape.length > 8 || shape.some((d) => !Number.isSafeInteger(d) || d < 0)) throw invalid(`${name} shape`, 'must be a list of 1 to 8 integers ≥ 0');
    for (const key of Object.keys(input.parameters)) throw serviceError('fieldUnknown', `${name} parameters.${key}`);
    request.shapes[name] = shape;
    const dtype = DATATYPES[datatype];
    const size = shape.reduce((p, d) => p * d, 1);
    const bytes = size * DTYPES[dtype].itemsize;
    if (raw.length > 0) {
      if (input.contents !== null) throw invalid(`${name} contents`, 'an input takes no contents in a request with raw_input_contents');
      return { name, dtype, shape, bytes, values: raw[i] };
    }
    return { name, dtype, shape, bytes, values: typedContents(input, dtype, size) };
  });
  if (raw.length > 0) {
    if (raw.length !== checked.length) throw invalid('raw_input_contents', `${raw.length} entries for ${checked.length} inputs; send one per input, in the order of inputs`);
    for (const { name, dtype, shape, bytes, values } of checked) {
      const length = (values as Buffer).length;
      if (length !== bytes) throw invalid(`${name} raw_input_contents`, `${length} bytes, but shape [${shape.join(', ')}] of ${DATATYPE_OF[dtype]} needs ${bytes}`);
    }
  }
  return checked;
}

/** an input's values from its typed contents: fp32_contents for FP32, fp64_contents for FP64 */
function typedContents(input: InputTensor, dtype: Dtype, size: number): ArrayLike<number> {
  const { name, contents } = input;
  if (contents === null) throw serviceError('fieldMissing', `${name} data (raw_input_contents or contents)`);
  const field = TYPED_FIELD[dtype];
  if (field === undefined) throw invalid(`${name} contents`, `${DATATYPE_OF[dtype]} has no typed contents; send its bytes in raw_input_contents`);
  for (const [other, values] of Object.entries(contents)) {
    if (other !== field && values !== undefined && values.length > 0) throw invalid(`${name} contents.${other}`, `a ${DATATYPE_OF[dtype]} input's values go in ${field}`);
  }
  const values = (contents[field] ?? []) as number[];
  if (values.length !== size) throw serviceError('dataCount', name, values.length, 'values', input.shape.join(', '), size);
  return values;
}

/** every input's values into one slab held by `lease`; throws the 503 when the tensor memory is full */
export function placeInputs({ infer, inputs }: ReadInfer, slabs: TensorMemory, lease: Lease): void {
  let total = 0;
  for (const input of inputs) total += align(input.bytes) + 8;
  const slab = slabs.acquire(total);
  lease.add(slab);
  let offset = slab.offset;
  for (const { name, dtype, shape, bytes, values } of inputs) {
    // raw bytes land at the phase (mod 8) they have in grpc-js's message buffer: V8 copies into shared
    // memory byte by byte otherwise (2.2 GB/s against 14.8 in phase, scripts/measure-shared-copy.mjs).
    // The kernels read them at any alignment (float32 in place, the others loaded by memory.copy)
    offset = Buffer.isBuffer(values) ? offset + ((((values.byteOffset - offset) % 8) + 8) % 8) : align(offset);
    const data = new Uint8Array(slab.memory, offset, bytes);
    if (Buffer.isBuffer(values)) data.set(values);
    else if (dtype === 'float32') new Float32Array(slab.memory, offset, bytes / 4).set(values);
    else new Float64Array(slab.memory, offset, bytes / 8).set(values);
    (infer.body[name] as { data: Uint8Array }).data = data;
    offset += align(bytes);
  }
}

/** the request's parameters: the operation's options (each a choice that fits its type), timeout and
 *  binary_data_output; any other key is refused */
/** each operation's option types (`integer`, `number`, `boolean`, `string`), from its fields' schemas */
const OPTION_TYPES = Object.fromEntries(OP_NAMES.map((op) => [op, Object.fromEntries(
  Object.entries(OPERATIONS[op].fields({}) as Record<string, { type?: string }>).map(([name, schema]) => [name, schema.type]),
)])) as Record<OpName, Record<string, string | undefined>>;

function readParameters(parameters: Parameters, model: Model, request: InferRequest): void {
  const types = OPTION_TYPES[model.op];
  for (const [name, parameter] of Object.entries(parameters)) {
    const path = `parameters.${name}`;
    if (name === 'binary_data_output') {
      boolean(parameter, path); // gRPC answers are always raw
    } else if (name === 'timeout') {
      const micros = integer(parameter, path);
      if (micros < 1) throw invalid(path, 'must be a whole number of microseconds ≥ 1');
      request.timeoutMs = Math.ceil(micros / 1000);
    } else if (model.parameters.includes(name)) {
      request.body[name] = optionValue(parameter, path, name, types[name]);
    } else {
      throw serviceError('fieldUnknown', path);
    }
  }
}

function optionValue(parameter: InferParameter, path: string, name: string, type: string | undefined): unknown {
  if (type === 'integer') return integer(parameter, path);
  if (type === 'number') return number(parameter, path);
  if (type === 'boolean') return boolean(parameter, path);
  const text = choice(parameter, path, 'string_param', 'a string (string_param)') as string;
  if (name !== 'output_dtype') return text;
  if (!Object.hasOwn(DATATYPES, text)) throw invalid(path, `must be one of ${DATATYPE_NAMES}`);
  return DATATYPES[text];
}

function choice(parameter: InferParameter, path: string, wanted: string, what: string): unknown {
  if (parameter.parameter_choice !== wanted) throw serviceError('fieldType', path, what);
  return parameter[wanted as keyof InferParameter];
}

const boolean = (parameter: InferParameter, path: string) => choice(parameter, path, 'bool_param', 'a boolean (bool_param)') as boolean;

function number(parameter: InferParameter, path: string): number {
  const which = parameter.parameter_choice;
  const what = 'a number (int64_param, uint64_param or a finite double_param)';
  if (which !== 'int64_param' && which !== 'uint64_param' && which !== 'double_param') throw serviceError('fieldType', path, what);
  const value = parameter[which]!;
  if (!Number.isFinite(value)) throw serviceError('fieldType', path, what);
  return value;
}

function integer(parameter: InferParameter, path: string): number {
  const value = number(parameter, path);
  if (!Number.isInteger(value)) throw serviceError('fieldType', path, 'an integer (int64_param, uint64_param or a whole double_param)');
  return value;
}

function readOutputs(outputs: ModelInferRequest['outputs'], model: Model): RequestedOutput[] {
  const seen = new Set<string>();
  return outputs.map(({ name, parameters }, i) => {
    if (!model.outputs.includes(name)) throw invalid(`outputs[${i}].name`, `"${name.slice(0, 32)}" is not an output of this model (${model.outputs.join(', ')})`);
    if (seen.has(name)) throw invalid(`outputs[${i}].name`, `output ${name} is asked for twice`);
    seen.add(name);
    for (const key of Object.keys(parameters)) throw serviceError('fieldUnknown', `${name} parameters.${key}`);
    return { name, binary: null };
  });
}
