// the access line put together by hand (http/access-line.ts), as text and as bytes written into a
// batch, against the line pino itself writes for log.info({ reqId, req, res, responseTime }, 'request
// completed') with fastify's own serializers and responseTime to the microsecond: the same text, byte
// for byte, for any id, method, url, host, address, port, status and time (fast-check).
import { createRequire } from 'node:module';
import fc from 'fast-check';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { accessLine, writeAccessLine, type LineBatch } from '../../src/http/access-line.js';
import { LOG_SERIALIZERS } from '../../src/http/access-log.js';

// fastify's serializers for req and res, as its pino logger has them (not exported from its index)
const { serializers } = createRequire(import.meta.url)('fastify/lib/logger-pino.js') as { serializers: pino.LoggerOptions['serializers'] };

function logger(): { log: pino.Logger; written: string[] } {
  const written: string[] = [];
  const log = pino({ serializers, timestamp: () => ',"time":1795800000123' }, { write: (line: string) => written.push(line) });
  return { log, written };
}

// what fastify's request ids can be: a caller's X-Request-Id when it matches http/request-id.ts's pattern, else a UUID
const requestId = fc.oneof(fc.uuid(), fc.stringMatching(/^[\w.:-]{1,128}$/));
/** the access line's responseTime: ms to the microsecond */
const toMicrosecond = (ms: number) => Math.round(ms * 1000) / 1000;

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const anyText = fc.string({ unit: 'binary', maxLength: 150 });

const requests = fc.record({
  id: requestId,
  method: fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'HEAD', 'PATCH'),
  url: anyText,
  version: maybe(anyText),
  host: maybe(anyText),
  ip: maybe(fc.oneof(fc.ipV4(), fc.ipV6())),
  port: maybe(fc.integer({ min: 0, max: 65535 })),
  hasSocket: fc.boolean(),
  statusCode: fc.integer({ min: 100, max: 599 }),
  // ms: any (past 2^31 µs too), near 0 either side, whole microseconds, 0, NaN
  elapsedTime: fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.double({ min: -5, max: 5, noNaN: true }),
    fc.integer({ min: 0, max: 100_000 }).map((us) => us / 1000), fc.constant(0), fc.constant(Number.NaN)),
});

const fastifyRequest = (r: typeof requests extends fc.Arbitrary<infer R> ? R : never) => ({
  id: r.id, method: r.method, url: r.url, host: r.host, ip: r.ip,
  headers: r.version === undefined ? {} : { 'accept-version': r.version },
  socket: r.hasSocket ? { remotePort: r.port } : undefined,
}) as unknown as FastifyRequest;

it('the service logger\'s serializers write a request and a reply as fastify\'s do', () => {
  fc.assert(
    fc.property(requests, (r) => {
      const request = fastifyRequest(r);
      const reply = { statusCode: r.statusCode } as unknown as FastifyReply;
      expect(LOG_SERIALIZERS.req(request)).toEqual(serializers!.req(request));
      expect(LOG_SERIALIZERS.res(reply)).toEqual(serializers!.res(reply));
    }),
    { numRuns: 500 },
  );
  expect(LOG_SERIALIZERS.err).toBe(serializers!.err);
});

it('is the line pino writes with fastify\'s serializers', () => {
  fc.assert(
    fc.property(requests, (r) => {
      const request = fastifyRequest(r);
      const reply = { statusCode: r.statusCode } as unknown as FastifyReply;
      const { log, written } = logger();
      log.info({ reqId: request.id, req: request, res: reply, responseTime: toMicrosecond(r.elapsedTime) }, 'request completed');
      expect(written).toHaveLength(1);
      expect(accessLine(log as unknown as FastifyBaseLogger, 'reqId', request, reply, r.elapsedTime)).toBe(written[0]);
    }),
    { numRuns: 2000 },
  );
});

it('carries the logger\'s own bindings and a label of another name', () => {
  const { log, written } = logger();
  const child = log.child({ scope: 'v1' });
  const request = { id: 'abc-1', method: 'POST', url: '/v1/rmsnorm', host: 'h:1', ip: '127.0.0.1', headers: {}, socket: { remotePort: 4000 } } as unknown as FastifyRequest;
  const reply = { statusCode: 200 } as unknown as FastifyReply;
  child.info({ requestId: request.id, req: request, res: reply, responseTime: 1.5 }, 'request completed');
  const line = accessLine(child as unknown as FastifyBaseLogger, 'requestId', request, reply, 1.5);
  expect(line).toBe(written[0]);
  expect(JSON.parse(line)).toMatchObject({ level: 30, scope: 'v1', requestId: 'abc-1', req: { method: 'POST', url: '/v1/rmsnorm', host: 'h:1', remoteAddress: '127.0.0.1', remotePort: 4000 }, res: { statusCode: 200 }, responseTime: 1.5, msg: 'request completed' });
});

/** a batch as the log destination gives it: what was written into it, and how often it was full */
function batchOf(size: number) {
  const bytes = Buffer.alloc(size);
  const batch = {
    used: 0, full: 0, open: true,
    room(most: number) {
      if (!this.open || most > size) return null;
      if (most > size - this.used) {
        this.full++;
        this.used = 0;
      }
      return bytes;
    },
    get gathered() { return this.used; },
    gatheredTo(end: number) { this.used = end; },
  };
  return { batch, written: () => bytes.subarray(0, batch.used).toString('utf8') };
}

// requests over a few connections, whose host, address or port may change from one to the next:
// what a line says of a connection is kept from one request to the next and must follow them
const sockets = [{}, {}, {}];
const onConnections = fc.record({
  r: requests,
  id: fc.oneof(requestId, anyText),
  method: fc.constantFrom('POST', 'GET', 'M-SEARCH', 'OPTIONS'),
  socket: fc.integer({ min: 0, max: 2 }),
});

it('written as bytes into a batch, is the line pino writes, whatever it holds', () => {
  fc.assert(
    fc.property(fc.array(onConnections, { minLength: 1, maxLength: 8 }), (list) => {
      const { log, written } = logger();
      for (const { r, id, method, socket } of list) {
        const request = { ...(fastifyRequest(r) as object), id, method } as FastifyRequest;
        if (r.hasSocket) (request as unknown as { socket: object }).socket = Object.assign(sockets[socket], { remotePort: r.port });
        const reply = { statusCode: r.statusCode } as unknown as FastifyReply;
        written.length = 0;
        log.info({ reqId: request.id, req: request, res: reply, responseTime: toMicrosecond(r.elapsedTime) }, 'request completed');
        const { batch, written: bytes } = batchOf(65536);
        expect(writeAccessLine(batch as LineBatch, log as unknown as FastifyBaseLogger, 'reqId', request, reply, r.elapsedTime)).toBe(true);
        expect(bytes()).toBe(written[0]);
      }
    }),
    { numRuns: 1000 },
  );
});

it('with pino\'s own time, bytes and text differ in the time alone', () => {
  const log = pino({ serializers }, { write() {} }) as unknown as FastifyBaseLogger;
  const request = { id: 'abc-2', method: 'POST', url: '/v2/models/rmsnorm/infer', host: 'h:2', ip: '::1', headers: { 'accept-version': '2' }, socket: { remotePort: 4001 } } as unknown as FastifyRequest;
  const reply = { statusCode: 422 } as unknown as FastifyReply;
  const before = Date.now();
  const { batch, written } = batchOf(65536);
  expect(writeAccessLine(batch as LineBatch, log, 'reqId', request, reply, 0.25)).toBe(true);
  const after = Date.now();
  const line = JSON.parse(written()) as { time: number };
  expect(line.time).toBeGreaterThanOrEqual(before);
  expect(line.time).toBeLessThanOrEqual(after);
  expect(written()).toBe(accessLine(log, 'reqId', request, reply, 0.25).replace(/"time":\d+/, `"time":${line.time}`));
});

it('a batch with too little room left is handed over first; none when closed or for a line longer than a batch', () => {
  const { log } = logger();
  const request = (url: string) => ({ id: 'r', method: 'GET', url, host: 'h', ip: '127.0.0.1', headers: {}, socket: { remotePort: 1 } }) as unknown as FastifyRequest;
  const reply = { statusCode: 200 } as unknown as FastifyReply;
  const { batch, written } = batchOf(4096);
  for (let i = 0; i < 30; i++) expect(writeAccessLine(batch as LineBatch, log as unknown as FastifyBaseLogger, 'reqId', request(`/${i}`), reply, i)).toBe(true);
  expect(batch.full).toBeGreaterThan(0);
  // the lines since the last hand-over, whole
  for (const line of written().split('\n').filter((l) => l !== '')) expect(JSON.parse(line)).toMatchObject({ msg: 'request completed' });
  expect(writeAccessLine(batch as LineBatch, log as unknown as FastifyBaseLogger, 'reqId', request('/'.repeat(5000)), reply, 1)).toBe(false);
  batch.open = false;
  expect(writeAccessLine(batch as LineBatch, log as unknown as FastifyBaseLogger, 'reqId', request('/'), reply, 1)).toBe(false);
});
