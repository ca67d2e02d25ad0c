// npm run bench:path: what the engine costs one small request without any transport, as CPU µs per
// call in one process (stable where socket runs on this shared machine spread by ±30 %):
//  - pipeline: runPipeline for a 1×768 float32 rmsnorm whose /v1 msgpack answer goes out from the slab
//  - batch pipeline: runPipeline for 64 of them as /v1/batch (msgpack) runs them
//  - grpc infer: gRPC's infer() from a decoded ModelInferRequest to its encoded answer
//  - batch body: msgpack decode + normalize of a /v1/batch body of 64 such items
//  - /v1 msgpack and /v2 binary by inject: the whole HTTP path of such a request but the socket
// `--dist <dir>` measures another build (a worktree of an older commit, say); run two builds in turn
// for a before/after, e.g. farm-bench --vs 'node dist-load/bench-request-path.js --dist /old/dist' --
// node dist-load/bench-request-path.js
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Packr, Unpackr } from 'msgpackr';

const { values } = parseArgs({ options: { dist: { type: 'string' }, calls: { type: 'string', default: '100000' } } });
const dist = resolve(values.dist ?? fileURLToPath(new URL('../dist', import.meta.url)));
const calls = Number(values.calls);
if (!Number.isSafeInteger(calls) || calls < 1) throw new Error(`--calls: ${values.calls} is not a whole number ≥ 1`);

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

const N = 768;
const values32 = Float32Array.from({ length: N }, (_, i) => Math.sin(i));
const app = await buildApp({ workers: 1, logLevel: 'warn' });
await app.ready();
const { engine } = app;

/** CPU µs per call of `once` over `count` calls, after a tenth as many unmeasured */
async function cpuPerCall(once: () => unknown, count = calls): Promise<number> {
  for (let i = 0; i < Math.ceil(count / 10); i++) await once();
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) await once();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}

// the input where a body would have put it: in a slab of the shared memory
const bodySlab = engine.slabs.acquire(16 + 4 * N);
new Float32Array(bodySlab.memory, bodySlab.offset + 16, N).set(values32);
const data = new Uint8Array(bodySlab.memory, bodySlab.offset + 16, 4 * N);
const answer = v1Answer('msgpack', false);
const cancellation = new Cancellation(60_000);
const pipeline = await cpuPerCall(() => {
  const lease = new Lease(engine.slabs);
  const result = engine.run({ items: [{ op: 'rmsnorm', body: { input: { dtype: 'float32', shape: [1, N], data } }, path: '' }], fromJson: false, answer, lease, cancellation, fault: null });
  if (result instanceof Promise) throw new Error('a 1×768 request should be computed inline');
  lease.release();
});

// a batch of 64 such items, as /v1/batch runs it (msgpack); a 32nd as many calls
const batchAnswer = v1Answer('msgpack', true);
const batchItems = Array.from({ length: 64 }, (_, i) => ({ op: 'rmsnorm' as const, body: { input: { dtype: 'float32', shape: [1, N], data } }, path: `requests[${i}].` }));
const batchPipeline = await cpuPerCall(async () => {
  const lease = new Lease(engine.slabs);
  await engine.run({ items: batchItems, fromJson: false, answer: batchAnswer, lease, cancellation, fault: null });
  lease.release();
}, Math.ceil(calls / 32));

const service = packageDefinition['inference.GRPCInferenceService'] as unknown as Record<string, { requestSerialize(value: object): Buffer }>;
const message = service.ModelInfer.requestSerialize({
  model_name: 'rmsnorm', inputs: [{ name: 'input', datatype: 'FP32', shape: [1, N] }], raw_input_contents: [Buffer.from(values32.buffer)],
});
const context = { engine, validators: compileOpValidators(), timeoutMs: 60_000, fault: null, stream: false, admitted: () => {} };
const grpcInfer = await cpuPerCall(async () => (await infer(context, readInferRequest(message))).release());

const item = { op: 'rmsnorm', input: { dtype: 'float32', shape: [1, N], data: new Uint8Array(values32.buffer) } };
const batchBody = new Packr({ useRecords: false }).pack({ requests: Array.from({ length: 64 }, () => item) });
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, structuredClone: false }); // as http/body-parsers.ts
const batch = await cpuPerCall(() => normalizeMsgpackBody(unpackr.unpack(batchBody)));

// the whole HTTP path but the socket: fastify's inject (light-my-request) through routing, every
// hook, the body parser, validation, the handler, the answer and its headers. Its own cost is in the
// figure, the same for both builds of a before/after
const packr = new Packr({ useRecords: false });
const injected = (url: string, headers: Record<string, string>, payload: Buffer) => async () => {
  const res = await app.inject({ method: 'POST', url, headers, payload });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
};
const v1Http = await cpuPerCall(injected('/v1/rmsnorm', { 'content-type': 'application/msgpack', accept: 'application/msgpack' },
  packr.pack({ input: { dtype: 'float32', shape: [1, N], data: new Uint8Array(values32.buffer) } })));
const v2Header = Buffer.from(JSON.stringify({ inputs: [{ name: 'input', shape: [1, N], datatype: 'FP32', parameters: { binary_data_size: 4 * N } }], parameters: { binary_data_output: true } }));
const v2Http = await cpuPerCall(injected('/v2/models/rmsnorm/infer', { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(v2Header.length) },
  Buffer.concat([v2Header, Buffer.from(values32.buffer)])));

engine.slabs.release(bodySlab);
await app.close();
console.log(`build: ${dist}, ${calls} calls each, CPU µs per call`);
console.log(`pipeline (1×768 rmsnorm, /v1 msgpack answer)   ${pipeline.toFixed(2)}`);
console.log(`batch pipeline (64 such items, msgpack)        ${batchPipeline.toFixed(2)}`);
console.log(`grpc infer (decoded message → encoded answer)  ${grpcInfer.toFixed(2)}`);
console.log(`batch body (decode + normalize, 64 items)      ${batch.toFixed(2)}`);
console.log(`/v1 msgpack by inject (all but the socket)     ${v1Http.toFixed(2)}`);
console.log(`/v2 binary by inject (all but the socket)      ${v2Http.toFixed(2)}`);
