// the access log (docs/api.md, ACCESS_LOG): fastify's per-request lines through its LogController, as
// one 'request completed' line at info per request with the request's method and url in it (fastify
// writes those in a second line per request, 'incoming request', which comes at debug here). A
// request that errored is logged as fastify does, whatever ACCESS_LOG says.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

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
    else if (this.enabled) request.server.log.info({ [this.requestIdLogLabel]: request.id, req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
