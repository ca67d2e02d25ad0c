// real requests against a running container (or the load balancer), numbers checked:
// the contract's worked example, LayerNorm with weight and bias, a msgpack request,
// and /healthz, /readyz, /metrics; with a worker count, /readyz must report that many.
//   [API_KEY=…] node docker/smoke.mjs http://127.0.0.1:18080 [workers]
import { pack, unpack } from 'msgpackr';
import { assertClose, reference, sampleTensor, workedExample } from './norm-reference.mjs';

const base = process.argv[2] ?? 'http://127.0.0.1:8080';
const expectedWorkers = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
const auth = process.env.API_KEY ? { authorization: `Bearer ${process.env.API_KEY}` } : {};

async function post(path, body, type = 'application/json') {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { ...auth, 'content-type': type },
    body: type === 'application/json' ? JSON.stringify(body) : pack(body),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${Buffer.from(bytes).toString()}`);
  return type === 'application/json' ? JSON.parse(Buffer.from(bytes).toString()) : unpack(bytes);
}

async function get(path, expected) {
  const res = await fetch(base + path);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 200)}`);
  if (!text.includes(expected)) throw new Error(`GET ${path}: no "${expected}" in ${text.slice(0, 200)}`);
  return text;
}

await get('/healthz', 'ok');
const ready = JSON.parse(await get('/readyz', 'ready'));
if (expectedWorkers !== undefined && ready.workers !== expectedWorkers) {
  throw new Error(`/readyz: ${ready.workers} worker threads, expected ${expectedWorkers} (the container's CPU quota)`);
}

// the worked example, to the four decimals the contract prints
const rms = await post('/v1/rmsnorm', workedExample.body);
const rounded = rms.output.data.map((v) => Math.round(v * 1e4) / 1e4);
if (JSON.stringify(rounded) !== JSON.stringify(workedExample.rounded) || rms.output.dtype !== 'float32') {
  throw new Error(`rmsnorm worked example: got ${JSON.stringify(rms.output)}`);
}
assertClose('rmsnorm 2x4 eps 0', rms.output.data, reference('rmsnorm', workedExample.body.input.data, 4, { eps: 0 }));

// layernorm 3x5 with weight and bias, default eps, stats
const x = [1, 2, 3, 4, 5, -3, 0.5, 7, 2, -1, 10, 10.5, 9.5, 10, 11];
const weight = [1, 0.5, 2, -1, 1.5];
const bias = [0, 0.1, -0.2, 0.3, 1];
const ln = await post('/v1/layernorm', {
  input: { shape: [3, 5], data: x }, weight: { shape: [5], data: weight }, bias: { shape: [5], data: bias }, return_stats: true,
});
if (JSON.stringify(ln.output.shape) !== '[3,5]') throw new Error(`layernorm shape ${ln.output.shape}`);
assertClose('layernorm 3x5 weight bias', ln.output.data, reference('layernorm', x, 5, { weight, bias }));
const means = [0, 1, 2].map((r) => x.slice(r * 5, r * 5 + 5).reduce((a, b) => a + b) / 5);
assertClose('layernorm 3x5 mean', ln.mean.data, means);

// msgpack with binary float32 data: 64 rows of 4096
const big = sampleTensor(64 * 4096, 7);
const mp = await post('/v1/rmsnorm', { input: { dtype: 'float32', shape: [64, 4096], data: new Uint8Array(big.buffer) } }, 'application/msgpack');
const out = new Float32Array(mp.output.data.buffer.slice(mp.output.data.byteOffset, mp.output.data.byteOffset + mp.output.data.byteLength));
assertClose('rmsnorm 64x4096 msgpack', out, reference('rmsnorm', big, 4096));

await get('/metrics', 'norm_pool_workers');
await get('/docs/api.md', '# '); // the image carries docs/
// the API documentation, where this build serves it (a 404 means it has no such route yet)
const docs = [];
for (const [path, expected] of [['/openapi.json', '"openapi"'], ['/docs', 'swagger']]) {
  const res = await fetch(base + path);
  if (res.status === 404) continue;
  const text = await res.text();
  if (res.status !== 200 || !text.toLowerCase().includes(expected)) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 200)}`);
  docs.push(path);
}
console.log(`smoke: ${base} rmsnorm (worked example, 64x4096 msgpack) and layernorm (3x5 weight bias stats) within 1e-5; healthz, readyz (${ready.workers} workers), metrics, /docs/api.md${docs.map((d) => `, ${d}`).join('')} ok`);
