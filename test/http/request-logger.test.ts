// the request's stand-in logger (src/http/request-logger.ts): nothing made or written for a level that
// is off, the request's bindings on every line it does write, the level read through to the parent
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { expect, it, vi } from 'vitest';
import { lazyRequestLogger } from '../../src/http/request-logger.js';

function rootLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { logger: pino({ level }, sink), lines };
}

it('at warn: info and debug write nothing and make no child; warn and error write with the request id', () => {
  const { logger, lines } = rootLogger('warn');
  const child = vi.spyOn(logger, 'child');
  const log = lazyRequestLogger(logger, { reqId: 'r-1' }, {});
  log.info({ a: 1 }, 'quiet');
  log.debug('quiet too');
  expect(child).not.toHaveBeenCalled();
  expect(log.level).toBe('warn');
  log.warn({ b: 2 }, 'loud');
  log.error(new Error('boom'), 'failed');
  expect(child).toHaveBeenCalledTimes(1); // made once, on the first line written
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({ level: 40, reqId: 'r-1', b: 2, msg: 'loud' });
  expect(lines[1]).toMatchObject({ level: 50, reqId: 'r-1', msg: 'failed', err: { message: 'boom' } });
});

it('a grandchild keeps the request id; a level set on the request logger is its own', () => {
  const { logger, lines } = rootLogger('info');
  const log = lazyRequestLogger(logger, { reqId: 'r-2' }, {});
  log.child({ part: 'x' }).info('from the grandchild');
  log.level = 'error';
  log.warn('dropped');
  expect(logger.level).toBe('info');
  expect(lines).toEqual([expect.objectContaining({ reqId: 'r-2', part: 'x', msg: 'from the grandchild' })]);
});

it('a route with its own level or serializers gets a real child at once', () => {
  const { logger, lines } = rootLogger('warn');
  const log = lazyRequestLogger(logger, { reqId: 'r-3' }, { level: 'debug' });
  log.debug('route level');
  expect(lines).toEqual([expect.objectContaining({ level: 20, reqId: 'r-3' })]);
});
