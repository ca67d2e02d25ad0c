// `docker stop` must let requests in flight finish. Opens a few large msgpack requests,
// sends their headers and half their bodies (so the server has admitted them), runs
// `docker stop`, waits for the server to log that it is draining, then sends the rest:
// every one must come back 200 with the right numbers.
//   node docker/drain-check.mjs http://127.0.0.1:18080 CONTAINER [requests]
import { spawn, execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pack, unpack } from 'msgpackr';
import { assertClose, reference, sampleTensor } from './norm-reference.mjs';

const [base, container, count = '4'] = process.argv.slice(2);
const ROWS = 128;
const COLS = 16384; // 128 x 16384 float32: 8 MiB a request
const READ_DELAY_MS = 1_000;
const docker = process.env.DOCKER ?? '/usr/bin/docker';

function openRequest(i) {
  const x = sampleTensor(ROWS * COLS, 100 + i);
  const body = pack({ input: { dtype: 'float32', shape: [ROWS, COLS], data: new Uint8Array(x.buffer) } });
  const url = new URL('/v1/rmsnorm', base);
  const req = request(url, { method: 'POST', headers: { 'content-type': 'application/msgpack', 'content-length': body.length } });
  const response = new Promise((resolve, reject) => {
    req.on('response', (res) => {
      const chunks = [];
      // a client slower to read than the server is to write: most of the answer is still in
      // socket buffers when the server has written its last byte
      res.pause();
      setTimeout(() => res.resume(), READ_DELAY_MS);
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('answer cut short')));
    });
    req.on('error', reject);
  });
  const half = body.length >> 1;
  req.write(body.subarray(0, half));
  return { x, response, finish: () => req.end(body.subarray(half)) };
}

function logs() {
  return execFileSync(docker, ['logs', container], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const inFlight = Array.from({ length: Number(count) }, (_, i) => openRequest(i));
// the server logs each request as its headers arrive, just before admitting it (at LOG_LEVEL=debug)
const arrived = () => logs().split('\n').filter((l) => l.includes('incoming request') && l.includes('/v1/rmsnorm')).length;
for (let i = 0; i < 100 && arrived() < inFlight.length; i++) await sleep(100);
await sleep(200);

const started = performance.now();
const stop = spawn(docker, ['stop', '-t', '40', container], { stdio: 'ignore' });
const stopped = new Promise((resolve) => stop.on('exit', resolve));

let draining = null;
for (let i = 0; i < 100 && draining === null; i++) {
  draining = logs().split('\n').find((line) => line.includes('"draining"')) ?? null;
  if (draining === null) await sleep(100);
}
if (draining === null) throw new Error('the server never logged "draining" after docker stop');
// admitted: holding a work slot, or (half a body sent) still receiving
const { inFlight: working, receiving = 0 } = JSON.parse(draining);
const admitted = working + receiving;

inFlight.forEach((r) => r.finish());
const results = await Promise.all(inFlight.map((r) => r.response));
results.forEach(({ status, body }, i) => {
  if (status !== 200) throw new Error(`request ${i}: ${status} ${body.toString().slice(0, 200)}`);
  const { output } = unpack(body);
  const y = new Float32Array(output.data.buffer.slice(output.data.byteOffset, output.data.byteOffset + output.data.byteLength));
  assertClose(`drained request ${i}`, y, reference('rmsnorm', inFlight[i].x, COLS));
});
await stopped;
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`drain: ${results.length} requests of ${ROWS}x${COLS} float32 in flight at SIGTERM (server counted ${admitted}: ${working} working, ${receiving} receiving), all 200 and correct; docker stop took ${seconds} s`);
if (admitted < results.length) throw new Error(`the server counted ${admitted} requests in flight, expected ${results.length}`);
