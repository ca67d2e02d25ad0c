// A same-run A/B of two servers' CPU per answer at one offered rate, for before/after figures on this
// shared machine, where separate runs a minute apart differ by ±30 %: both servers are up at once and
// the load alternates between them in short slices (A B B A, repeated), so slow drifts of the host
// fall on both alike. Each slice is a run at --rate, its requests spread evenly as the suite's
// equal-rate rows send them, on each server's connections kept from slice to slice
// (load/paced-http.ts); a server's CPU per answer is its process's user + system time over its
// slices (/proc) ÷ its answers. Prints each pair's ratio, their median and quartiles, and B ÷ A over
// all slices.
//   npm run ab -- --a /path/to/old/dist --b dist [--kind msgpack|v2|json|batch|grpc-unary|grpc-stream] [--rate 3000] [--pairs 30] [--log-level warn]
// `--a`/`--b`: a build's dist folder (its server.js is started as `npm start` does), or `echo` or
// `floor` (load/echo-server.ts, load/floor-server.ts; for the gRPC kinds `floor` is
// load/grpc-floor-server.ts); `--a-node-options`/`--b-node-options`: a NODE_OPTIONS for that server
// alone (e.g. a V8 flag's before/after on one build); `--a-log-level`/`--b-log-level`: that server's
// LOG_LEVEL in place of --log-level's (e.g. one build at info against itself at warn). The gRPC
// kinds send the suite's small gRPC scenario's message with its own client (load/grpc-load.ts), one
// call a connection or one request in flight a stream, the requests spread evenly over each slice.
import { Packr } from 'msgpackr';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ClientHttp2Session } from 'node:http2';
import { openGrpcSessions, runGrpcLoad } from './grpc-load.js';
import { keptPool, pacedHttp } from './paced-http.js';
import { grpcPlan, makeGrpcSample } from './grpc-scenarios.js';
import { cpuSeconds, killAll, spawnServer, type Listens, type Spawned } from './processes.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' }, b: { type: 'string' }, kind: { type: 'string', default: 'msgpack' },
    rate: { type: 'string', default: '3000' }, pairs: { type: 'string', default: '30' },
    'slice-seconds': { type: 'string', default: '1' }, connections: { type: 'string' },
    'a-node-options': { type: 'string' }, 'b-node-options': { type: 'string' }, 'log-level': { type: 'string', default: 'warn' },
    'a-log-level': { type: 'string' }, 'b-log-level': { type: 'string' },
  },
});
if (values.a === undefined || values.b === undefined) throw new Error('--a and --b: a dist folder, echo or floor each');
const kind = values.kind!;
const rate = Number(values.rate);
const pairs = Number(values.pairs);
const sliceSeconds = Number(values['slice-seconds']);
const connections = Number(values.connections ?? (kind === 'batch' ? 8 : 16));

const here = fileURLToPath(new URL('.', import.meta.url));
const grpcMode = kind === 'grpc-unary' ? 'unary' : kind === 'grpc-stream' ? 'stream' : null;
const scriptOf = (which: string) => {
  if (which === 'floor' && grpcMode !== null) return `${here}grpc-floor-server.js`;
  return which === 'echo' || which === 'floor' ? `${here}${which}-server.js` : `${resolve(which)}/server.js`;
};

// one 1×768 float32 rmsnorm (64 of them for a batch), as the suite's small scenarios send it
const N = 768;
const data = new Uint8Array(Float32Array.from({ length: N }, (_, i) => Math.sin(i)).buffer);
const packr = new Packr({ useRecords: false });
function request(): { path: string; headers: Record<string, string>; body: Buffer | string } {
  const msgpack = { 'content-type': 'application/msgpack', accept: 'application/msgpack' };
  if (kind === 'msgpack') return { path: '/v1/rmsnorm', headers: msgpack, body: packr.pack({ input: { dtype: 'float32', shape: [1, N], data } }) };
  if (kind === 'batch') return { path: '/v1/batch', headers: msgpack, body: packr.pack({ requests: Array.from({ length: 64 }, () => ({ op: 'rmsnorm', input: { dtype: 'float32', shape: [1, N], data } })) }) };
  if (kind === 'json') return { path: '/v1/rmsnorm', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { shape: [1, N], data: Array.from(new Float32Array(data.buffer)) } }) };
  if (kind === 'v2') {
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'input', shape: [1, N], datatype: 'FP32', parameters: { binary_data_size: data.length } }], parameters: { binary_data_output: true } }));
    return { path: '/v2/models/rmsnorm/infer', headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(header.length) }, body: Buffer.concat([header, data]) };
  }
  if (grpcMode !== null) return { path: '', headers: {}, body: '' };
  throw new Error(`--kind ${kind}: msgpack, v2, json, batch, grpc-unary or grpc-stream`);
}
const { path, headers, body } = request();
const grpcMessage = grpcMode === null ? null : makeGrpcSample(grpcPlan([`rmsnorm/small-grpc-${grpcMode}`]).scenarios[0], 1).message;

const pools: Record<string, ReturnType<typeof keptPool>> = {};
const grpcSessions: Record<string, ClientHttp2Session[]> = {};

/** answers (2xx, gRPC OK) of one slice at the offered rate; anything else fails the run */
async function slice(server: Spawned, seconds: number): Promise<number> {
  if (grpcMode !== null) {
    const sessions = (grpcSessions[server.name] ??= await openGrpcSessions(server.grpc!, connections));
    const r = await runGrpcLoad({ target: server.grpc!, mode: grpcMode, message: grpcMessage!, connections, rate, durationMs: seconds * 1000, sessions });
    if (r.errors > 0) throw new Error(`${server.name}: ${r.errors} gRPC errors (${JSON.stringify(r.statuses)})`);
    return r.ok;
  }
  const url = `${server.base}${path}`;
  // each server's connections kept from slice to slice (load/paced-http.ts says why)
  const pool = (pools[server.name] ??= keptPool(url, connections));
  const result = await pacedHttp({ url, headers, body, connections, rate, duration: seconds, pool });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.ok;
}

process.on('exit', killAll);
/** what a server listens on: the gRPC floor gRPC alone, the service both for the gRPC kinds */
const listens = (which: string): Listens => (grpcMode === null ? 'http' : which === 'floor' ? 'grpc' : 'http+grpc');
const nodeOptions = (given: string | undefined): Record<string, string> => (given === undefined ? {} : { NODE_OPTIONS: given });
const servers = [
  await spawnServer('A', scriptOf(values.a), { WORKERS: '2', LOG_LEVEL: values['a-log-level'] ?? values['log-level']!, ...nodeOptions(values['a-node-options']) }, undefined, 'ignore', listens(values.a)),
  await spawnServer('B', scriptOf(values.b), { WORKERS: '2', LOG_LEVEL: values['b-log-level'] ?? values['log-level']!, ...nodeOptions(values['b-node-options']) }, undefined, 'ignore', listens(values.b)),
];
try {
  for (const server of servers) await slice(server, 2); // warm-up
  const total = [{ cpu: 0, answers: 0 }, { cpu: 0, answers: 0 }];
  const ratios: number[] = [];
  for (let p = 0; p < pairs; p++) {
    const perAnswer = [0, 0];
    // A B, then B A: neither goes first in every pair
    for (const k of p % 2 === 0 ? [0, 1] : [1, 0]) {
      const before = cpuSeconds(servers[k].pid);
      const answers = await slice(servers[k], sliceSeconds);
      const cpu = cpuSeconds(servers[k].pid) - before;
      total[k].cpu += cpu;
      total[k].answers += answers;
      perAnswer[k] = cpu / answers;
    }
    ratios.push(perAnswer[1] / perAnswer[0]);
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const µs = (k: number) => (total[k].cpu / total[k].answers) * 1e6;
  const figures = {
    kind, rate, connections, pairs, a: values.a, b: values.b,
    aCpuUsPerAnswer: +µs(0).toFixed(1), bCpuUsPerAnswer: +µs(1).toFixed(1), bOverA: +(µs(1) / µs(0)).toFixed(3),
    pairMedian: +at(0.5).toFixed(3), pairQ1: +at(0.25).toFixed(3), pairQ3: +at(0.75).toFixed(3),
  };
  console.log(`${kind} at ${rate} req/s, ${pairs} pairs of ${sliceSeconds} s slices: A ${figures.aCpuUsPerAnswer} µs, B ${figures.bCpuUsPerAnswer} µs CPU per answer; B ÷ A ${figures.bOverA} (pairs: median ${figures.pairMedian}, quartiles ${figures.pairQ1}–${figures.pairQ3})`);
  console.log(JSON.stringify(figures));
} finally {
  for (const pool of Object.values(pools)) await pool.destroy();
  for (const session of Object.values(grpcSessions).flat()) session.close();
  for (const server of servers) await server.stop();
}
