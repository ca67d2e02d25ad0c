// OIP requests and answers in tests (OIP.md), written apart from src/http/v2: whole-body requests,
// the answer's JSON with its bare NaN / Infinity tokens, binary framing both ways, {"error"} bodies.
import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import type { Response } from '../helpers/http.js';
import { bytesOf, ITEMSIZE, product, randomValues, valuesFromBytes, type Dtype } from '../helpers/tensors.js';

export type Datatype = 'FP32' | 'FP64' | 'FP16' | 'BF16';
export const DATATYPES: readonly Datatype[] = ['FP32', 'FP64', 'FP16', 'BF16'];
export const DTYPE_OF: Readonly<Record<Datatype, Dtype>> = { FP32: 'float32', FP64: 'float64', FP16: 'float16', BF16: 'bfloat16' };

type Headers = Record<string, string>;

/** small inputs for requests whose values do not matter */
export const X = [{ name: 'input', datatype: 'FP32', shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] }];
export const GN = [{ name: 'input', datatype: 'FP32', shape: [2, 4, 2], data: randomValues(3, 16) }];

/** a POST to a model's infer path; objects are stringified, strings and buffers sent as they are, with no Content-Type unless given */
export function infer(app: FastifyInstance, model: string, body: unknown, headers: Headers = {}, url = `/v2/models/${model}/infer`): Promise<Response> {
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return app.inject({ method: 'POST', url, headers, payload } as InjectOptions);
}

/** JSON requests say so, as KServe clients do (the service does not consult it) */
export const JSON_TYPE: Headers = { 'content-type': 'application/json' };

const BARE = ['NaN', 'Infinity', '-Infinity'];
const MARK = '\u0000bare:';

/** the answer's JSON: bare NaN / Infinity / -Infinity outside strings become those numbers */
export function parseAnswerJson(text: string): any {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i];
      else if (c === '"') inString = false;
      continue;
    }
    const token = BARE.find((t) => text.startsWith(t, i));
    if (token !== undefined) {
      out += JSON.stringify(MARK + token);
      i += token.length - 1;
      continue;
    }
    if (c === '"') inString = true;
    out += c;
  }
  return JSON.parse(out, (_key, value) => (typeof value === 'string' && value.startsWith(MARK) ? Number(value.slice(MARK.length)) : value));
}

export interface OutputTensor {
  name: string;
  datatype: Datatype;
  shape: number[];
  values: number[];
  binary: boolean;
}

export interface Answer {
  /** the JSON part exactly as sent (with bare tokens parsed) */
  json: any;
  /** each output's values, from its data list or its bytes */
  outputs: Map<string, OutputTensor>;
}

/** a 200 answer, JSON or binary, read as OIP.md lays it out; fails on anything else */
export function readAnswer(res: Response): Answer {
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  const type = String(res.headers['content-type']);
  const raw = res.rawPayload;
  let json: any;
  let rest: Buffer;
  if (type === 'application/octet-stream') {
    const h = res.headers['inference-header-content-length'];
    expect(typeof h, 'Inference-Header-Content-Length of a binary answer').toBe('string');
    expect(String(h)).toMatch(/^[1-9]\d*$/);
    json = parseAnswerJson(raw.subarray(0, Number(h)).toString('utf8'));
    rest = raw.subarray(Number(h));
  } else {
    expect(type).toMatch(/^application\/json(;|$)/);
    expect(res.headers['inference-header-content-length']).toBeUndefined();
    json = parseAnswerJson(raw.toString('utf8'));
    rest = Buffer.alloc(0);
  }
  const outputs = new Map<string, OutputTensor>();
  let offset = 0;
  for (const o of json.outputs as any[]) {
    const dtype = DTYPE_OF[o.datatype as Datatype];
    expect(dtype, `datatype of ${o.name}`).toBeDefined();
    const count = product(o.shape);
    if (o.parameters?.binary_data_size !== undefined) {
      expect(o.data, `${o.name} has binary_data_size and data`).toBeUndefined();
      expect(Object.keys(o)).toEqual(['name', 'datatype', 'shape', 'parameters']);
      expect(o.parameters).toEqual({ binary_data_size: count * ITEMSIZE[dtype] });
      const bytes = rest.subarray(offset, offset + o.parameters.binary_data_size);
      offset += o.parameters.binary_data_size;
      outputs.set(o.name, { name: o.name, datatype: o.datatype, shape: o.shape, values: valuesFromBytes(dtype, bytes), binary: true });
    } else {
      expect(Object.keys(o)).toEqual(['name', 'datatype', 'shape', 'data']);
      expect(o.data.every((v: unknown) => typeof v === 'number'), `${o.name} data is a flat list of numbers`).toBe(true);
      expect(o.data.length).toBe(count);
      outputs.set(o.name, { name: o.name, datatype: o.datatype, shape: o.shape, values: o.data, binary: false });
    }
  }
  expect(offset, 'the binary outputs fill the body after the JSON header exactly').toBe(rest.length);
  return { json, outputs };
}

/** an error answer: its status, a JSON content type, and exactly {"error": message} */
export function expectOipError(res: Response, status: number, message: string | RegExp): void {
  expect(res.headers['content-type']).toMatch(/^application\/json(;|$)/);
  expect(res.json()).toEqual({ error: typeof message === 'string' ? message : expect.stringMatching(message) });
  expect(res.statusCode).toBe(status);
}

/** `values` in the nesting of `shape` (row-major) */
export function nest(values: readonly number[], shape: readonly number[]): unknown {
  if (shape.length <= 1) return [...values];
  const inner = product(shape.slice(1));
  return Array.from({ length: shape[0] }, (_, i) => nest(values.slice(i * inner, (i + 1) * inner), shape.slice(1)));
}

/** a JSON input tensor; values as float64 numbers, rounded once by the service */
export function jsonInput(name: string, datatype: Datatype, shape: number[], values: readonly number[]) {
  return { name, datatype, shape, data: [...values] };
}

export interface BinaryInput {
  name: string;
  datatype: Datatype;
  shape: number[];
  bytes: Uint8Array;
}

/** a binary input: its little-endian bytes, each value rounded once to the datatype */
export function binaryInput(name: string, datatype: Datatype, shape: number[], values: readonly number[]): BinaryInput {
  return { name, datatype, shape, bytes: bytesOf(DTYPE_OF[datatype], values) };
}

/** the JSON header (binary inputs listed with binary_data_size) followed by their bytes in JSON order */
export function binaryBody(header: Record<string, unknown>, inputs: readonly (BinaryInput | Record<string, unknown>)[]): { payload: Buffer; headerLength: number } {
  const blocks: Uint8Array[] = [];
  const listed = inputs.map((input) => {
    if (!('bytes' in input)) return input;
    const { bytes, ...rest } = input as BinaryInput;
    blocks.push(bytes);
    return { ...rest, parameters: { binary_data_size: bytes.byteLength } };
  });
  const json = Buffer.from(JSON.stringify({ ...header, inputs: listed }));
  return { payload: Buffer.concat([json, ...blocks]), headerLength: json.length };
}

/** BF16 bytes as a client makes them: the upper half of each float32 pattern, truncated */
export function bf16Truncated(values: readonly number[]): { bytes: Uint8Array; values: number[] } {
  const f32 = new Float32Array(values);
  const words = new Uint32Array(f32.buffer);
  const bytes = new Uint8Array(values.length * 2);
  const view = new DataView(bytes.buffer);
  const kept: number[] = [];
  words.forEach((w, i) => {
    view.setUint16(i * 2, w >>> 16, true);
    kept.push(new Float32Array(new Uint32Array([w & 0xffff0000]).buffer)[0]);
  });
  return { bytes, values: kept };
}
