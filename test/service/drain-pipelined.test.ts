// draining with requests pipelined on one connection (http/connections.ts): the connection's latest
// request is answered with `connection: close`, the ones before it keep-alive, whichever finishes
// first, so every request the client sent before the drain gets its whole answer, in order, and only
// then is the connection half-closed. In process, the entry point's tracking on a listening app; the
// first request held at the fault gate until the second, whose body ends after the drain began, has
// been answered.
import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { closeApp, faultGate } from '../helpers/fault-gate.js';
import { buildReadyApp, decodeMsgpack, float32Mismatches, float32Of, MSGPACK, msgpackBody, rawConnection, referenceRmsnorm, values, waitFor } from './helpers.js';

/** the app a test opened (drainingSetup), closed after it */
let opened: FastifyInstance | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await closeApp(opened);
  opened = undefined;
});

const N = 8;
const request = (x: Float32Array, headers = '') => {
  const body = msgpackBody(x, [1, N]);
  const head = `POST /v1/rmsnorm HTTP/1.1\r\nhost: x\r\ncontent-type: ${MSGPACK}\r\naccept: ${MSGPACK}\r\n${headers}content-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
};

interface Answer { status: string; headers: Record<string, string>; body: Buffer }

/** the HTTP/1.1 answers in `text` (latin1), one after the other by their content-length */
function answers(text: string): Answer[] {
  const out: Answer[] = [];
  for (let at = 0; at < text.length;) {
    const end = text.indexOf('\r\n\r\n', at);
    const [status, ...lines] = text.slice(at, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length']);
    out.push({ status, headers, body: Buffer.from(text.slice(end + 4, end + 4 + length), 'latin1') });
    at = end + 4 + length;
  }
  return out;
}

/**
 * a listening app with the entry point's connection tracking, every request to the pool (two workers;
 * `X-Test-Fault: hold` waits at the gate), and one raw connection to it. `sent`: each answer's number on
 * its connection, as fastify sends it; `ended`: the server's FIN on the connection
 */
async function drainingSetup() {
  const sent: number[] = [];
  const ready = await buildReadyApp({ workers: 2, faultInjection: true, inlineMaxElements: 0 }, (a) => {
    a.connections.track(a);
    // each request's number as it arrives (on the one connection), pushed as it is sent
    let arrivals = 0;
    const numbers = new WeakMap<object, number>();
    a.addHook('onRequest', (req, _reply, done) => {
      numbers.set(req, ++arrivals);
      done();
    });
    a.addHook('onSend', (req, _reply, payload, done) => {
      sent.push(numbers.get(req)!);
      done(null, payload);
    });
  });
  opened = ready;
  await ready.listen({ port: 0, host: '127.0.0.1' });
  const connection = rawConnection((ready.server.address() as { port: number }).port, sockets);
  const ended = new Promise<void>((resolve) => connection.socket.once('end', resolve));
  return { app: ready, sent, gate: faultGate(ready), connection, ended };
}

/** what SIGTERM does (src/server.ts): the flag, each connection's latest answer marked to close it,
 *  then the listener closed */
function startDrain(drained: FastifyInstance): void {
  drained.service.draining = true;
  drained.connections.drain();
  drained.server.close();
}

it('draining: of two pipelined requests, the first (finishing last) answers keep-alive, the second connection: close; both whole, in order, then the server\'s FIN', async () => {
  // the first held at the gate, the second computed beside it
  const { app, sent, gate, connection, ended } = await drainingSetup();
  const [x1, x2] = [values(N, 1), values(N, 2)];
  // the second request's last bytes wait until the drain has begun, so that it is answered after
  const late = request(x2);
  connection.socket.write(Buffer.concat([request(x1, 'x-test-fault: hold\r\n'), late.subarray(0, late.length - 4)]));
  await gate.held(1);
  // the first at work, the second admitted and its body still arriving
  await waitFor('both requests admitted', () => (app.service.inFlight === 1 && app.service.receiving === 1) || undefined);
  startDrain(app);
  connection.socket.write(late.subarray(late.length - 4));
  // the second is answered first (Node holds its bytes until the first's are out)
  await waitFor('the second request answered', () => sent.includes(2) || undefined);
  expect(sent).toEqual([2]);
  gate.open();

  await ended; // a FIN, once both answers are out
  connection.socket.end();
  const [first, second, ...more] = answers(await connection.answer);
  expect(more).toEqual([]);
  for (const [answer, x] of [[first, x1], [second, x2]] as const) {
    expect(answer.status).toBe('HTTP/1.1 200 OK');
    expect(float32Mismatches(float32Of(decodeMsgpack(answer.body).output), referenceRmsnorm(x, N))).toEqual([]);
  }
  expect(first.headers.connection).toBe('keep-alive');
  expect(second.headers.connection).toBe('close');
});

it('draining: a request that comes on a busy connection after the drain began is refused with connection: close, the one before it answers keep-alive', async () => {
  const { app, sent, gate, connection, ended } = await drainingSetup();
  const x1 = values(N, 1);
  connection.socket.write(request(x1, 'x-test-fault: hold\r\n'));
  await gate.held(1);
  startDrain(app);
  // the second request arrives during the drain: it is now the connection's latest
  connection.socket.write(request(values(N, 2)));
  await waitFor('the second request refused', () => sent.includes(2) || undefined);
  gate.open();

  await ended;
  connection.socket.end();
  const [first, second, ...more] = answers(await connection.answer);
  expect(more).toEqual([]);
  expect(first.status).toBe('HTTP/1.1 200 OK');
  expect(float32Mismatches(float32Of(decodeMsgpack(first.body).output), referenceRmsnorm(x1, N))).toEqual([]);
  expect(first.headers.connection).toBe('keep-alive');
  expect(second.status).toBe('HTTP/1.1 503 Service Unavailable');
  expect(JSON.parse(second.body.toString()).code).toBe('NORM_ERR_SHUTTING_DOWN');
  expect(second.headers.connection).toBe('close');
});
