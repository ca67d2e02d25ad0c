// the access log: at LOG_LEVEL=info one 'request completed' line per request, with its id, method, url,
// status and time; none with ACCESS_LOG=false; 'incoming request' only at debug. Lines are read after
// the process has exited (SIGINT), so every queued line has been written.
import { afterEach, expect, it } from 'vitest';
import { logged, startServer, type ServerProcess } from './helpers.js';

let server: ServerProcess | undefined;
afterEach(() => {
  server?.kill();
  server = undefined;
});

const post = (url: string, id: string, body: unknown) => fetch(`${url}/v1/rmsnorm`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: JSON.stringify(body),
});

async function requestsThenExit(env: Record<string, string>) {
  server = await startServer(env);
  expect((await post(server.url, 'access-ok', { input: { shape: [1, 4], data: [1, 2, 3, 4] } })).status).toBe(200);
  expect((await post(server.url, 'access-bad', { input: { shape: [1, 4], data: [1, 2, 3] } })).status).toBe(400);
  process.kill(server.pid, 'SIGINT');
  expect(await server.exit).toEqual({ code: 0, signal: null });
  return server.lines;
}

it('info: one line per request at its end, with what an operator needs; no incoming-request lines', async () => {
  const lines = await requestsThenExit({});
  const completed = logged(lines, 'request completed').filter((l) => String(l.reqId).startsWith('access-'));
  expect(completed, JSON.stringify(completed)).toHaveLength(2);
  // each is logged when its answer has been written, which under load may come after the next one's
  const byId = (id: string) => completed.find((l) => l.reqId === id);
  expect(byId('access-ok')).toMatchObject({ level: 30, req: { method: 'POST', url: '/v1/rmsnorm' }, res: { statusCode: 200 } });
  expect(byId('access-bad')).toMatchObject({ level: 30, req: { method: 'POST', url: '/v1/rmsnorm' }, res: { statusCode: 400 } });
  for (const line of completed) expect(typeof line.responseTime).toBe('number');
  expect(logged(lines, 'incoming request')).toEqual([]);
});

it('ACCESS_LOG=false: no access lines, the lifecycle lines still come', async () => {
  const lines = await requestsThenExit({ ACCESS_LOG: 'false' });
  expect(logged(lines, 'request completed')).toEqual([]);
  expect(logged(lines, 'drained')).toHaveLength(1);
});

it('debug: each request is logged as it comes in, too', async () => {
  const lines = await requestsThenExit({ LOG_LEVEL: 'debug' });
  const incoming = logged(lines, 'incoming request').filter((l) => String(l.reqId).startsWith('access-'));
  expect(incoming.map((l) => l.reqId)).toEqual(['access-ok', 'access-bad']); // logged as they come in: in order
  expect(incoming[0]).toMatchObject({ level: 20, req: { method: 'POST', url: '/v1/rmsnorm' } });
});
