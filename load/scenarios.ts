// the load scenarios: request bodies, and the spot check of a response against the float64
// reference (service), against the input tensor (echo), or against the body sent (floor).
import { Packr, Unpackr } from 'msgpackr';
import { bfloat16Bits, bfloat16Value, compareValues, randomRows, referenceRows, type Op } from './reference.js';

/** `oip`: the Open Inference Protocol's binary form on /v2 (JSON header, then the raw tensor bytes) */
export type Encoding = 'msgpack' | 'json' | 'oip';
/** the row-wise ops, plus BatchNorm in training mode over the columns of [rows, n] */
export type LoadOp = Op | 'batchnorm';
export type Target = 'service' | 'echo' | 'floor';
type Dtype = 'float32' | 'bfloat16';

/** one input tensor of a request (a batch has 64) */
interface Part { rows: number; n: number; dtype: Dtype }

export interface Scenario {
  /** e.g. `rmsnorm/medium` */
  id: string;
  op: LoadOp;
  name: string;
  label: string;
  path: string;
  encoding: Encoding;
  /** what the request asks the answer in (Accept): its own encoding unless the scenario says */
  answer: Encoding;
  parts: Part[];
  /** input tensor bytes per request (as the dtype stores them), what MiB/s counts */
  tensorBytes: number;
  /** requests per run in --short mode */
  shortAmount: number;
  /** concurrent connections unless --connections says otherwise: enough to keep 2 CPUs busy
   *  without queueing seconds of 16 MiB bodies */
  connections: number;
  /** other load sent on its own connections while this scenario is measured; its requests are
   *  measured alone too, right before (load/mixed.ts) */
  beside: Scenario | null;
}

export interface Sample {
  body: Buffer;
  /** request headers of this body: its media type, or OIP's header length (its client sends no type) */
  headers: Record<string, string>;
  /** null when the response is right, else what is wrong with it */
  check(status: number, response: Buffer, target: Target): string | null;
}

interface Shape {
  name: string; label: string; parts: Part[]; encoding: Encoding; batch: boolean; shortAmount: number; connections: number;
  /** the ops it runs; rmsnorm and layernorm unless it says */
  ops?: LoadOp[];
  answer?: Encoding;
  beside?: Shape;
}

const SMALL: Part[] = [{ rows: 1, n: 768, dtype: 'float32' }];
const LARGE: Part[] = [{ rows: 1024, n: 4096, dtype: 'float32' }];

// issue 23: each answer about 80 MB of JSON text, which the service encodes itself
const LARGE_AS_JSON: Shape = { name: 'large-as-json', label: '1024×4096 float32, msgpack (16 MiB), answered as JSON', parts: LARGE, encoding: 'msgpack', answer: 'json', batch: false, shortAmount: 2, connections: 8 };

const SHAPES: Shape[] = [
  { name: 'small', label: '1×768 float32, msgpack', parts: SMALL, encoding: 'msgpack', batch: false, shortAmount: 50, connections: 16 },
  { name: 'medium', label: '32×4096 float32, msgpack (512 KiB)', parts: [{ rows: 32, n: 4096, dtype: 'float32' }], encoding: 'msgpack', batch: false, shortAmount: 20, connections: 8 },
  { name: 'large', label: '1024×4096 float32, msgpack (16 MiB)', parts: LARGE, encoding: 'msgpack', batch: false, shortAmount: 2, connections: 4 },
  { name: 'small-json', label: '1×768 float32, JSON', parts: [{ rows: 1, n: 768, dtype: 'float32' }], encoding: 'json', batch: false, shortAmount: 50, connections: 16 },
  { name: 'batch64', label: '/v1/batch of 64 × 1×768 float32, msgpack', parts: Array.from({ length: 64 }, () => ({ rows: 1, n: 768, dtype: 'float32' as const })), encoding: 'msgpack', batch: true, shortAmount: 10, connections: 8 },
  { name: 'small-v2', label: '1×768 float32, /v2 binary', parts: [{ rows: 1, n: 768, dtype: 'float32' }], encoding: 'oip', batch: false, shortAmount: 50, connections: 16 },
  { name: 'medium-v2', label: '32×4096 float32, /v2 binary (512 KiB)', parts: [{ rows: 32, n: 4096, dtype: 'float32' }], encoding: 'oip', batch: false, shortAmount: 20, connections: 8 },
  { name: 'large-v2', label: '1024×4096 float32, /v2 binary (16 MiB)', parts: [{ rows: 1024, n: 4096, dtype: 'float32' }], encoding: 'oip', batch: false, shortAmount: 2, connections: 4 },
  { name: 'medium-bf16', label: '32×4096 bfloat16, msgpack (256 KiB)', parts: [{ rows: 32, n: 4096, dtype: 'bfloat16' }], encoding: 'msgpack', batch: false, shortAmount: 20, connections: 8 },
  // a training step: 512 samples of 256 channels, statistics per channel across the batch
  { name: 'train', label: '512×256 float32 training step, msgpack (512 KiB)', parts: [{ rows: 512, n: 256, dtype: 'float32' }], encoding: 'msgpack', batch: false, shortAmount: 20, connections: 8, ops: ['batchnorm'] },
  // the small requests while large JSON answers are made: what one request can do to the others
  { name: 'mixed', label: '1×768 float32, msgpack', parts: SMALL, encoding: 'msgpack', batch: false, shortAmount: 50, connections: 16, ops: ['rmsnorm'], beside: LARGE_AS_JSON },
];

export const SCENARIO_NAMES = SHAPES.map((s) => s.name);

export const MEDIA_TYPE: Readonly<Record<Encoding, string>> = { msgpack: 'application/msgpack', json: 'application/json', oip: 'application/octet-stream' };

/** every scenario, both operations, in run order; `only` keeps ids containing any of its strings, in
 *  the order of `only` (`small,batch64,large` runs large in a process that served the others first) */
export function scenarios(only: string[] = []): Scenario[] {
  const all = SHAPES.flatMap((shape) => (shape.ops ?? ['rmsnorm', 'layernorm'] as const).map((op) => scenarioOf(shape, op)));
  if (only.length === 0) return all;
  const rank = (s: Scenario) => only.findIndex((o) => s.id.includes(o));
  return all.filter((s) => rank(s) >= 0).sort((a, b) => rank(a) - rank(b)); // stable: table order within a rank
}

function scenarioOf(shape: Shape, op: LoadOp): Scenario {
  const bytes = shape.parts.reduce((sum, p) => sum + p.rows * p.n * (p.dtype === 'float32' ? 4 : 2), 0);
  return {
    id: `${op}/${shape.name}`, op, name: shape.name, label: shape.label,
    path: shape.batch ? '/v1/batch' : shape.encoding === 'oip' ? `/v2/models/${op}/infer` : `/v1/${op}`,
    encoding: shape.encoding, answer: shape.answer ?? shape.encoding,
    parts: shape.parts, tensorBytes: bytes, shortAmount: shape.shortAmount, connections: shape.connections,
    beside: shape.beside === undefined ? null : scenarioOf(shape.beside, op),
  };
}

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

/** one input tensor: the wire form, and the values the server sees */
interface Made { wire: Record<string, unknown>; values: Float32Array; rows: number; n: number; dtype: Dtype; bytes: Uint8Array | null }

function makePart(part: Part, seed: number, encoding: Encoding): Made {
  const values = randomRows(part.rows, part.n, seed);
  let wire: Record<string, unknown>;
  if (part.dtype === 'bfloat16') {
    const bits = new Uint16Array(values.length);
    for (let i = 0; i < values.length; i++) {
      bits[i] = bfloat16Bits(values[i]);
      values[i] = bfloat16Value(bits[i]);
    }
    wire = { dtype: 'bfloat16', shape: [part.rows, part.n], data: new Uint8Array(bits.buffer) };
  } else {
    wire = {
      dtype: 'float32', shape: [part.rows, part.n],
      data: encoding === 'json' ? Array.from(values) : new Uint8Array(values.buffer),
    };
  }
  const bytes = wire.data instanceof Uint8Array ? wire.data : null;
  return { wire, values, rows: part.rows, n: part.n, dtype: part.dtype, bytes };
}

/** a request body of this scenario, with data drawn from `seed` */
export function makeSample(s: Scenario, seed: number): Sample {
  const made = s.parts.map((p, i) => makePart(p, seed * 1000 + i, s.encoding));
  const batch = s.path === '/v1/batch';
  if (s.encoding === 'oip') return makeOipSample(s, made[0]);
  const fields = s.op === 'batchnorm' ? { training: true } : {};
  const payload = batch ? { requests: made.map((m) => ({ op: s.op, input: m.wire, ...fields })) } : { input: made[0].wire, ...fields };
  const body = s.encoding === 'json' ? Buffer.from(JSON.stringify(payload)) : packr.pack(payload);
  let refs: Float64Array[] | null = null;
  return {
    body,
    headers: { 'content-type': MEDIA_TYPE[s.encoding], accept: MEDIA_TYPE[s.answer] },
    check(status, response, target) {
      if (status !== 200) return `status ${status}: ${response.subarray(0, 300).toString('utf8')}`;
      if (target === 'floor') return response.equals(body) ? null : 'the answer differs from the body sent';
      let decoded: Record<string, unknown>;
      try {
        decoded = s.answer === 'json' ? JSON.parse(response.toString('utf8')) : unpackr.unpack(response);
      } catch (err) {
        return `undecodable ${s.answer} response: ${err instanceof Error ? err.message : String(err)}`;
      }
      const outputs = batch
        ? (Array.isArray(decoded.results) ? decoded.results.map((r: Record<string, unknown>) => r?.output) : [])
        : [decoded.output];
      if (outputs.length !== made.length) return `${outputs.length} outputs, expected ${made.length}`;
      if (target === 'service') refs ??= made.map((m) => (s.op === 'batchnorm' ? referenceColumns(m.values, m.rows, m.n) : referenceRows(s.op, m.values, m.n)));
      for (let k = 0; k < made.length; k++) {
        const where = batch ? `results[${k}].output` : 'output';
        const problem = checkOutput(outputs[k] as Record<string, unknown> | undefined, made[k], target === 'service' ? refs![k] : null);
        if (problem !== null) return `${where}: ${problem}`;
      }
      return null;
    },
  };
}

/** what OIP's answer header says for a binary float32 output of this shape */
function oipAnswerHeader(model: string, shape: number[], bytes: number): string {
  return JSON.stringify({ model_name: model, model_version: '1', outputs: [{ name: 'output', datatype: 'FP32', shape, parameters: { binary_data_size: bytes } }] });
}

/** a /v2 binary request as tritonclient sends it: no Content-Type, the JSON header, the raw bytes */
function makeOipSample(s: Scenario, m: Made): Sample {
  const shape = [m.rows, m.n];
  const header = Buffer.from(JSON.stringify({
    inputs: [{ name: 'input', datatype: 'FP32', shape, parameters: { binary_data_size: m.bytes!.byteLength } }],
    outputs: [{ name: 'output', parameters: { binary_data: true } }],
  }));
  const body = Buffer.concat([header, m.bytes!]);
  const expectedHeader = Buffer.from(oipAnswerHeader(s.op, shape, m.bytes!.byteLength));
  let ref: Float64Array | null = null;
  return {
    body,
    headers: { 'inference-header-content-length': String(header.length) },
    check(status, response, target) {
      if (status !== 200) return `status ${status}: ${response.subarray(0, 300).toString('utf8')}`;
      if (target === 'floor') return response.equals(body) ? null : 'the answer differs from the body sent';
      if (!response.subarray(0, expectedHeader.length).equals(expectedHeader)) return `answer header ${response.subarray(0, 200).toString('utf8')}, expected ${expectedHeader.toString('utf8')}`;
      const out = { dtype: 'float32', shape, data: response.subarray(expectedHeader.length) };
      if (target === 'service') ref ??= referenceRows(s.op as Op, m.values, m.n);
      return checkOutput(out, m, target === 'service' ? ref : null);
    },
  };
}

/** BatchNorm in training mode over [rows, n], channels on axis 1, eps 1e-5: each column normalized */
function referenceColumns(x: Float32Array, rows: number, n: number): Float64Array {
  const y = new Float64Array(x.length);
  for (let c = 0; c < n; c++) {
    let sum = 0;
    for (let r = 0; r < rows; r++) sum += x[r * n + c];
    const mean = sum / rows;
    let squares = 0;
    for (let r = 0; r < rows; r++) squares += (x[r * n + c] - mean) ** 2;
    const rstd = 1 / Math.sqrt(squares / rows + 1e-5);
    for (let r = 0; r < rows; r++) y[r * n + c] = (x[r * n + c] - mean) * rstd;
  }
  return y;
}

/** ref null: the echo, which must give the input back bit for bit */
function checkOutput(out: Record<string, unknown> | undefined, m: Made, ref: Float64Array | null): string | null {
  if (typeof out !== 'object' || out === null) return 'missing';
  if (out.dtype !== m.dtype) return `dtype ${String(out.dtype)}, expected ${m.dtype}`;
  if (!Array.isArray(out.shape) || out.shape.length !== 2 || out.shape[0] !== m.rows || out.shape[1] !== m.n) {
    return `shape ${JSON.stringify(out.shape)}, expected [${m.rows},${m.n}]`;
  }
  if (ref === null && m.bytes !== null && out.data instanceof Uint8Array) {
    return Buffer.compare(out.data, m.bytes) === 0 ? null : 'data bytes differ from the bytes sent';
  }
  const values = readValues(out.data, m.dtype);
  if (typeof values === 'string') return values;
  if (ref !== null) return compareValues(values, ref, m.dtype === 'bfloat16');
  if (values.length !== m.values.length) return `${values.length} values, expected ${m.values.length}`;
  for (let i = 0; i < values.length; i++) {
    if (!Object.is(values[i], m.values[i])) return `data[${i}] = ${values[i]}, sent ${m.values[i]}`;
  }
  return null;
}

function readValues(data: unknown, dtype: Dtype): ArrayLike<number> | string {
  if (Array.isArray(data)) return data.map((v) => (typeof v === 'number' ? v : Number(v)));
  if (!(data instanceof Uint8Array)) return `data is ${typeof data}, expected bin or a list`;
  // bin data sits at any offset of the body: copy when it is not aligned
  const bytes = data.byteOffset % 4 === 0 ? data : new Uint8Array(data);
  if (dtype === 'float32') {
    if (bytes.byteLength % 4 !== 0) return `${bytes.byteLength} data bytes, not whole float32s`;
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  }
  if (bytes.byteLength % 2 !== 0) return `${bytes.byteLength} data bytes, not whole bfloat16s`;
  const bits = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  const values = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) values[i] = bfloat16Value(bits[i]);
  return values;
}
