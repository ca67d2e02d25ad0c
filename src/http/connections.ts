// the open HTTP connections and how many requests each has not answered yet, for draining: while the
// service drains, a connection's latest request is answered with `connection: close` (those a client
// pipelined before it keep-alive, so none is cut off), and a connection is half-closed (not
// destroyed) once its answers are out and lingers until its client closes it.
//
// Why: close() waits for every connection, and a client's kept-alive one would hold it until it idles
// out (fastify's keepAliveTimeout is 72 s). Node destroys a connection it closes as soon as the answer
// is in kernel buffers, and close() destroys idle kept-alive ones outright; exiting then can cut an
// answer short (in a container the port proxy and network go with the process). Half-closing instead
// lets the client's own close end the connection, so close() resolves once every client has read its
// answer (bounded by LINGER_MS).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import type { ServiceState } from '../engine/admission.js';

const LINGER_MS = 3_000; // for a client to read its last answer and close; within the drain's grace

/** a followed connection: its requests not yet answered, and how many have arrived on it */
interface Followed { unanswered: number; arrivals: number }

export class Connections {
  /** every open connection */
  private readonly followed = new Map<Socket, Followed>();
  private readonly lingering = new WeakSet<Socket>();

  constructor(private readonly service: ServiceState, private readonly log: FastifyBaseLogger) {}

  /** follows `app`'s connections once it listens (call before it is ready), makes its server's
   *  closeIdleConnections (called by close(): Node's own pre-close step and fastify's) linger rather
   *  than destroy, and, while draining, answers each connection's latest request with `connection:
   *  close` (Node writes a connection's answers in request order, whichever is ready first) */
  track(app: FastifyInstance): void {
    const server = app.server;
    // a callback hook: an async one costs every answer a promise
    app.addHook('onSend', (request, reply, payload, done) => {
      if (this.service.draining && this.latest(request.raw.socket, request.arrival)) reply.header('connection', 'close');
      done(null, payload);
    });
    server.on('connection', (socket: Socket) => {
      this.followed.set(socket, { unanswered: 0, arrivals: 0 });
      socket.once('close', () => this.followed.delete(socket));
      const destroySoon = socket.destroySoon.bind(socket);
      socket.destroySoon = () => (this.service.draining ? this.linger(socket) : destroySoon());
    });
    server.closeIdleConnections = () => {
      for (const [socket, f] of this.followed) if (f.unanswered === 0) this.linger(socket);
    };
  }

  /** a request came on `socket` (http/request-scope.ts, as it arrives): its number on the connection,
   *  from 1; 0 on a connection this does not follow (an app that is not listening: inject) */
  arrived(socket: Socket): number {
    const f = this.followed.get(socket);
    if (f === undefined) return 0;
    f.unanswered++;
    return ++f.arrivals;
  }

  /** its answer is out, or its client went away (the request's close) */
  answered(socket: Socket): void {
    const f = this.followed.get(socket);
    if (f === undefined) return;
    f.unanswered--;
    // an answer whose headers went out before the drain began said keep-alive: end its connection
    // too, once nothing more on it waits for an answer
    if (this.service.draining && f.unanswered === 0) this.linger(socket);
  }

  /** whether request number `arrival` is the latest to have come on `socket` (on a connection this
   *  does not follow, every request is) */
  private latest(socket: Socket, arrival: number): boolean {
    const f = this.followed.get(socket);
    return f === undefined || f.arrivals === arrival;
  }

  /** once per socket: both destroySoon and an answer's end, or two close() calls, may ask */
  private linger(socket: Socket): void {
    if (this.lingering.has(socket)) return;
    this.lingering.add(socket);
    this.log.info({ remotePort: socket.remotePort }, 'lingering until the client closes');
    socket.end(); // the client's FIN then destroys it (autoDestroy)
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  }
}
