// a small typed client for the service: msgpack on the wire, typed arrays in and out.
import { Packr, Unpackr } from 'msgpackr';
import type { Dtype } from './codec/dtype.js';

export type { Dtype };

/** float16/bfloat16 data are their raw bit patterns */
export interface Tensor {
  dtype: Dtype;
  shape: number[];
  data: Float32Array | Float64Array | Uint16Array;
}

export interface NormOptions {
  axis?: number;
  weight?: Tensor;
  bias?: Tensor;
  eps?: number;
  epsPlacement?: 'inside' | 'outside';
  weightOffset?: number;
  residual?: Tensor;
  returnStats?: boolean;
  outputDtype?: Dtype;
}

export interface NormResult {
  output: Tensor;
  residual?: Tensor;
  mean?: Tensor;
  rstd?: Tensor;
}

export interface BatchItem extends NormOptions {
  op: 'rmsnorm' | 'layernorm';
  input: Tensor;
}

export interface ClientOptions {
  /** e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  apiKey?: string;
  /** sent as X-Request-Timeout-Ms */
  timeoutMs?: number;
}

/** a non-2xx answer, with the service's error code */
export class NormServiceError extends Error {
  constructor(readonly statusCode: number, readonly code: string, message: string) {
    super(message);
    this.name = 'NormServiceError';
  }
}

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

// msgpackr writes wrong bytes for non-byte typed arrays unless told otherwise: send byte views
function wireTensor(t: Tensor) {
  return { dtype: t.dtype, shape: t.shape, data: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength) };
}

function wireFields(options: NormOptions): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (options.axis !== undefined) fields.axis = options.axis;
  if (options.weight) fields.weight = wireTensor(options.weight);
  if (options.bias) fields.bias = wireTensor(options.bias);
  if (options.eps !== undefined) fields.eps = options.eps;
  if (options.epsPlacement !== undefined) fields.eps_placement = options.epsPlacement;
  if (options.weightOffset !== undefined) fields.weight_offset = options.weightOffset;
  if (options.residual) fields.residual = wireTensor(options.residual);
  if (options.returnStats !== undefined) fields.return_stats = options.returnStats;
  if (options.outputDtype !== undefined) fields.output_dtype = options.outputDtype;
  return fields;
}

/** response bin data may sit at any offset: copy it into a fresh, aligned typed array */
function readTensor(wire: { dtype: Dtype; shape: number[]; data: Uint8Array }): Tensor {
  const bytes = new Uint8Array(wire.data);
  const data = wire.dtype === 'float64' ? new Float64Array(bytes.buffer)
    : wire.dtype === 'float32' ? new Float32Array(bytes.buffer) : new Uint16Array(bytes.buffer);
  return { dtype: wire.dtype, shape: wire.shape, data };
}

function readResult(wire: Record<string, never>): NormResult {
  const result: NormResult = { output: readTensor(wire.output) };
  if (wire.residual) result.residual = readTensor(wire.residual);
  if (wire.mean) result.mean = readTensor(wire.mean);
  if (wire.rstd) result.rstd = readTensor(wire.rstd);
  return result;
}

export function createClient(options: ClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/msgpack', accept: 'application/msgpack' };
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  if (options.timeoutMs !== undefined) headers['x-request-timeout-ms'] = String(options.timeoutMs);

  async function post(path: string, body: unknown): Promise<unknown> {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers, body: packr.pack(body) as Uint8Array<ArrayBuffer> });
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (!response.ok) {
      const error = JSON.parse(Buffer.from(bytes).toString('utf8')) as { code: string; message: string };
      throw new NormServiceError(response.status, error.code, error.message);
    }
    return unpackr.unpack(bytes);
  }

  return {
    async rmsnorm(input: Tensor, opts: NormOptions = {}): Promise<NormResult> {
      return readResult((await post('/v1/rmsnorm', { input: wireTensor(input), ...wireFields(opts) })) as Record<string, never>);
    },
    async layernorm(input: Tensor, opts: NormOptions = {}): Promise<NormResult> {
      return readResult((await post('/v1/layernorm', { input: wireTensor(input), ...wireFields(opts) })) as Record<string, never>);
    },
    async batch(items: BatchItem[]): Promise<NormResult[]> {
      const requests = items.map(({ op, input, ...opts }) => ({ op, input: wireTensor(input), ...wireFields(opts) }));
      const { results } = (await post('/v1/batch', { requests })) as { results: Record<string, never>[] };
      return results.map(readResult);
    },
  };
}

export type NormClient = ReturnType<typeof createClient>;
