// SIGTERM over HTTP as `npm start` runs it (dist/server.js; http/connections.ts): a kept-alive connection
// with nothing unanswered is half-closed at once and lingers until its client closes; a connection
// whose request was still arriving keeps its request: the answer comes whole, says
// `connection: close`, and only then is that connection half-closed. The process exits 0 once both
// clients have closed.
import { afterEach, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { logged, MSGPACK, msgpackBody, rawConnection, startServer, values, waitFor, type ServerProcess } from './helpers.js';

let server: ServerProcess | null = null;
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.kill();
  server = null;
});

const body = msgpackBody(values(8), [1, 8]);
const head = `POST /v1/rmsnorm HTTP/1.1\r\nhost: x\r\ncontent-type: ${MSGPACK}\r\naccept: ${MSGPACK}\r\ncontent-length: ${body.length}\r\n\r\n`;
const ended = (socket: Socket) => new Promise<void>((resolve) => socket.once('end', resolve));

async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

it('SIGTERM: an idle kept-alive connection is half-closed, a request still arriving is answered whole with connection: close, exit 0', async () => {
  server = await startServer({ GRPC_PORT: 'off' });
  const idle = rawConnection(server.port, sockets);
  idle.socket.write(Buffer.concat([Buffer.from(head), body]));
  await waitFor('the idle connection\'s first answer', () => idle.socket.bytesRead > 0);
  const idleEnded = ended(idle.socket);
  const idlePort = idle.socket.localPort;

  const arriving = rawConnection(server.port, sockets);
  arriving.socket.write(Buffer.concat([Buffer.from(head), body.subarray(0, 10)]));
  await waitFor('the arriving request admitted', async () => (await metric(server!.url, 'norm_requests_receiving')) === 1);
  const arrivingEnded = ended(arriving.socket);
  const arrivingPort = arriving.socket.localPort;

  process.kill(server.pid, 'SIGTERM');
  await waitFor('draining', () => logged(server!.lines, 'draining').length === 1);
  await idleEnded; // the server's FIN ('end'; a reset would be an 'error' and no 'end')

  arriving.socket.write(body.subarray(10));
  await arrivingEnded;
  idle.socket.end();
  arriving.socket.end();
  const [first, second] = [await idle.answer, await arriving.answer];
  expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(first).toMatch(/\r\nConnection: keep-alive\r\n/i);
  expect(second).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(second).toMatch(/\r\nconnection: close\r\n/i);
  // the whole answer: its declared length, all of it
  const [secondHead, secondBody] = [second.slice(0, second.indexOf('\r\n\r\n')), second.slice(second.indexOf('\r\n\r\n') + 4)];
  expect(secondBody.length).toBe(Number(/content-length: (\d+)/i.exec(secondHead)![1]));
  expect(await server.exit).toEqual({ code: 0, signal: null });
  expect(logged(server.lines, 'lingering until the client closes').map((l) => l.remotePort).sort())
    .toEqual([idlePort, arrivingPort].sort());
});
