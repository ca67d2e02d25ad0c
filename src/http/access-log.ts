// the request log (docs/api.md, ACCESS_LOG) as fastify's LogController. Fastify's own logger is off
// (app.ts), so its request and reply loggers are silent and every line about a request is written
// here through the service's logger (app.log) with the request's id: one 'request completed' line at
// info per request when its answer has been written (http/request-scope.ts calls `completed`), with
// its method and url (fastify wrote those in a second line, 'incoming request', which comes at debug
// here), and fastify's lines about a request's errors, whatever ACCESS_LOG says.
//
// The access line is put together by access-line.ts: into the service's log destination as bytes,
// to any other stream as text; either way in turn with every other line.
import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino, type Logger } from 'pino';
import { LogDestination } from '../log-destination.js';
import { accessLine, writeAccessLine, type PinoParts } from './access-line.js';

/** what fastify's logger writes of a request, a reply and an error (fastify/lib/logger-pino.js) */
export const LOG_SERIALIZERS = {
  req: (request: FastifyRequest) => ({
    method: request.method, url: request.url, version: request.headers?.['accept-version'], host: request.host,
    remoteAddress: request.ip, remotePort: request.socket ? request.socket.remotePort : undefined,
  }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
  err: pino.stdSerializers.err,
};

// levels compared by number: isLevelEnabled looks the name up and calls a comparison each request
const { debug: DEBUG, info: INFO } = pino.levels.values;

export class AccessLog extends LogController {
  constructor(private readonly enabled: boolean) {
    super();
  }

  /** the request's answer was written, `responseTime` ms after it came */
  completed(request: FastifyRequest, reply: FastifyReply, responseTime: number): void {
    if (!this.enabled) return;
    // the app's logger is pino's (app.ts), its levels the default ones, in ascending order
    const log = request.server.log as Logger;
    if (log.levelVal > INFO) return;
    const stream = (log as unknown as PinoParts)[pino.symbols.streamSym];
    if (stream instanceof LogDestination && writeAccessLine(stream, log, this.requestIdLogLabel, request, reply, responseTime)) return;
    stream.write(accessLine(log, this.requestIdLogLabel, request, reply, responseTime));
  }

  /** the answer broke off with `error` as it was written (fastify's 'request errored' line) */
  errored(request: FastifyRequest, reply: FastifyReply, error: Error, responseTime: number): void {
    request.server.log.error({ [this.requestIdLogLabel]: request.id, res: reply, err: error, responseTime }, 'request errored');
  }

  override incomingRequest(request: FastifyRequest): void {
    const log = request.server.log as Logger;
    if (log.levelVal <= DEBUG) log.debug({ [this.requestIdLogLabel]: request.id, req: request }, 'incoming request');
  }

  // fastify's other lines about a request, written as its LogController writes them, by a child of
  // app.log bound to the request's id in place of the silent loggers (rare: no cost to a request).
  // Not requestCompleted: fastify calls it from the answer's listeners, which it sets up only with a
  // logger of its own or an onResponse hook (`completed` and `errored` stand in for it)
  private speak(request: FastifyRequest, reply: FastifyReply): void {
    const child = request.server.log.child({ [this.requestIdLogLabel]: request.id });
    request.log = child;
    reply.log = child;
  }

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    this.speak(request, reply);
    super.defaultErrorLog(error, request, reply);
  }

  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    this.speak(request, reply);
    super.streamError(error, request, reply);
  }

  override routeNotFound(request: FastifyRequest, reply: FastifyReply): void {
    this.speak(request, reply);
    super.routeNotFound(request, reply);
  }

  override writeHeadError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    this.speak(request, reply);
    super.writeHeadError(error, request, reply);
  }

  override serializerError(error: Error, request: FastifyRequest, reply: FastifyReply, metadata: { statusCode: number }): void {
    this.speak(request, reply);
    super.serializerError(error, request, reply, metadata);
  }

  override serviceUnavailable(_logger: FastifyBaseLogger, server: FastifyInstance): void {
    super.serviceUnavailable(server.log, server);
  }
}
