// bursts of concurrent 16 MiB RMSNorm requests against a server whose memory is bounded (a container
// started with --memory 512m): every answer must be a 200 with the right numbers or a 503 with
// Retry-After; a dropped connection or any other status fails. Prints one JSON line of figures.
//   node docker/memory-burst.mjs http://127.0.0.1:18080 [bursts=32,64,32,16]
import { pack, unpack } from 'msgpackr';
import { assertClose, reference, sampleTensor } from './norm-reference.mjs';

const base = process.argv[2] ?? 'http://127.0.0.1:8080';
const bursts = (process.argv[3] ?? '32,64,32,16').split(',').map(Number);
const ROWS = 1024;
const N = 4096; // 16 MiB of float32

const x = sampleTensor(ROWS * N, 7);
const body = pack({ input: { dtype: 'float32', shape: [ROWS, N], data: new Uint8Array(x.buffer) } });
const expected = reference('rmsnorm', x, N, { eps: 1e-6 });

async function one() {
  try {
    const res = await fetch(`${base}/v1/rmsnorm`, { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.status === 503) {
      if (res.headers.get('retry-after') === null) return 'a 503 without Retry-After';
      return 503;
    }
    if (res.status !== 200) return `status ${res.status}: ${Buffer.from(bytes.subarray(0, 200)).toString()}`;
    const out = unpack(bytes).output;
    const data = new Uint8Array(out.data); // aligned copy
    assertClose('output', new Float32Array(data.buffer, 0, data.byteLength / 4), expected);
    return 200;
  } catch (err) {
    return `request failed: ${err.cause?.code ?? err.cause?.message ?? err.message}`;
  }
}

const figures = { bursts, ok: 0, overloaded: 0, failures: [] };
for (const size of bursts) {
  const answers = await Promise.all(Array.from({ length: size }, one));
  for (const a of answers) {
    if (a === 200) figures.ok++;
    else if (a === 503) figures.overloaded++;
    else figures.failures.push(a);
  }
}
figures.failures = [...new Set(figures.failures)].slice(0, 5).concat(figures.failures.length > 0 ? [`${figures.failures.length} in all`] : []);
console.log(JSON.stringify(figures));
process.exit(figures.failures.length === 0 && figures.ok > 0 ? 0 : 1);
