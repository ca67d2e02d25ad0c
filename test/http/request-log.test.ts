// the request log's lines besides the access line (src/http/access-log.ts): fastify's own logger is off
// (app.ts), so its lines about a request (a stream error, a route not found, …) and the service's
// 'incoming request' and 'request errored' are written through app.log, each with the request's id.
// A real pino logger writing into an array; fake requests and replies with the fields a line reads.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { AccessLog, LOG_SERIALIZERS } from '../../src/http/access-log.js';

function scene(level: string) {
  const written: Record<string, unknown>[] = [];
  const log = pino({ level, serializers: LOG_SERIALIZERS }, { write: (line: string) => written.push(JSON.parse(line) as Record<string, unknown>) });
  const server = { log } as unknown as FastifyInstance;
  // fastify's silent logger, as request.log and reply.log are with its logger off
  const silent = { info() {}, warn() {}, error() {}, debug() {}, fatal() {}, trace() {}, child: () => silent };
  const request = { id: 'req-7', method: 'POST', url: '/v1/rmsnorm', raw: { method: 'POST', url: '/v1/rmsnorm' }, headers: {}, server, log: silent, ip: '127.0.0.1', socket: { remotePort: 5000 } } as unknown as FastifyRequest;
  const reply = { statusCode: 500, log: silent, request } as unknown as FastifyReply;
  return { written, request, reply, server };
}

it('fastify\'s lines about a request carry its id, through app.log', () => {
  const { written, request, reply, server } = scene('info');
  const controller = new AccessLog(true);
  controller.streamError(new Error('socket gone'), request, reply);
  controller.routeNotFound(request, reply);
  controller.defaultErrorLog(new Error('boom'), request, reply);
  controller.serviceUnavailable(request.log, server);
  expect(written.map(({ level, reqId, msg }) => ({ level, reqId, msg }))).toEqual([
    { level: 40, reqId: 'req-7', msg: 'response terminated with an error with headers already sent' },
    { level: 30, reqId: 'req-7', msg: 'Route POST:/v1/rmsnorm not found' },
    { level: 50, reqId: 'req-7', msg: 'boom' },
    { level: 30, reqId: undefined, msg: 'request aborted - refusing to accept new requests as server is closing' },
  ]);
  expect(written[2]).toMatchObject({ err: { message: 'boom' }, res: { statusCode: 500 }, req: { method: 'POST', url: '/v1/rmsnorm' } });
});

it('an answer that broke off is logged at error with its id, status and time', () => {
  const { written, request, reply } = scene('info');
  new AccessLog(false).errored(request, reply, new Error('EPIPE'), 2.5);
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ level: 50, reqId: 'req-7', res: { statusCode: 500 }, err: { message: 'EPIPE' }, responseTime: 2.5, msg: 'request errored' });
});

it('incoming requests at debug only; the access line at info unless turned off', () => {
  for (const [level, enabled, expected] of [['debug', true, ['incoming request', 'request completed']], ['info', true, ['request completed']], ['info', false, []], ['warn', true, []]] as const) {
    const { written, request, reply } = scene(level);
    const controller = new AccessLog(enabled);
    controller.incomingRequest(request);
    controller.completed(request, reply, 1.25);
    expect(written.map((line) => line.msg), `${level} ${enabled}`).toEqual(expected);
    for (const line of written) expect(line.reqId).toBe('req-7');
  }
});
