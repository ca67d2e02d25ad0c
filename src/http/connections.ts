// the open HTTP connections and how many requests each has not answered yet, for draining: while the
// service drains, answers close their connections, and a connection is half-closed (not destroyed)
// once its answers are out and lingers until its client closes it.
//
// Why: close() waits for every connection, and a client's kept-alive one would hold it until it idles
// out (fastify's keepAliveTimeout is 72 s). Node destroys a connection it closes as soon as the answer
// is in kernel buffers, and close() destroys idle kept-alive ones outright; exiting then can cut an
// answer short (in a container the port proxy and network go with the process). Half-closing instead
// lets the client's own close end the connection, so close() resolves once every client has read its
// answer (bounded by LINGER_MS).
import type { FastifyBaseLogger } from 'fastify';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ServiceState } from '../engine/admission.js';

const LINGER_MS = 3_000; // for a client to read its last answer and close; within the drain's grace

export class Connections {
  /** every open connection, with the number of its requests not yet answered */
  private readonly unanswered = new Map<Socket, number>();
  private readonly lingering = new WeakSet<Socket>();

  constructor(private readonly service: ServiceState, private readonly log: FastifyBaseLogger) {}

  /** follows `server`'s connections, and makes its closeIdleConnections (called by close(): Node's
   *  own pre-close step and fastify's) linger rather than destroy */
  track(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.unanswered.set(socket, 0);
      socket.once('close', () => this.unanswered.delete(socket));
      const destroySoon = socket.destroySoon.bind(socket);
      socket.destroySoon = () => (this.service.draining ? this.linger(socket) : destroySoon());
    });
    server.closeIdleConnections = () => {
      for (const [socket, count] of this.unanswered) if (count === 0) this.linger(socket);
    };
  }

  /** a request came on `socket` (http/request-scope.ts, as it arrives); a connection this does not
   *  follow (an app that is not listening: inject) is left alone */
  arrived(socket: Socket): void {
    const count = this.unanswered.get(socket);
    if (count !== undefined) this.unanswered.set(socket, count + 1);
  }

  /** its answer is out, or its client went away (the request's close) */
  answered(socket: Socket): void {
    const count = this.unanswered.get(socket);
    if (count === undefined) return;
    this.unanswered.set(socket, count - 1);
    // an answer whose headers went out before the drain began said keep-alive: end its connection too
    if (this.service.draining) this.linger(socket);
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
