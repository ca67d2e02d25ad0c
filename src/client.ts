// a small typed client for the service: msgpack on the wire, typed arrays in and out.
import { Packr, Unpackr } from 'msgpackr';
import type { Dtype } from './codec/dtype.js';
import type { WireTensor } from './codec/read-tensor.js';
import type { Assert, OpBodies, OpName, Same } from './ops/registry.js';

export type { Dtype };

/** float16/bfloat16 data are their raw bit patterns */
export interface Tensor {
  dtype: Dtype;
  shape: number[];
  data: Float32Array | Float64Array | Uint16Array;
}

/** RMSNorm and LayerNorm */
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

export interface RmsNormOptions extends NormOptions {
  /** pRMSNorm: s over the first ⌊n·partial⌋ elements of each row */
  partial?: number;
}

export interface BatchNormOptions {
  channelAxis?: number;
  training?: boolean;
  runningMean?: Tensor;
  runningVar?: Tensor;
  momentum?: number;
  weight?: Tensor;
  bias?: Tensor;
  eps?: number;
  returnStats?: boolean;
  outputDtype?: Dtype;
}

export interface GroupNormOptions {
  numGroups: number;
  weight?: Tensor;
  bias?: Tensor;
  eps?: number;
  returnStats?: boolean;
  outputDtype?: Dtype;
}

// the options above are written out for their readers (a derived type would lose the doc comments),
// and checked here against the operations' own bodies (src/ops), so the build fails when they drift
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;
/** a body's fields but input, camelCased, wire tensors as Tensor */
type OptionsOf<Body> = { [K in keyof Body as K extends 'input' ? never : CamelCase<K & string>]: Body[K] extends WireTensor | undefined ? Tensor : Body[K] };
type OptionsMatch = [
  Assert<Same<RmsNormOptions, OptionsOf<OpBodies['rmsnorm']>>>,
  Assert<Same<NormOptions, OptionsOf<OpBodies['layernorm']>>>,
  Assert<Same<BatchNormOptions, OptionsOf<OpBodies['batchnorm']>>>,
  Assert<Same<GroupNormOptions, OptionsOf<OpBodies['groupnorm']>>>,
  Assert<BatchItem['op'] extends OpName ? true : false>,
];

export interface NormResult {
  output: Tensor;
  residual?: Tensor;
  mean?: Tensor;
  rstd?: Tensor;
  /** BatchNorm training with running statistics sent: the updated ones */
  runningMean?: Tensor;
  runningVar?: Tensor;
}

export type BatchItem = { input: Tensor } & (
  | ({ op: 'rmsnorm' } & RmsNormOptions)
  | ({ op: 'layernorm' } & NormOptions)
  | ({ op: 'batchnorm' } & BatchNormOptions)
  | ({ op: 'groupnorm' } & GroupNormOptions));

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

const isTensor = (v: unknown): v is Tensor => typeof v === 'object' && v !== null && ArrayBuffer.isView((v as Tensor).data);

/** the options' camelCase names as the wire's snake_case fields, tensors as byte views */
function wireFields(options: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    fields[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = isTensor(value) ? wireTensor(value) : value;
  }
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
  const result: Record<string, Tensor> = {};
  for (const [name, tensor] of Object.entries(wire)) result[name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = readTensor(tensor);
  return result as unknown as NormResult;
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

  const run = async (op: string, input: Tensor, opts: object) =>
    readResult((await post(`/v1/${op}`, { input: wireTensor(input), ...wireFields(opts) })) as Record<string, never>);

  return {
    rmsnorm: (input: Tensor, opts: RmsNormOptions = {}): Promise<NormResult> => run('rmsnorm', input, opts),
    layernorm: (input: Tensor, opts: NormOptions = {}): Promise<NormResult> => run('layernorm', input, opts),
    /** inference needs runningMean and runningVar; training answers them updated when sent */
    batchnorm: (input: Tensor, opts: BatchNormOptions = {}): Promise<NormResult> => run('batchnorm', input, opts),
    groupnorm: (input: Tensor, opts: GroupNormOptions): Promise<NormResult> => run('groupnorm', input, opts),
    async batch(items: BatchItem[]): Promise<NormResult[]> {
      const requests = items.map(({ input, ...opts }) => ({ input: wireTensor(input), ...wireFields(opts) }));
      const { results } = (await post('/v1/batch', { requests })) as { results: Record<string, never>[] };
      return results.map(readResult);
    },
  };
}

export type NormClient = ReturnType<typeof createClient>;
