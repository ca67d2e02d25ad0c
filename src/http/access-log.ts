// the access log (docs/api.md, ACCESS_LOG): fastify's per-request lines through its LogController, as
// one 'request completed' line at info per request with the request's method and url in it (fastify
// writes those in a second line per request, 'incoming request', which comes at debug here). A
// request that errored is logged as fastify does, whatever ACCESS_LOG says.
//
// The line is the one pino writes for `log.info({ reqId, req, res, responseTime }, 'request
// completed')` with fastify's serializers, byte for byte (test/http/access-line.test.ts holds it to
// pino's), but put together here: pino's generic path (serializers into a new object, each value
// stringified and joined, its key checks) was ~14 µs a line with its write (perf of small /v1 at
// 2,000 req/s), and a small request at info cost 0.929× as much without it (npm run ab). It goes to
// the logger's own stream, in turn with every other line.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino, type Logger } from 'pino';

/** the pino internals a line is put together from: the same the logger itself writes with */
interface PinoParts {
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.timeSym]: () => string;
  [pino.symbols.streamSym]: { write(line: string): unknown };
}

const text = JSON.stringify;

/** `{ req }` as fastify's serializer gives it (fastify/lib/logger-pino.js), as JSON: a field that is
 *  undefined is left out, as JSON.stringify leaves it out */
function reqJson(request: FastifyRequest): string {
  const version = request.headers['accept-version'];
  const host = request.host;
  const address = request.ip;
  const port = request.socket ? request.socket.remotePort : undefined;
  return `{"method":${text(request.method)},"url":${text(request.url)}${version === undefined ? '' : `,"version":${text(version)}`}${
    host === undefined ? '' : `,"host":${text(host)}`}${address === undefined ? '' : `,"remoteAddress":${text(address)}`}${
    port === undefined ? '' : `,"remotePort":${text(port)}`}}`;
}

/** the access line of `request`, answered with `reply`, as `log` writes it at info */
export function accessLine(log: FastifyBaseLogger, idLabel: string, request: FastifyRequest, reply: FastifyReply): string {
  const parts = log as unknown as PinoParts;
  return `{"level":30${parts[pino.symbols.timeSym]()}${parts[pino.symbols.chindingsSym]},${text(idLabel)}:${text(request.id)},"req":${
    reqJson(request)},"res":{"statusCode":${text(reply.statusCode)}},"responseTime":${text(reply.elapsedTime)},"msg":"request completed"}\n`;
}

export class AccessLog extends LogController {
  constructor(private readonly enabled: boolean) {
    super();
  }

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) super.requestCompleted(error, request, reply);
    // through the root logger, the id in the line: the request's own child logger is never made
    // for a request that went well (http/request-logger.ts)
    else if (this.enabled) {
      const log = request.server.log;
      // the app's logger is pino's (app.ts)
      if ((log as Logger).isLevelEnabled('info')) (log as unknown as PinoParts)[pino.symbols.streamSym].write(accessLine(log, this.requestIdLogLabel, request, reply));
    }
  }
}
