// clients that send slowly or not at all never keep others from being served (API.md §5): a body
// still arriving holds no work slot, one that arrives under the minimum rate gets a 408 and its
// connection closed, and what the HTTP parser refuses (late or oversized headers, a malformed
// request) gets the coded body and X-Request-Id. Real sockets; synchronized on the server's counts.
import type { AddressInfo, Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { closeApp } from '../helpers/fault-gate.js';
import { buildReadyApp, rawConnection, waitFor } from './helpers.js';

let app: FastifyInstance | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await closeApp(app);
  app = undefined;
});

const BODY = JSON.stringify({ input: { shape: [1, 4], data: [1, 2, 3, 4] } });

async function listen(options: Parameters<typeof buildReadyApp>[0]): Promise<number> {
  app = await buildReadyApp(options);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

const open = (port: number) => rawConnection(port, sockets);

interface Parsed { status: number; headers: Record<string, string>; body: Record<string, unknown> }

function parse(raw: string): Parsed {
  const [head, body] = raw.split('\r\n\r\n', 2);
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as Record<string, unknown> };
}

/** the connection's one answer: a coded error with an X-Request-Id, its body for further checks */
async function refusal(answer: Promise<string>, status: number, code: string): Promise<Record<string, unknown>> {
  const parsed = parse(await answer);
  expect(parsed.status).toBe(status);
  expect(parsed.headers['x-request-id']).toMatch(/\S/);
  expect(parsed.body).toMatchObject({ statusCode: status, code });
  return parsed.body;
}

const post = async (port: number) => fetch(`http://127.0.0.1:${port}/v1/rmsnorm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });

describe('slow uploads', () => {
  it('uploads in progress hold no work slot: with every slot\'s worth of them open, a whole request is served', async () => {
    // MAX_QUEUE 1 + WORKERS 1 = 2 work slots; 6 uploads that will take their time
    const port = await listen({ workers: 1, maxQueue: 1, bodyMinRateGraceMs: 60_000 });
    const uploads = Array.from({ length: 6 }, () => open(port));
    for (const { socket } of uploads) socket.write(`POST /v1/rmsnorm HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n{`);
    await waitFor('six uploads admitted and receiving', () => app!.service.receiving === 6);
    const res = await post(port);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { output: { shape: number[] } }).output.shape).toEqual([1, 4]);
    expect(app!.service.receiving).toBe(6);
    // and each of them is served once its body is in
    for (const { socket } of uploads) socket.end(BODY.slice(1));
    const answers = await Promise.all(uploads.map(({ answer }) => answer));
    for (const raw of answers) expect(parse(raw).status).toBe(200);
  });

  it('a body under the minimum rate after the grace: 408 NORM_ERR_BODY_TOO_SLOW, X-Request-Id, connection closed, nothing left held', async () => {
    const port = await listen({ workers: 1, bodyMinRateGraceMs: 200, bodyMinBytesPerSecond: 1024 });
    const { socket, answer } = open(port);
    // declares 16 MiB and sends one byte: at 1 KiB/s it would need hours
    socket.write('POST /v1/rmsnorm HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\nContent-Length: 16777216\r\n\r\n\0');
    const body = await refusal(answer, 408, 'NORM_ERR_BODY_TOO_SLOW');
    expect(String(body.message)).toMatch(/^body: 1 bytes in \d+ ms, under the minimum rate of 1024 bytes\/s after the first 200 ms$/);
    await waitFor('its slot and memory given back', () => app!.service.receiving === 0 && app!.engine.slabs.inUseBytes === 0);
    expect((await post(port)).status).toBe(200);
  });
});

describe('what the HTTP parser refuses', () => {
  it('headers not complete in time: 408 NORM_ERR_HEADERS_TIMEOUT with X-Request-Id, connection closed', async () => {
    const port = await listen({ workers: 1, headersTimeoutMs: 200 });
    const { socket, answer } = open(port);
    socket.write('POST /v1/rmsnorm HTTP/1.1\r\nHost: x\r\nContent-Ty');
    expect(await refusal(answer, 408, 'NORM_ERR_HEADERS_TIMEOUT')).toEqual({
      statusCode: 408, code: 'NORM_ERR_HEADERS_TIMEOUT', error: 'Request Timeout', message: 'request headers: not complete within 200 ms',
    });
  });

  it('Content-Length with Transfer-Encoding: 400 NORM_ERR_REQUEST_MALFORMED with X-Request-Id', async () => {
    const port = await listen({ workers: 1 });
    const { socket, answer } = open(port);
    socket.write('POST /v1/rmsnorm HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n');
    expect(await refusal(answer, 400, 'NORM_ERR_REQUEST_MALFORMED')).toMatchObject({ error: 'Bad Request' });
  });

  it('a garbage request line and headers over 16 KiB: 400 and 431, coded', async () => {
    const port = await listen({ workers: 1 });
    const garbage = open(port);
    garbage.socket.write('HELLO THERE\r\n\r\n');
    await refusal(garbage.answer, 400, 'NORM_ERR_REQUEST_MALFORMED');
    const big = open(port);
    big.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
    expect(await refusal(big.answer, 431, 'NORM_ERR_HEADERS_TOO_LARGE')).toEqual({ statusCode: 431, code: 'NORM_ERR_HEADERS_TOO_LARGE', error: 'Request Header Fields Too Large', message: 'request headers: over the size limit' });
  });
});
