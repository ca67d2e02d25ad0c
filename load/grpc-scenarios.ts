// the gRPC scenarios (issue 25): rmsnorm over the service's GRPCInferenceService, unary calls or one
// ModelStreamInfer stream per connection, beside the gRPC floor and the /v2 HTTP binary scenario of the
// same request; their requests, the spot check of an answer, and which runs `--only` selects.
// Ids `rmsnorm/small-grpc-unary`, `rmsnorm/small-grpc-stream@2000`: `--only grpc` picks them all.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { GrpcMode } from './grpc-load.js';
import { compareValues, randomRows, referenceRows } from './reference.js';
import type { GrpcSide } from './results.js';

export interface GrpcScenario {
  /** e.g. `rmsnorm/small-grpc-unary` */
  id: string;
  op: 'rmsnorm';
  /** e.g. `small-grpc-unary` */
  name: string;
  label: string;
  mode: GrpcMode;
  rows: number;
  n: number;
  tensorBytes: number;
  /** requests per run in --short mode */
  shortAmount: number;
  /** connections (unary) or streams, one per connection, unless --connections says: as the /v2 scenario */
  connections: number;
  /** the /v2 HTTP binary scenario of the same request it is compared with, e.g. `rmsnorm/small-v2` */
  v2: string;
}

export interface GrpcRateScenario {
  /** e.g. `rmsnorm/small-grpc-unary@2000` */
  id: string;
  scenario: GrpcScenario;
  rate: number;
  /** the saturated /v2 HTTP scenario (load/scenarios.ts) whose requests are measured beside it at its rate, e.g. `rmsnorm/small-v2` */
  v2: string;
}

export interface GrpcSample {
  /** an encoded ModelInferRequest */
  message: Buffer;
  /** null when the answer (a ModelInferResponse, on a stream a ModelStreamInferResponse) is right */
  check(answer: Buffer, target: GrpcSide, mode: GrpcMode): string | null;
}

const OP = 'rmsnorm';
// the shapes, connections and short amounts of the /v2 scenarios they stand beside (load/scenarios.ts)
const SIZES = [
  { size: 'small', rows: 1, n: 768, label: '1×768 float32', shortAmount: 50, connections: 16 },
  { size: 'medium', rows: 32, n: 4096, label: '32×4096 float32 (512 KiB)', shortAmount: 20, connections: 8 },
  { size: 'large', rows: 1024, n: 4096, label: '1024×4096 float32 (16 MiB)', shortAmount: 2, connections: 4 },
];
// the rates for small requests, on 16 connections or streams; large below every server's
// saturation (here: the service ~10-13 req/s over gRPC, ~40 on /v2; the echo ~25 on /v2)
const RATE_PLAN: ReadonlyArray<{ name: string; rates: readonly number[] }> = [
  { name: 'small-grpc-unary', rates: [2000, 4000] },
  { name: 'small-grpc-stream', rates: [2000, 4000] },
  { name: 'large-grpc-unary', rates: [5] },
];

const ALL: GrpcScenario[] = SIZES.flatMap((z) => (['unary', 'stream'] as const).map((mode) => ({
  id: `${OP}/${z.size}-grpc-${mode}`, op: OP, name: `${z.size}-grpc-${mode}`, label: `${z.label}, gRPC ${mode}`, mode,
  rows: z.rows, n: z.n, tensorBytes: z.rows * z.n * 4, shortAmount: z.shortAmount, connections: z.connections, v2: `${OP}/${z.size}-v2`,
})));

const ALL_RATES: GrpcRateScenario[] = RATE_PLAN.flatMap((p) => {
  const scenario = ALL.find((s) => s.name === p.name)!;
  return p.rates.map((rate) => ({ id: `${scenario.id}@${rate}`, scenario, rate, v2: scenario.v2 }));
});

/** the gRPC work of a run, and the /v2 HTTP runs it is compared with, which the run must make too */
export interface GrpcPlan {
  scenarios: GrpcScenario[];
  rates: GrpcRateScenario[];
  /** ids of saturated /v2 scenarios (load/scenarios.ts) */
  v2: string[];
}

/** the ids containing one of `only` (all without it), in table order; a rate brings its saturated scenario */
export function grpcPlan(only: string[] = []): GrpcPlan {
  const picked = (id: string) => only.length === 0 || only.some((o) => id.includes(o));
  const rates = ALL_RATES.filter((r) => picked(r.id));
  const scenarios = ALL.filter((s) => picked(s.id) || rates.some((r) => r.scenario === s));
  return { scenarios, rates, v2: [...new Set(scenarios.map((s) => s.v2))] };
}

const PROTO = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'grpc', 'proto', 'inference.proto');
let types: { request: protobuf.Type; response: protobuf.Type; streamResponse: protobuf.Type } | null = null;

// the messages from the service's .proto by protobufjs: independent of the service's hand-written codec
function messageTypes() {
  if (types === null) {
    const root = protobuf.parse(readFileSync(PROTO, 'utf8'), { keepCase: true }).root;
    types = {
      request: root.lookupType('inference.ModelInferRequest'),
      response: root.lookupType('inference.ModelInferResponse'),
      streamResponse: root.lookupType('inference.ModelStreamInferResponse'),
    };
  }
  return types;
}

const toBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** a request of this scenario, with data drawn from `seed` (the same values as the /v2 scenario's sample `seed`) */
export function makeGrpcSample(s: GrpcScenario, seed: number): GrpcSample {
  const t = messageTypes();
  const values = randomRows(s.rows, s.n, seed * 1000);
  const data = new Uint8Array(values.buffer);
  const message = toBuffer(t.request.encode(t.request.fromObject({
    model_name: s.op, inputs: [{ name: 'input', datatype: 'FP32', shape: [s.rows, s.n] }], raw_input_contents: [data],
  })).finish());
  // the floor answers the request's own bytes; on a stream as infer_response (field 2)
  const wrapped = toBuffer(protobuf.Writer.create().uint32((2 << 3) | 2).bytes(message).finish());
  let ref: Float64Array | null = null;
  const checkResponse = (response: Record<string, unknown>): string | null => {
    if (response.model_name !== s.op) return `model_name ${JSON.stringify(response.model_name)}, expected ${s.op}`;
    const outputs = response.outputs as Array<Record<string, unknown>> | undefined;
    const raw = response.raw_output_contents as Uint8Array[] | undefined;
    if (outputs?.length !== 1 || raw?.length !== 1) return `${outputs?.length ?? 0} outputs and ${raw?.length ?? 0} raw_output_contents, expected 1 and 1`;
    const o = outputs[0];
    const shape = (o.shape as unknown[] | undefined)?.map(Number) ?? [];
    if (o.name !== 'output' || o.datatype !== 'FP32' || shape.length !== 2 || shape[0] !== s.rows || shape[1] !== s.n) {
      return `output ${JSON.stringify({ name: o.name, datatype: o.datatype, shape })}, expected output FP32 [${s.rows},${s.n}]`;
    }
    if (raw[0].byteLength !== data.byteLength) return `${raw[0].byteLength} output bytes, expected ${data.byteLength}`;
    const bytes = raw[0].byteOffset % 4 === 0 ? raw[0] : new Uint8Array(raw[0]); // a Float32Array needs 4-byte alignment
    ref ??= referenceRows(s.op, values, s.n);
    return compareValues(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), ref, false);
  };
  return {
    message,
    check(answer, target, mode) {
      if (target === 'floor') return answer.equals(mode === 'unary' ? message : wrapped) ? null : 'the answer differs from the message sent';
      try {
        const options = { longs: Number, defaults: true };
        if (mode === 'unary') return checkResponse(t.response.toObject(t.response.decode(answer), options));
        const r = t.streamResponse.toObject(t.streamResponse.decode(answer), options);
        if (r.error_message !== '') return `error_message: ${String(r.error_message).slice(0, 300)}`;
        return r.infer_response ? checkResponse(r.infer_response) : 'no infer_response';
      } catch (err) {
        return `undecodable answer: ${err instanceof Error ? err.message : String(err)}`;
      }
    },
  };
}
