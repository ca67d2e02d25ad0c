// gRPC in tests (OIP.md "gRPC"): an app with its gRPC front end on a free loopback port, and a grpc-js
// client built from the project's .proto (the wire contract), written apart from src/grpc: its calls
// resolve to the answer or to the status, trailers included, whatever happened.
import { credentials, loadPackageDefinition, Metadata, type Client, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { afterAll, beforeAll } from 'vitest';
import { grpcFrame } from '../../load/grpc-load.js';
import type { Config } from '../../src/config.js';
import { startGrpc, type GrpcFrontEnd } from '../../src/grpc/server.js';
import { createApp } from '../helpers/http.js';
import { bytesOf, valuesFromBytes, type Dtype } from '../helpers/tensors.js';
import { DTYPE_OF as OIP_DTYPE_OF } from '../v2/oip.js';

const PROTO_DIR = fileURLToPath(new URL('../../src/grpc/proto/', import.meta.url));
// as a client would load them: every field present (defaults), 64-bit integers as numbers
const definition = loadSync(['inference.proto', 'health.proto'], { includeDirs: [PROTO_DIR], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
const loaded = loadPackageDefinition(definition) as any;
const InferRequestType = protobuf.parse(readFileSync(`${PROTO_DIR}inference.proto`, 'utf8'), { keepCase: true }).root.lookupType('inference.ModelInferRequest');

/** a ModelInferRequest as one gRPC message frame (the load client's framing), for tests that speak raw HTTP/2 */
export function inferFrame(request: object): Buffer {
  return grpcFrame(Buffer.from(InferRequestType.encode(InferRequestType.fromObject(request)).finish()));
}

/** the tensors' datatype names, as the REST tests know them, looked up by any string */
export const DTYPE_OF: Readonly<Record<string, Dtype>> = OIP_DTYPE_OF;

/** yields to the event loop until `ready()` (no clock: other callbacks run meanwhile) */
export async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setImmediate(resolve));
}

export interface Failure { code: number; details: string; trailers: Record<string, unknown> }
export type Result<T> = { ok: true; value: T; trailers: Record<string, unknown> } | ({ ok: false } & Failure);

export interface GrpcClient {
  raw: Client & Record<string, any>;
  health: Client & Record<string, any>;
  /** a unary call of the inference service (or `health`'s Check), settled to its answer or status */
  call<T = any>(method: string, request: object, options?: CallOptions): Promise<Result<T>>;
  close(): void;
}

export interface CallOptions { metadata?: Record<string, string>; deadlineMs?: number; service?: 'inference' | 'health'; compression?: 'gzip' | 'deflate' }

export function metadataOf(entries: Record<string, string> = {}): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(entries)) metadata.set(key, value);
  return metadata;
}

export function connect(port: number, clientOptions: Record<string, unknown> = {}): GrpcClient {
  const target = `127.0.0.1:${port}`;
  const options = { 'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1, ...clientOptions };
  const raw = new loaded.inference.GRPCInferenceService(target, credentials.createInsecure(), options);
  const health = new loaded.grpc.health.v1.Health(target, credentials.createInsecure(), options);
  return {
    raw,
    health,
    call(method, request, o = {}) {
      const client = o.service === 'health' ? health : raw;
      const metadata = metadataOf(o.metadata);
      if (o.compression !== undefined) metadata.set('grpc-internal-encoding-request', o.compression);
      const callOptions = o.deadlineMs === undefined ? {} : { deadline: Date.now() + o.deadlineMs };
      return new Promise((resolve) => {
        let trailers: Record<string, unknown> = {};
        const call = client[method](request, metadata, callOptions, (err: ServiceError | null, value: any) => {
          if (err !== null) resolve({ ok: false, code: err.code, details: err.details, trailers: err.metadata?.getMap() ?? {} });
          else queueMicrotask(() => resolve({ ok: true, value, trailers }));
        });
        call.on('status', (status: { metadata: Metadata }) => { trailers = status.metadata.getMap(); });
      });
    },
    close() {
      raw.close();
      health.close();
    },
  };
}

export interface GrpcServer { app: FastifyInstance; front: GrpcFrontEnd; client: GrpcClient }

/** an app with its gRPC front end on 127.0.0.1, a free port, for the file's tests */
export function useGrpcServer(config: Partial<Config> = {}): { readonly current: GrpcServer } {
  let current: GrpcServer | null = null;
  beforeAll(async () => {
    const app = await createApp(config);
    const front = await startGrpc(app.engine, { ...app.engine.config, host: '127.0.0.1', grpcPort: 0 }, (err) => { throw err; });
    current = { app, front, client: connect(front.port) };
  });
  afterAll(async () => {
    current?.client.close();
    current?.front.close();
    await current?.app.close();
  });
  return {
    get current() {
      if (current === null) throw new Error('no server outside a test');
      return current;
    },
  };
}

/** an input tensor with its bytes for raw_input_contents */
export function rawInput(name: string, datatype: string, shape: number[], values: readonly number[]) {
  return { tensor: { name, datatype, shape }, bytes: Buffer.from(bytesOf(DTYPE_OF[datatype], values)) };
}

/** a ModelInferRequest of raw inputs */
export function inferRequest(model: string, inputs: ReturnType<typeof rawInput>[], rest: Record<string, unknown> = {}) {
  return { model_name: model, inputs: inputs.map((i) => i.tensor), raw_input_contents: inputs.map((i) => i.bytes), ...rest };
}

/** InferParameters as tritonclient.grpc types Python values */
export function param(value: number | boolean | string, kind?: 'int64' | 'uint64' | 'double') {
  if (typeof value === 'boolean') return { bool_param: value };
  if (typeof value === 'string') return { string_param: value };
  return { [`${kind ?? (Number.isInteger(value) ? 'int64' : 'double')}_param`]: value };
}

/** the answer's outputs by name: datatype, shape and values read from raw_output_contents */
export function outputsOf(response: any): Map<string, { datatype: string; shape: number[]; values: number[] }> {
  const outputs = new Map<string, { datatype: string; shape: number[]; values: number[] }>();
  response.outputs.forEach((o: any, i: number) => {
    outputs.set(o.name, { datatype: o.datatype, shape: o.shape, values: valuesFromBytes(DTYPE_OF[o.datatype], new Uint8Array(response.raw_output_contents[i])) });
  });
  return outputs;
}
