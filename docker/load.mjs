// bounded autocannon load through the load balancer: RMSNorm and LayerNorm JSON requests
// in turn, every response body compared with the one checked against the float64
// reference before the run. Prints one JSON line of figures; exits 1 on any failure.
//   node docker/load.mjs http://127.0.0.1:18080 [seconds] [connections]
import autocannon from 'autocannon';
import { firstMismatch, reference } from './norm-reference.mjs';

const [base, seconds = '12', connections = '16'] = process.argv.slice(2);
const x = [1, 2, 3, 4, -1, -2, -3, -5];
const requests = [
  { op: 'rmsnorm', body: { input: { shape: [2, 4], data: x }, eps: 0 } },
  { op: 'layernorm', body: { input: { shape: [2, 4], data: x } } },
];

// the exact bodies a correct server answers, checked once against the reference
const expected = new Set();
for (const { op, body } of requests) {
  const res = await fetch(`${base}/v1/${op}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const data = JSON.parse(text).output?.data ?? [];
  if (res.status !== 200 || firstMismatch(data, reference(op, x, 4, body.eps === undefined ? {} : { eps: body.eps })) >= 0) {
    throw new Error(`${op}: ${res.status} ${text.slice(0, 200)}`);
  }
  expected.add(text);
}

const result = await autocannon({
  url: base,
  connections: Number(connections),
  duration: Number(seconds),
  timeout: 30,
  requests: requests.map(({ op, body }) => ({
    method: 'POST', path: `/v1/${op}`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  })),
  verifyBody: (text) => expected.has(text),
});

// every answer is checked by verifyBody, so a non-2xx is a mismatch too, and
// autocannon's errors include its timeouts: failed = errors + mismatches
const figures = {
  // requests still open when the duration ends are neither answered nor failed
  sent: result.requests.sent,
  answered: result.requests.total,
  correct: result.requests.total - result.mismatches,
  non2xx: result.non2xx,
  wrongBody: result.mismatches - result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  failed: result.errors + result.mismatches,
  rps: Math.round(result.requests.average),
  latencyP50ms: result.latency.p50,
  latencyP99ms: result.latency.p99,
  latencyMaxMs: result.latency.max,
  seconds: result.duration,
};
console.log(JSON.stringify(figures));
process.exit(figures.failed === 0 && figures.correct > 0 ? 0 : 1);
