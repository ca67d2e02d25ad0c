// bounded gRPC load through the load balancer's gRPC port, beside docker/load.mjs's HTTP load: half
// the workers make unary ModelInfer calls, half keep a ModelStreamInfer stream each, sending batches
// of requests on it. Every answer is compared byte for byte with the one checked against the float64
// reference before the run.
// A gRPC error travels as HTTP 200 with grpc-status, which HAProxy cannot retry, and a killed replica
// takes its open streams with it, so this client does what a careful gRPC user does: a retry policy
// for UNAVAILABLE (grpc-js honours the service's grpc-retry-pushback-ms), then, for a call that still
// failed or a stream that ended early, the requests not answered are sent again (up to ATTEMPTS
// times each). "0 failed" means every request got its correct answer in the end.
// Stops after `seconds`, or earlier on SIGTERM or SIGINT; prints one JSON line of figures; exits 1
// on any failure.
//   API_KEY=… node docker/grpc-load.mjs 127.0.0.1:18081 [seconds] [workers]
import { credentials, loadPackageDefinition, Metadata, status as Status } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import { firstMismatch, reference } from './norm-reference.mjs';

const [target, seconds = '12', workers = '8'] = process.argv.slice(2);
const ATTEMPTS = 12; // sends of one request at most, retries by the policy not counted
// between two sends of a request: a replica going away (scale-down, kill, update) refuses or cuts
// calls for a second or two, and resends without a pause would spend every attempt inside it
const backoff = (attempt) => new Promise((r) => setTimeout(r, Math.min(2_000, 50 * 2 ** attempt) * (0.5 + Math.random() / 2)));
const BATCH = 8; // requests a stream worker sends before it waits for their answers
const DRAIN_MS = 30_000; // after the stop, for requests in flight

const proto = fileURLToPath(new URL('../src/grpc/proto/', import.meta.url));
const pkg = loadPackageDefinition(loadSync('inference.proto', { includeDirs: [proto], keepCase: true, longs: Number, defaults: true }));
const serviceConfig = {
  methodConfig: [{
    name: [{ service: 'inference.GRPCInferenceService' }],
    retryPolicy: { maxAttempts: 5, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] },
  }],
};
const client = new pkg.inference.GRPCInferenceService(target, credentials.createInsecure(), {
  'grpc.service_config': JSON.stringify(serviceConfig),
  'grpc.max_receive_message_length': -1,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
});
const metadata = () => {
  const m = new Metadata();
  if (process.env.API_KEY) m.set('authorization', `Bearer ${process.env.API_KEY}`);
  return m;
};

const x = [1, 2, 3, 4, -1, -2, -3, -5];
const request = (id) => ({
  model_name: 'rmsnorm', id,
  inputs: [{ name: 'input', datatype: 'FP32', shape: [2, 4] }],
  raw_input_contents: [Buffer.from(new Float32Array(x).buffer)],
  parameters: { eps: { double_param: 0 } },
});
const unary = (req) => new Promise((resolve) => {
  client.ModelInfer(req, metadata(), { deadline: Date.now() + 30_000 }, (err, res) => resolve(err ? { err } : { res }));
});

// the answer a correct server gives, checked once against the reference
const first = await unary(request('check'));
if (first.err) throw new Error(`ModelInfer: ${Status[first.err.code]} ${first.err.details}`);
const answer = first.res.raw_output_contents[0];
const values = Array.from(new Float32Array(answer.buffer.slice(answer.byteOffset, answer.byteOffset + answer.length)));
if (firstMismatch(values, reference('rmsnorm', x, 4, { eps: 0 })) >= 0) throw new Error(`rmsnorm 2x4 over gRPC: ${values}`);
const expected = Buffer.from(answer);
const correct = (res, id) => res.id === id && res.raw_output_contents.length === 1 && expected.equals(res.raw_output_contents[0]);

const f = { sent: 0, correct: 0, resent: 0, failed: 0, streams: 0, streamsEnded: 0, codes: {}, latencies: [] };
const code = (err) => { const name = Status[err.code] ?? String(err.code); f.codes[name] = (f.codes[name] ?? 0) + 1; };
let stopping = false;
let nextId = 0;
const started = Date.now();
const stopAt = started + Number(seconds) * 1000;

/** unary worker: one request at a time, sent again until answered right or out of attempts */
async function unaryWorker() {
  while (!stopping && Date.now() < stopAt) {
    const id = `u${nextId++}`;
    const t0 = performance.now();
    f.sent++;
    let done = false;
    for (let attempt = 0; attempt < ATTEMPTS && !done; attempt++) {
      if (attempt > 0) {
        f.resent++;
        await backoff(attempt);
      }
      const { err, res } = await unary(request(id));
      if (err) code(err);
      else done = correct(res, id);
    }
    if (done) {
      f.correct++;
      f.latencies.push(performance.now() - t0);
    } else f.failed++;
  }
}

/** stream worker: batches on one stream; a stream that ends early is replaced and its unanswered requests sent again */
async function streamWorker() {
  while (!stopping && Date.now() < stopAt) {
    const batch = Array.from({ length: BATCH }, () => ({ id: `s${nextId++}`, attempts: 0, t0: performance.now() }));
    f.sent += batch.length;
    let pending = batch;
    while (pending.length > 0) {
      f.failed += pending.filter((r) => r.attempts >= ATTEMPTS).length; // given up
      pending = pending.filter((r) => r.attempts < ATTEMPTS);
      if (pending.length === 0) break;
      const again = pending.some((r) => r.attempts > 0);
      for (const r of pending) {
        if (r.attempts++ > 0) f.resent++;
      }
      if (again) await backoff(Math.max(...pending.map((r) => r.attempts)));
      pending = await onStream(pending);
    }
  }
}

/** sends `requests` on a new stream and half-closes it; resolves, once it ends, with those not
 *  answered right (an answer in place of an error counts as not answered: it is sent again) */
function onStream(requests) {
  f.streams++;
  return new Promise((resolve) => {
    const waiting = new Map(requests.map((r) => [r.id, r]));
    const call = client.ModelStreamInfer(metadata(), { deadline: Date.now() + 60_000 });
    call.on('data', (m) => {
      const r = waiting.get(m.infer_response?.id);
      if (r === undefined || m.error_message !== '' || !correct(m.infer_response, r.id)) return;
      waiting.delete(r.id);
      f.correct++;
      f.latencies.push(performance.now() - r.t0);
    });
    const settle = () => resolve([...waiting.values()]);
    call.on('error', (err) => {
      code(err);
      f.streamsEnded++;
      settle();
    });
    call.on('end', settle);
    for (const r of requests) call.write(request(r.id));
    call.end();
  });
}

for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => { stopping = true; });
const n = Number(workers);
const running = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? unaryWorker() : streamWorker()));
const drained = await Promise.race([Promise.all(running).then(() => true), new Promise((r) => setTimeout(() => r(false), Number(seconds) * 1000 + DRAIN_MS).unref())]);
const elapsed = (Date.now() - started) / 1000;
f.latencies.sort((a, b) => a - b);
const figures = {
  sent: f.sent, correct: f.correct, failed: f.failed + (drained ? 0 : f.sent - f.correct - f.failed),
  resent: f.resent, streams: f.streams, streamsEndedEarly: f.streamsEnded, codes: f.codes,
  rps: Math.round(f.correct / elapsed), latencyP99ms: Math.round(f.latencies[Math.floor(f.latencies.length * 0.99)] ?? 0), seconds: Math.round(elapsed),
};
console.log(JSON.stringify(figures));
client.close();
process.exit(figures.failed === 0 && figures.correct > 0 && drained ? 0 : 1);
