// SIGTERM on the real server process: stop accepting, finish what is in flight, exit 0 in bounded time.
import { Agent, request as httpRequest, type ClientRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  decodeMsgpack, float32Mismatches, float32Of, logged, MSGPACK, msgpackBody, referenceRmsnorm, startServer, values,
  waitFor, type ServerProcess,
} from './helpers.js';

const ROWS = 1024;
const N = 4096; // 16 MiB of float32 per request
const IN_FLIGHT = 4;

let server: ServerProcess | undefined;
afterEach(() => {
  server?.kill();
  server = undefined;
});

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** a POST whose body the caller writes; resolves with the whole answer, read once `readWhen` resolves */
function open(url: string, agent: Agent, length: number, readWhen?: Promise<void>): { req: ClientRequest; answer: Promise<Answer> } {
  const { hostname, port } = new URL(url);
  const req = httpRequest({
    host: hostname, port, method: 'POST', path: '/v1/rmsnorm', agent,
    headers: { 'content-type': MSGPACK, 'content-length': length },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      if (readWhen !== undefined) {
        res.pause();
        readWhen.then(() => res.resume(), reject);
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
  });
  return { req, answer };
}

/** a small request on a new connection: its connection error, or the answer if it was accepted */
function tryNewConnection(url: string): Promise<{ error?: string; status?: number; body?: string; retryAfter?: string }> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ input: { shape: [1, 2], data: [1, 2] } });
  return new Promise((resolve) => {
    const req = httpRequest({ host: hostname, port, method: 'POST', path: '/v1/rmsnorm', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text, retryAfter: res.headers['retry-after'] as string | undefined }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end(body);
  });
}

it('SIGTERM with large requests in flight: they finish with 200, new ones are refused, exit 0', async () => {
  // debug logs: "incoming request" says each request was admitted before SIGTERM is sent
  server = await startServer({ WORKERS: '2', LOG_LEVEL: 'debug', MAX_QUEUE: '16' });
  const x = values(ROWS * N);
  const body = msgpackBody(x, [ROWS, N]);
  const half = body.length >> 1;
  // keep-alive connections, as a real client pool holds them: draining must not wait for them to idle out
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  try {
    const inFlight = Array.from({ length: IN_FLIGHT }, () => open(server!.url, agent, body.length));
    // half of each body now, the rest after SIGTERM: all four are surely in flight when it arrives
    for (const { req } of inFlight) req.write(body.subarray(0, half));
    await waitFor('all requests admitted', () => logged(server!.lines, 'incoming request').filter((l) => (l.req as { url: string }).url === '/v1/rmsnorm').length === IN_FLIGHT);

    process.kill(server.pid, 'SIGTERM');
    await waitFor('the draining log line', () => logged(server!.lines, 'draining').length === 1);
    // half-sent bodies: admitted, still receiving, no work slot yet (engine/admission.ts)
    expect(logged(server.lines, 'draining')[0]).toMatchObject({ signal: 'SIGTERM', inFlight: 0, receiving: IN_FLIGHT });

    // the listener closed before the draining line was logged: a new connection is refused at once,
    // so a load balancer takes this replica out of rotation at its first try (no 503s to bounce on)
    expect(await tryNewConnection(server.url)).toEqual({ error: 'ECONNREFUSED' });

    for (const { req } of inFlight) req.end(body.subarray(half));
    const answers = await Promise.all(inFlight.map(({ answer }) => answer));
    const reference = referenceRmsnorm(x, N);
    for (const res of answers) {
      expect(res.status, res.body.subarray(0, 200).toString()).toBe(200);
      const { output } = decodeMsgpack(res.body);
      expect(output.shape).toEqual([ROWS, N]);
      expect(output.data.byteLength).toBe(ROWS * N * 4);
      expect(float32Mismatches(float32Of(output), reference)).toEqual([]);
    }

    // the exit itself is awaited: it comes after the last client has read its answer
    expect(await server.exit).toEqual({ code: 0, signal: null });
    expect(logged(server.lines, 'drained')).toHaveLength(1);
  } finally {
    agent.destroy();
  }
}, 30_000);

// outside a container the kernel would still deliver an answer left in its buffers after exit; in
// one, the port proxy and network go with the process, so the server must outlive the reading.
// A 2 MiB answer fits in the socket buffers: the server has written all of it at once.
describe.each([
  { when: 'in flight at SIGTERM', keepAlive: false },
  { when: 'answered just before SIGTERM, on a kept-alive connection', keepAlive: true },
])('SIGTERM with a client slow to read an answer $when', ({ keepAlive }) => {
  it('the process exits only after the client has read it all', async () => {
    server = await startServer({ WORKERS: '1', LOG_LEVEL: 'debug' });
    const rows = 128;
    const x = values(rows * N);
    const body = msgpackBody(x, [rows, N]);
    const agent = new Agent({ keepAlive });
    let exited = false;
    void server.exit.then(() => (exited = true));
    const ours = () => logged(server!.lines, 'incoming request').find((l) => (l.req as { url: string }).url === '/v1/rmsnorm');
    const completed = () => logged(server!.lines, 'request completed').some((l) => l.reqId === ours()?.reqId);
    try {
      // read only once the server lingers on the connection: an exit before that cuts the answer short
      const lingering = waitFor('the server to linger on our connection', () => {
        if (exited) throw new Error('the server exited while its answer was unread');
        return logged(server!.lines, 'lingering until the client closes').length > 0;
      }).then(() => undefined);
      const { req, answer } = open(server.url, agent, body.length, lingering);
      req.write(body.subarray(0, body.length >> 1));
      await waitFor('the request admitted', () => ours() !== undefined);
      if (keepAlive) {
        // the whole answer written (the connection now idle as far as the server knows), none of it read
        req.end(body.subarray(body.length >> 1));
        await waitFor('the answer written', completed);
        process.kill(server.pid, 'SIGTERM');
        await waitFor('the draining log line', () => logged(server!.lines, 'draining').length === 1);
        expect(logged(server.lines, 'draining')[0]).toMatchObject({ inFlight: 0 });
      } else {
        process.kill(server.pid, 'SIGTERM');
        await waitFor('the draining log line', () => logged(server!.lines, 'draining').length === 1);
        req.end(body.subarray(body.length >> 1));
      }
      const res = await answer;
      expect(exited, 'the server exited while its answer was unread').toBe(false);
      expect(res.status).toBe(200);
      expect(float32Mismatches(float32Of(decodeMsgpack(res.body).output), referenceRmsnorm(x, N))).toEqual([]);
      expect(await server.exit).toEqual({ code: 0, signal: null });
    } finally {
      agent.destroy();
    }
  }, 30_000);
});

it('SIGINT on an idle server: /readyz was 200, the process exits 0', async () => {
  server = await startServer({ WORKERS: '1', LOG_LEVEL: 'info' });
  process.kill(server.pid, 'SIGINT');
  expect(await server.exit).toEqual({ code: 0, signal: null });
  expect(logged(server.lines, 'draining')[0]).toMatchObject({ signal: 'SIGINT', inFlight: 0 });
  expect(logged(server.lines, 'drained')).toHaveLength(1);
}, 30_000);
