// tensor memory that never wedges (issue 11, API.md §5 and §7): memory follows the bytes that arrived,
// a stalled body gets a 408 and gives everything back, a client that leaves mid-body too, a batch that
// runs out of memory at its k-th item gives back items 0…k−1, and after a burst of clients declaring
// 60 MB each every size that fits is served again. Each waits for events and gauges, never for time.
import { Agent, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Packr } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { closeApp } from '../helpers/fault-gate.js';
import {
  buildReadyApp, decodeMsgpack, float32Mismatches, float32Of, metricValue, MSGPACK, msgpackBody, parseMetrics,
  rawConnection, referenceRmsnorm, sampleValue, startServer, values, waitFor, type ServerProcess,
} from './helpers.js';

const MiB = 1024 * 1024;
const packr = new Packr({ useRecords: false });

let app: FastifyInstance | undefined;
let server: ServerProcess | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.kill();
  server = undefined;
  await closeApp(app);
  app = undefined;
});

/** a raw connection that sends the head of a msgpack POST declaring `declared` bytes, then `sent` bytes of it */
function partialBody(port: number, declared: number, sent: Buffer, type = MSGPACK): { socket: Socket; answer: Promise<string> } {
  const { socket, answer } = rawConnection(port, sockets);
  socket.write(`POST /v1/rmsnorm HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${declared}\r\n\r\n`);
  socket.write(sent);
  return { socket, answer };
}

async function rmsnormOk(url: string, rows: number, n: number): Promise<void> {
  const x = values(rows * n, rows);
  const res = await fetch(`${url}/v1/rmsnorm`, { method: 'POST', headers: { 'content-type': MSGPACK }, body: new Uint8Array(msgpackBody(x, [rows, n])) });
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(res.status, `${rows}×${n}: ${bytes.subarray(0, 200).toString()}`).toBe(200);
  expect(float32Mismatches(float32Of(decodeMsgpack(bytes).output), referenceRmsnorm(x, n))).toEqual([]);
}

const gauges = async (url: string) => {
  const samples = parseMetrics(await (await fetch(`${url}/metrics`)).text());
  return {
    inUse: sampleValue(samples, 'norm_tensor_memory_in_use_bytes')!,
  };
};

describe('the real server as `npm start` starts it', () => {
  it('70 clients declaring 60 MB and sending 1 KiB hold about 1 KiB each; then every size that fits is served', async () => {
    server = await startServer({});
    const { port, url } = server;
    const CLIENTS = 70;
    const clients = Array.from({ length: CLIENTS }, () => partialBody(port, 60_000_000, Buffer.alloc(1024, 0x90)));
    // the 70 KiB that arrived hold at most twice that (a body's first slab is twice what arrived),
    // not 70 × 60 MB of tensor memory
    const arrived = CLIENTS * 1024;
    await waitFor('the 70 partial bodies to arrive', async () => (await gauges(url)).inUse >= arrived);
    expect((await gauges(url)).inUse).toBeLessThanOrEqual(2 * arrived);
    // while they stall, large requests of other sizes are served
    await rmsnormOk(url, 1024, 4096); // 16 MiB
    await rmsnormOk(url, 512, 4096); // 8 MiB
    for (const { socket } of clients) socket.destroy();
    await Promise.all(clients.map((c) => c.answer));
    await waitFor('the partial bodies to be given back', async () => (await gauges(url)).inUse === 0);
    for (const [rows, n] of [[1, 256], [16, 4096], [256, 4096], [1024, 4096], [2048, 4096]]) await rmsnormOk(url, rows, n);
    expect(await gauges(url)).toEqual({ inUse: 0 });
  }, 60_000);
});

describe('an in-process server', () => {
  async function listening(options: Parameters<typeof buildReadyApp>[0]): Promise<{ port: number; url: string }> {
    app = await buildReadyApp(options);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { port, url: `http://127.0.0.1:${port}` };
  }

  it('a stalled body gets a coded 408 and its connection closed; others are served meanwhile; its memory comes back', async () => {
    const { port, url } = await listening({ bodyIdleTimeoutMs: 300 });
    const body = msgpackBody(values(64 * 256), [64, 256]);
    const slow = partialBody(port, body.length, body.subarray(0, 4096));
    await waitFor('the first 4 KiB to arrive', async () => (await gauges(url)).inUse >= 4096);
    await rmsnormOk(url, 64, 256);
    // the server answers and closes the connection: the answer is complete when the socket closes
    const answer = await slow.answer;
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      statusCode: 408, code: 'NORM_ERR_BODY_STALLED', error: 'Request Timeout', message: 'body: no bytes arrived for 300 ms',
    });
    await waitFor('the stalled body to be given back', async () => (await gauges(url)).inUse === 0);
  });

  it('a client that leaves mid-body gives its bytes back (msgpack and JSON alike: a growing slab)', async () => {
    const { port, url } = await listening({});
    const client = partialBody(port, 1 * MiB, Buffer.alloc(100_000, 1));
    await waitFor('the first bytes to arrive', async () => (await gauges(url)).inUse >= 100_000);
    expect((await gauges(url)).inUse).toBeLessThanOrEqual(200_064);
    client.socket.destroy();
    await waitFor('the bytes to be given back', async () => (await gauges(url)).inUse === 0);

    const json = partialBody(port, 1 * MiB, Buffer.from(`{"input":{"shape":[1],"data":[1${' '.repeat(99_969)}`), 'application/json');
    await waitFor('the JSON bytes to arrive', async () => (await gauges(url)).inUse >= 100_000);
    expect((await gauges(url)).inUse).toBeLessThanOrEqual(200_064);
    json.socket.destroy();
    await waitFor('the JSON bytes to be given back', async () => (await gauges(url)).inUse === 0);
  });

  it('a body refused for memory while it arrives gets its 503 (not a reset) and the connection stays usable', async () => {
    const { port } = await listening({ maxTensorMemoryBytes: 2 * MiB });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    type Answer = { status: number; retryAfter: unknown; reused: boolean; text: string };
    // settles once the answer has ended and the socket is back in the agent's pool ('free') or closed:
    // the 503 can end before the client has finished sending its body, and a next request sent in
    // between would get a new socket though the server kept this one
    const post = (body: Buffer) => new Promise<Answer>((resolve, reject) => {
      let answer: Answer | null = null;
      let released = false;
      const settle = () => { if (answer !== null && released) resolve(answer); };
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/rmsnorm', agent, headers: { 'content-type': MSGPACK, 'content-length': body.length } }, (res) => {
        let text = '';
        res.setEncoding('latin1');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          answer = { status: res.statusCode!, retryAfter: res.headers['retry-after'], reused: req.reusedSocket, text };
          settle();
        });
      });
      req.on('socket', (socket) => {
        const release = () => { released = true; settle(); };
        socket.once('free', release);
        socket.once('close', release);
      });
      req.on('error', reject);
      req.end(body);
    });
    try {
      const big = await post(msgpackBody(values(1024 * 1024), [1024, 1024])); // 4 MiB: over the 2 MiB budget
      expect(big.status, big.text).toBe(503);
      expect(big.retryAfter).toBe('1');
      expect(JSON.parse(big.text).message).toBe('shared tensor memory is exhausted; retry later');
      const small = await post(msgpackBody(values(64), [4, 16]));
      expect({ status: small.status, reused: small.reused }).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('a batch that runs out of memory at its 3rd item answers 503 and gives every slab back', async () => {
    // each item: 256×1024 float32 = 1 MiB in, 1 MiB out, and a packed answer holds its size again.
    // The body (3 MiB) and the outputs of items 0 and 1 fit in 5.5 MiB; item 2's output does not.
    app = await buildReadyApp({ maxTensorMemoryBytes: 5.5 * MiB, inlineMaxElements: 0 });
    const item = (seed: number) => ({ op: 'rmsnorm', input: { dtype: 'float32', shape: [256, 1024], data: Buffer.from(values(256 * 1024, seed).buffer) } });
    const payload = packr.pack({ requests: [item(1), item(2), item(3)] });
    const res = await app.inject({ method: 'POST', url: '/v1/batch', headers: { 'content-type': MSGPACK }, payload });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.json()).toMatchObject({ code: 'NORM_ERR_OVERLOADED', message: 'shared tensor memory is exhausted; retry later' });
    expect(await metricValue(app, 'norm_tensor_memory_in_use_bytes')).toBe(0);
    // a batch that fits (body, outputs and answer: 3 × 1 MiB and its headers) is served from the
    // memory the failed batch gave back
    const one = await app.inject({ method: 'POST', url: '/v1/batch', headers: { 'content-type': MSGPACK }, payload: packr.pack({ requests: [item(1)] }) });
    expect(one.statusCode).toBe(200);
    expect(await metricValue(app, 'norm_tensor_memory_in_use_bytes')).toBe(0);
  });
});
