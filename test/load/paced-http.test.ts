// the equal-rate rows' HTTP client (load/paced-http.ts): every request sent is counted once, by how it
// ended, and no more requests are open at a time than it has connections. Nothing is timed: a run of
// a fixed amount ends when each request has ended, however fast the machine is.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptPool, pacedHttp } from '../../load/paced-http.js';

let server: Server;
let base = '';
let open = 0;
let mostOpen = 0;
let bodies: string[] = [];
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString());
      // answered on a later turn, so that requests overlap when the client lets them
      setImmediate(() => {
        open--;
        res.statusCode = req.url === '/refused' ? 503 : 200;
        res.end('answer');
      });
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const run = (path: string, amount: number, connections: number) =>
  pacedHttp({ url: `${base}${path}`, headers: { 'content-type': 'text/plain' }, body: 'the body', connections, rate: 20_000, amount });

describe('pacedHttp', () => {
  it('sends a fixed amount, each answered once, the body whole, over no more connections than it has', async () => {
    mostOpen = 0;
    bodies = [];
    connections = 0;
    const c = await run('/ok', 120, 3);
    expect(c).toMatchObject({ ok: 120, responses: 120, non2xx: 0, errors: 0, timeouts: 0 });
    expect(c.latencies).toHaveLength(120);
    expect(c.busySlices).toBeGreaterThan(0);
    expect(bodies).toHaveLength(120);
    expect(new Set(bodies)).toEqual(new Set(['the body']));
    // kept alive and reused: at most 3 connections, so at most 3 requests open at once
    expect(connections).toBeGreaterThan(0);
    expect(connections).toBeLessThanOrEqual(3);
    expect(mostOpen).toBeLessThanOrEqual(3);
  });

  it('sends run after run on a kept pool\'s connections and leaves them open', async () => {
    bodies = [];
    connections = 0;
    const pool = keptPool(`${base}/ok`, 3);
    try {
      for (let k = 0; k < 3; k++) {
        const c = await pacedHttp({ url: `${base}/ok`, headers: {}, body: `run ${k}`, connections: 3, rate: 20_000, amount: 60, pool });
        expect(c).toMatchObject({ ok: 60, responses: 60, errors: 0 });
      }
      expect(bodies.filter((b) => b === 'run 2')).toHaveLength(60);
      // three runs of 60 over the same at most 3 connections; a pool a run would have opened up to 9
      expect(connections).toBeGreaterThan(0);
      expect(connections).toBeLessThanOrEqual(3);
      // still open: one more request goes out on them
      expect((await pacedHttp({ url: `${base}/ok`, headers: {}, body: 'b', connections: 3, rate: 20_000, amount: 1, pool })).ok).toBe(1);
      expect(connections).toBeLessThanOrEqual(3);
    } finally {
      await pool.destroy();
    }
  });

  it('takes a duration run\'s window as the seconds it offered requests over, answered sooner or not', async () => {
    // 10 requests at 20 req/s, the last sent at 0.45 s and answered at once: 10 answers in the 0.5 s offered
    const c = await pacedHttp({ url: `${base}/ok`, headers: {}, body: 'b', connections: 2, rate: 20, duration: 0.5 });
    expect(c).toMatchObject({ ok: 10, responses: 10 });
    expect(c.seconds).toBeGreaterThanOrEqual(0.5);
  });

  it('counts answers that are not 2xx apart, with no latency', async () => {
    const c = await run('/refused', 40, 4);
    expect(c).toMatchObject({ ok: 0, responses: 40, non2xx: 40, errors: 0 });
    expect(c.latencies).toHaveLength(0);
  });

  it('counts a connection refused as an error, and ends', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const c = await pacedHttp({ url: `http://127.0.0.1:${port}/x`, headers: {}, body: 'b', connections: 2, rate: 20_000, amount: 10 });
    expect(c).toMatchObject({ ok: 0, responses: 0, errors: 10 });
  });
});
