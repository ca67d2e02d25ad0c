// bounded autocannon load through the load balancer, small and medium requests in turn:
//   small:  RMSNorm and LayerNorm of 2 x 4, JSON
//   medium: RMSNorm of 32 x 4096 float32, a 512 KiB msgpack body (what HAProxy must buffer
//           to retry it), answered as JSON: autocannon hands its check each body as text
//           decoded chunk by chunk, which only an ASCII answer survives unchanged
// Every answer is compared with the one checked against the float64 reference before the
// run. Stops after `seconds`, or earlier on SIGTERM or SIGINT (the figures so far are kept).
// Prints one JSON line of figures; exits 1 on any failure.
//   API_KEY=… node docker/load.mjs http://127.0.0.1:18080 [seconds] [connections]
import autocannon from 'autocannon';
import { pack } from 'msgpackr';
import { firstMismatch, reference, sampleTensor } from './norm-reference.mjs';

const [base, seconds = '12', connections = '16'] = process.argv.slice(2);
const auth = process.env.API_KEY ? { authorization: `Bearer ${process.env.API_KEY}` } : {};
const JSON_TYPE = { ...auth, 'content-type': 'application/json' };
const x = [1, 2, 3, 4, -1, -2, -3, -5];
const medium = sampleTensor(32 * 4096, 11);
const requests = [
  { op: 'rmsnorm', rows: x, cols: 4, headers: JSON_TYPE, body: JSON.stringify({ input: { shape: [2, 4], data: x }, eps: 0 }), options: { eps: 0 } },
  { op: 'layernorm', rows: x, cols: 4, headers: JSON_TYPE, body: JSON.stringify({ input: { shape: [2, 4], data: x } }), options: {} },
  {
    op: 'rmsnorm', rows: medium, cols: 4096, options: {},
    headers: { ...auth, 'content-type': 'application/msgpack', accept: 'application/json' },
    body: pack({ input: { dtype: 'float32', shape: [32, 4096], data: new Uint8Array(medium.buffer) } }),
  },
];

// the exact bodies a correct server answers, checked once against the reference
const expected = new Set();
for (const { op, rows, cols, headers, body, options } of requests) {
  const res = await fetch(`${base}/v1/${op}`, { method: 'POST', headers, body });
  const text = await res.text();
  const data = res.status === 200 ? JSON.parse(text).output?.data ?? [] : [];
  if (res.status !== 200 || firstMismatch(data, reference(op, rows, cols, options)) >= 0) {
    throw new Error(`${op} ${rows.length / cols}x${cols}: ${res.status} ${text.slice(0, 200)}`);
  }
  expected.add(text);
}

// an answer cut off in the middle (a replica killed as it sent it) reaches the check as the start
// of a right one when its connection closes; counted apart, so that only a kill's cut may excuse it
let truncated = 0;
const cutShort = (text) => [...expected].some((e) => e.length > text.length && e.startsWith(text));

const instance = autocannon({
  url: base,
  connections: Number(connections),
  duration: Number(seconds),
  timeout: 30,
  requests: requests.map(({ op, headers, body }) => ({ method: 'POST', path: `/v1/${op}`, headers, body })),
  verifyBody: (text) => {
    if (expected.has(text)) return true;
    if (cutShort(text)) truncated++;
    return false;
  },
}, report);
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => instance.stop());

function report(err, result) {
  if (err) throw err;
  // every answer is checked by verifyBody, so a non-2xx is a mismatch too, and
  // autocannon's errors include its timeouts: failed = errors + mismatches
  const figures = {
    // requests still open when the load stops are neither answered nor failed
    sent: result.requests.sent,
    answered: result.requests.total,
    correct: result.requests.total - result.mismatches,
    non2xx: result.non2xx,
    // answers by status code, so a failure says which codes came back
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count])),
    wrongBody: result.mismatches - result.non2xx,
    // of those, answers that are the start of a right one: cut off as they were sent
    truncated,
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
}
