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
//
// The latest answer is marked as the drain begins and as each request arrives during it (Node's own
// shouldKeepAlive, which it reads when it writes the head: `Connection: close`, the connection ended
// after that answer), not checked as each answer is sent: an onSend hook costs every answer fastify's
// hook runner (a copy without it took 0.964 of the CPU per small request, npm run ab at 4,000 req/s;
// this change about 0.97 over four runs in both orders, each ±4 %).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServiceState } from '../engine/admission.js';

const LINGER_MS = 3_000; // for a client to read its last answer and close; within the drain's grace

/** a followed connection: its requests not yet answered, and the answer to its latest */
interface Followed { unanswered: number; latest: ServerResponse | null }

// each socket's record is also kept on the socket itself: a request's arrival and answer read it
// there, not by two Map lookups each (the Map is for the drain's walks over every connection)
const FOLLOWED = Symbol('followed');
type FollowedSocket = Socket & { [FOLLOWED]?: Followed };

export class Connections {
  /** every open connection */
  private readonly followed = new Map<Socket, Followed>();
  private readonly lingering = new WeakSet<Socket>();
  /** answers this made close their connection (Node had them keep it alive) */
  private readonly closing = new WeakSet<ServerResponse>();

  constructor(private readonly service: ServiceState, private readonly log: FastifyBaseLogger) {}

  /** follows `app`'s connections once it listens (call before it is ready) and makes its server's
   *  closeIdleConnections (called by close(): Node's own pre-close step and fastify's) linger rather
   *  than destroy */
  track(app: FastifyInstance): void {
    const server = app.server;
    server.on('connection', (socket: Socket) => {
      const followed: Followed = { unanswered: 0, latest: null };
      (socket as FollowedSocket)[FOLLOWED] = followed;
      this.followed.set(socket, followed);
      socket.once('close', () => this.followed.delete(socket));
      const destroySoon = socket.destroySoon.bind(socket);
      socket.destroySoon = () => (this.service.draining ? this.linger(socket) : destroySoon());
    });
    server.closeIdleConnections = () => {
      for (const [socket, f] of this.followed) if (f.unanswered === 0) this.linger(socket);
    };
  }

  /** the service begins to drain (service.draining is set): each connection's latest answer, unless
   *  its head is out, will close it */
  drain(): void {
    for (const f of this.followed.values()) if (f.latest !== null) this.closeWith(f.latest);
  }

  /** a request came on `socket` (http/request-scope.ts, as it arrives), to be answered with `res`;
   *  while draining, `res` closes the connection and the answer before it, if its head is not out,
   *  keeps it alive again. A connection this does not follow (an app that is not listening: inject)
   *  is ignored */
  arrived(socket: Socket, res: ServerResponse): void {
    const f = (socket as FollowedSocket)[FOLLOWED];
    if (f === undefined) return;
    f.unanswered++;
    if (this.service.draining) {
      const before = f.latest;
      if (before !== null && this.closing.delete(before) && !before.headersSent) before.shouldKeepAlive = true;
      this.closeWith(res);
    }
    f.latest = res;
  }

  /** its answer is out, or its client went away (the request's close) */
  answered(socket: Socket): void {
    const f = (socket as FollowedSocket)[FOLLOWED];
    if (f === undefined) return;
    f.unanswered--;
    if (f.unanswered > 0) return;
    // every answer on it is out: none left to mark, and an idle connection keeps no request alive
    f.latest = null;
    // an answer whose headers went out before the drain began said keep-alive: end its connection
    // too, once nothing more on it waits for an answer
    if (this.service.draining) this.linger(socket);
  }

  /** `res`, unless its head is out or it already closes its connection (HTTP/1.0, the client's
   *  `Connection: close`), closes it */
  private closeWith(res: ServerResponse): void {
    if (res.headersSent || !res.shouldKeepAlive) return;
    res.shouldKeepAlive = false;
    this.closing.add(res);
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
