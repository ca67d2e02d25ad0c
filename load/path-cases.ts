// a small request's paths through one build, without a socket, for the in-process benchmarks
// (bench-request-path.ts measures one build, ab-path.ts two side by side):
//  - pipeline: runPipeline for a 1×768 float32 rmsnorm whose /v1 msgpack answer goes out from the slab
//  - batch: runPipeline for 64 of them as /v1/batch (msgpack) runs them
//  - grpc: gRPC's infer() from the ModelInferRequest's bytes to its encoded answer
//  - body: msgpack decode + normalize of a /v1/batch body of 64 such items
//  - v1, v2: /v1 msgpack and /v2 binary through fastify's inject (light-my-request): routing, every
//    hook, the body parser, validation, the handler, the answer and its headers; all but the socket
//  - socket: /v1 msgpack as a client sends it, over a kept-alive connection to the build's server on
//    a UNIX socket in this process (Node's HTTP parser, the socket's reads and writes, everything);
//    the client's side (a write, a read, a promise) counts too, alike for both builds
import { Packr, Unpackr } from 'msgpackr';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';

// V8's pretenuring off as every server process runs (load/processes.ts, NODE_FLAGS), set before any
// build is loaded. (NODE_FLAGS' other two size the heap and turn the memory reducer off when the heap
// is set up, too late from here; this harness never idles, so the reducer has nothing to act on.)
// Without it V8 pretenured one build's allocation sites in about half of the runs, and that build's
// calls cost several times as much for the whole run (a build against itself, 2026-11-28: grpc 39
// against 4-6 µs a call, pipeline 17 against 2-3, batch 530-640 against ~103); with it, B ÷ A read
// 0.98-1.05 in every run (grpc, pipeline and batch, 3-6 runs each)
setFlagsFromString('--no-allocation-site-pretenuring');

export const PATH_CASES = ['pipeline', 'batch', 'grpc', 'body', 'v1', 'v2', 'socket'] as const;
export type PathCase = (typeof PATH_CASES)[number];

/** what a case's call costs, relative to the pipeline's: a slice of the same length takes about as long */
export const CALL_WEIGHT: Readonly<Record<PathCase, number>> = { pipeline: 1, batch: 32, grpc: 2, body: 16, v1: 16, v2: 16, socket: 16 };

export interface PathBuild {
  /** one call of the case: a promise when the case awaits (inject, a batch) */
  call: Record<PathCase, () => unknown>;
  close(): Promise<void>;
}

const N = 768;

/** one kept-alive connection to `path`: `send` writes a request's bytes and resolves once its whole
 *  answer (headers and Content-Length bytes) came; anything but a 200 rejects */
async function rawClient(path: string): Promise<{ send(request: Buffer): Promise<void>; socket: Socket }> {
  const socket = connect(path);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let got: Buffer = Buffer.alloc(0);
  let done: ((err?: Error) => void) | null = null;
  socket.on('data', (chunk: Buffer) => {
    got = got.length === 0 ? chunk : Buffer.concat([got, chunk]);
    const end = got.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = got.toString('latin1', 0, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? NaN);
    if (got.length < end + 4 + length) return;
    got = Buffer.alloc(0);
    settle(head.startsWith('HTTP/1.1 200 ') ? undefined : new Error(head.slice(0, 200)));
  });
  // a request in flight fails, rather than waits for ever, when the connection breaks
  const settle = (err?: Error) => {
    const pending = done;
    done = null;
    pending?.(err);
  };
  socket.on('error', (err) => settle(err));
  socket.on('close', () => settle(new Error('the connection closed before the answer')));
  return {
    socket,
    send: (request) => new Promise<void>((resolve, reject) => {
      done = (err) => (err === undefined ? resolve() : reject(err));
      socket.write(request);
    }),
  };
}

let sockets = 0;

/** the build in `dist` (its app with one worker, at warn), its cases ready to call */
export async function pathBuild(dist: string): Promise<PathBuild> {
  const load = <T>(file: string) => import(`${dist}/${file}`) as Promise<T>;
  const { buildApp } = await load<typeof import('../dist/app.js')>('app.js');
  const { Lease } = await load<typeof import('../dist/memory/lease.js')>('memory/lease.js');
  const { Cancellation } = await load<typeof import('../dist/engine/cancellation.js')>('engine/cancellation.js');
  const { v1Answer } = await load<typeof import('../dist/http/v1/answer.js')>('http/v1/answer.js');
  const { infer } = await load<typeof import('../dist/grpc/infer.js')>('grpc/infer.js');
  const { readInferRequest } = await load<typeof import('../dist/grpc/infer-codec.js')>('grpc/infer-codec.js');
  const { packageDefinition } = await load<typeof import('../dist/grpc/definitions.js')>('grpc/definitions.js');
  const { compileOpValidators } = await load<typeof import('../dist/http/v1/schemas.js')>('http/v1/schemas.js');
  const { normalizeMsgpackBody } = await load<typeof import('../dist/codec/wire-body.js')>('codec/wire-body.js');

  const values = Float32Array.from({ length: N }, (_, i) => Math.sin(i));
  const app = await buildApp({ workers: 1, logLevel: 'warn', grpcPort: null });
  await app.ready();
  const { engine } = app;
  // the input where a body would have put it: in a slab of the shared memory
  const bodySlab = engine.slabs.acquire(16 + 4 * N);
  new Float32Array(bodySlab.memory, bodySlab.offset + 16, N).set(values);
  const data = new Uint8Array(bodySlab.memory, bodySlab.offset + 16, 4 * N);
  const cancellation = new Cancellation(24 * 3600_000);
  const run = (batch: boolean) => {
    const answer = v1Answer('msgpack', batch);
    const items = Array.from({ length: batch ? 64 : 1 }, (_, i) => ({ op: 'rmsnorm' as const, body: { input: { dtype: 'float32', shape: [1, N], data } }, path: batch ? `requests[${i}].` : '' }));
    return () => {
      const lease = new Lease(engine.slabs);
      const result = engine.run({ items, fromJson: false, answer, lease, cancellation, fault: null });
      if (result instanceof Promise) return result.then(() => lease.release());
      lease.release();
      return undefined;
    };
  };

  const service = packageDefinition['inference.GRPCInferenceService'] as unknown as Record<string, { requestSerialize(value: object): Buffer }>;
  const message = service.ModelInfer.requestSerialize({
    model_name: 'rmsnorm', inputs: [{ name: 'input', datatype: 'FP32', shape: [1, N] }], raw_input_contents: [Buffer.from(values.buffer)],
  });
  const context = { engine, validators: compileOpValidators(), timeoutMs: 60_000, fault: null, stream: false, admitted: () => {} };

  const packr = new Packr({ useRecords: false });
  const item = { op: 'rmsnorm', input: { dtype: 'float32', shape: [1, N], data: new Uint8Array(values.buffer) } };
  const batchBody = packr.pack({ requests: Array.from({ length: 64 }, () => item) });
  const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, structuredClone: false }); // as http/body-parsers.ts

  const injected = (url: string, headers: Record<string, string>, payload: Buffer) => async () => {
    const res = await app.inject({ method: 'POST', url, headers, payload });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  };
  const socketPath = join(tmpdir(), `path-case-${process.pid}-${sockets++}.sock`);
  rmSync(socketPath, { force: true });
  await app.listen({ path: socketPath });
  const client = await rawClient(socketPath);
  const v1Body = packr.pack({ input: item.input });
  const v1Request = Buffer.concat([Buffer.from(`POST /v1/rmsnorm HTTP/1.1\r\nhost: x\r\ncontent-type: application/msgpack\r\naccept: application/msgpack\r\ncontent-length: ${v1Body.length}\r\n\r\n`), v1Body]);
  const v2Header = Buffer.from(JSON.stringify({ inputs: [{ name: 'input', shape: [1, N], datatype: 'FP32', parameters: { binary_data_size: 4 * N } }], parameters: { binary_data_output: true } }));

  return {
    call: {
      pipeline: run(false),
      batch: run(true),
      grpc: () => {
        const answer = infer(context, readInferRequest(message));
        if (answer instanceof Promise) return answer.then((a) => a.release());
        answer.release();
        return undefined;
      },
      body: () => normalizeMsgpackBody(unpackr.unpack(batchBody)),
      v1: injected('/v1/rmsnorm', { 'content-type': 'application/msgpack', accept: 'application/msgpack' }, packr.pack({ input: item.input })),
      v2: injected('/v2/models/rmsnorm/infer', { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(v2Header.length) },
        Buffer.concat([v2Header, Buffer.from(values.buffer)])),
      socket: () => client.send(v1Request),
    },
    async close() {
      client.socket.destroy();
      engine.slabs.release(bodySlab);
      await app.close();
      rmSync(socketPath, { force: true });
    },
  };
}

/** CPU µs per call of `once` over `count` calls */
export async function cpuPerCall(once: () => unknown, count: number): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const result = once();
    if (result instanceof Promise) await result;
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}
