// the access line (http/access-log.ts): the line pino writes for `log.info({ reqId, req, res,
// responseTime }, 'request completed')` with fastify's serializers and responseTime to the
// microsecond, byte for byte (test/http/access-line.test.ts holds both forms below to pino's), put
// together here from its fields: pino's generic path (serializers into a new object, each value
// stringified and joined, its key checks) was ~14 µs a line with its write (perf of small /v1 at
// 2,000 req/s). `writeAccessLine` writes it as bytes straight into the log destination's batch:
// made as text, a line made ~1.7 KiB of strings on the JS heap (this writes ~85 bytes' worth), and a
// small request's cost follows what it makes: 1 KiB of garbage a request cost 1.03× (npm run ab at
// 4,000 req/s, one run). Written as bytes, a small request at info cost 0.937× and 0.918× what it
// cost with the line made as text, and with responseTime to the microsecond 0.955× and 0.968× again
// (npm run ab at 4,000 req/s, 30 pairs, each order). `accessLine` is the same line as text, for any
// other stream. What a line says of its connection and its logger is made once and kept.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { pino } from 'pino';

/** the pino internals a line is put together from: the same the logger itself writes with */
export interface PinoParts {
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.timeSym]: () => string;
  [pino.symbols.streamSym]: { write(line: string): unknown };
}

/** a batch of bytes that lines are written into (log-destination.ts) */
export interface LineBatch {
  room(bytes: number): Buffer | null;
  readonly gathered: number;
  gatheredTo(end: number): void;
}

const text = JSON.stringify;

/** a number as JSON.stringify writes it */
const numberText = (value: number): string => (Number.isFinite(value) ? `${value}` : 'null');

/** what a line says of a request's connection, `,"host":…,"remoteAddress":…,"remotePort":…}` (a
 *  field that is undefined left out, as JSON.stringify leaves it out), kept for the host, address
 *  and port it was made for */
interface ConnectionPart {
  host: string | undefined;
  address: string | undefined;
  port: number | undefined;
  text: string;
  bytes: Buffer;
}

const connectionParts = new WeakMap<object, ConnectionPart>();

function connectionPart(request: FastifyRequest): ConnectionPart {
  const host = request.host;
  const address = request.ip;
  const socket = request.socket;
  const port = socket ? socket.remotePort : undefined;
  let known = socket ? connectionParts.get(socket) : undefined;
  if (known === undefined || known.host !== host || known.address !== address || known.port !== port) {
    const part = `${host === undefined ? '' : `,"host":${text(host)}`}${address === undefined ? '' : `,"remoteAddress":${text(address)}`}${
      port === undefined ? '' : `,"remotePort":${numberText(port)}`}}`;
    known = { host, address, port, text: part, bytes: Buffer.from(part, 'utf8') };
    if (socket) connectionParts.set(socket, known);
  }
  return known;
}

/** `,"version":…` when the request has an Accept-Version header, else nothing */
function versionPart(request: FastifyRequest): string {
  const version = request.headers['accept-version'];
  return version === undefined ? '' : `,"version":${text(version)}`;
}

/** what follows the time in a line: the logger's bindings, then the request id's label */
interface LoggerPart {
  chindings: string;
  idLabel: string;
  text: string;
  bytes: Buffer;
}
let loggerKept: LoggerPart = { chindings: '', idLabel: '', text: '', bytes: Buffer.alloc(0) };

function loggerPart(log: FastifyBaseLogger, idLabel: string): LoggerPart {
  const chindings = (log as unknown as PinoParts)[pino.symbols.chindingsSym];
  if (loggerKept.chindings !== chindings || loggerKept.idLabel !== idLabel) {
    const part = `${chindings},${text(idLabel)}:`;
    loggerKept = { chindings, idLabel, text: part, bytes: Buffer.from(part, 'utf8') };
  }
  return loggerKept;
}

/** the line's responseTime: ms to the microsecond. A double's shortest text (0.41343599999999997, the
 *  clock's noise in its last digits) took a third of the line's time in perf of the service at
 *  4,000 small req/s; whole microseconds are written digit by digit */
const toMicrosecond = (ms: number): number => Math.round(ms * 1000) / 1000;

/** the access line of `request`, answered with `reply` after `responseTime` ms, as `log` writes it at
 *  info (`responseTime` to the microsecond) */
export function accessLine(log: FastifyBaseLogger, idLabel: string, request: FastifyRequest, reply: FastifyReply, responseTime: number): string {
  return `{"level":30${(log as unknown as PinoParts)[pino.symbols.timeSym]()}${loggerPart(log, idLabel).text}${text(request.id)},"req":{"method":${
    text(request.method)},"url":${text(request.url)}${versionPart(request)}${connectionPart(request).text},"res":{"statusCode":${
    numberText(reply.statusCode)}},"responseTime":${numberText(toMicrosecond(responseTime))},"msg":"request completed"}\n`;
}

// the line's fixed parts, as bytes
const bytesOf = (part: string) => Buffer.from(part, 'latin1');
const LEVEL = bytesOf('{"level":30');
const TIME = bytesOf(',"time":');
const METHOD = bytesOf(',"req":{"method":');
const URL_ = bytesOf(',"url":');
const STATUS = bytesOf(',"res":{"statusCode":');
const RESPONSE_TIME = bytesOf('},"responseTime":');
const END = bytesOf(',"msg":"request completed"}\n');
const FIXED_BYTES = LEVEL.length + TIME.length + METHOD.length + URL_.length + STATUS.length + RESPONSE_TIME.length + END.length;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// at most 6 bytes of JSON per UTF-16 code unit (`\u001f`; UTF-8 is at most 3)
const MOST_PER_UNIT = 6;
const NUMBER_BYTES = 24; // the longest JSON number text (`-1.2345678901234567e-123`)

function put(batch: Buffer, at: number, part: Buffer): number {
  batch.set(part, at);
  return at + part.length;
}

/** `value`, all of it ASCII, at `at`; where it ends */
function putAscii(batch: Buffer, at: number, value: string): number {
  for (let i = 0; i < value.length; i++) batch[at + i] = value.charCodeAt(i);
  return at + value.length;
}

/** `value` as JSON text, as JSON.stringify writes it: quoted as it is when it is printable ASCII
 *  without '"' or '\' (an id, a method, almost every url), else JSON.stringify's text as UTF-8 */
function putString(batch: Buffer, at: number, value: string): number {
  batch[at] = QUOTE;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return at + batch.write(text(value), at, 'utf8');
    batch[at + 1 + i] = c;
  }
  batch[at + 1 + value.length] = QUOTE;
  return at + value.length + 2;
}

/** a number as JSON.stringify writes it; a whole one below 2^31 (a status, whole milliseconds)
 *  digit by digit in integer arithmetic, with no text made */
function putNumber(batch: Buffer, at: number, value: number): number {
  if (!(Number.isInteger(value) && value >= 0 && value <= 0x7fffffff)) return putAscii(batch, at, numberText(value));
  let whole = value | 0;
  let digits = 1;
  for (let rest = whole; rest >= 10; rest = (rest / 10) | 0) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    const next = (whole / 10) | 0;
    batch[at + i] = 0x30 + whole - next * 10;
    whole = next;
  }
  return at + digits;
}

/** `ms` to the microsecond, as JSON.stringify writes it (toMicrosecond): whole microseconds below
 *  2^31 (35 minutes) as digits, a '.' and up to three more (no trailing zeros, as a number's text) */
function putMilliseconds(batch: Buffer, at: number, ms: number): number {
  const us = Math.round(ms * 1000);
  if (!(us >= 0 && us <= 0x7fffffff)) return putAscii(batch, at, numberText(us / 1000));
  const fraction = us % 1000;
  at = putNumber(batch, at, (us - fraction) / 1000);
  if (fraction === 0) return at;
  batch[at++] = 0x2e;
  const hundreds = (fraction / 100) | 0;
  const tens = ((fraction / 10) | 0) % 10;
  const units = fraction % 10;
  batch[at++] = 0x30 + hundreds;
  if (tens === 0 && units === 0) return at;
  batch[at++] = 0x30 + tens;
  if (units === 0) return at;
  batch[at++] = 0x30 + units;
  return at;
}

/** Date.now()'s text, made once a millisecond */
let nowMs = -1;
let nowText = '';
function epochText(): string {
  const now = Date.now();
  if (now !== nowMs) {
    nowMs = now;
    nowText = `${now}`;
  }
  return nowText;
}

/** the access line of `request` (as `accessLine`), written into `into`'s batch; false when it has no
 *  room for it (closed, or a line longer than a batch): then write it as text */
export function writeAccessLine(into: LineBatch, log: FastifyBaseLogger, idLabel: string, request: FastifyRequest, reply: FastifyReply, responseTime: number): boolean {
  const time = (log as unknown as PinoParts)[pino.symbols.timeSym];
  // pino's default time is ms since the epoch, its text made once a millisecond; any other its own text
  const timeText = time === pino.stdTimeFunctions.epochTime ? null : time();
  const logger = loggerPart(log, idLabel);
  const { id, method, url } = request;
  const version = versionPart(request);
  const connection = connectionPart(request).bytes;
  const most = FIXED_BYTES + logger.bytes.length + connection.length + MOST_PER_UNIT * (id.length + method.length + url.length + version.length + (timeText?.length ?? 0)) +
    4 * NUMBER_BYTES;
  const batch = into.room(most);
  if (batch === null) return false;
  let at = put(batch, into.gathered, LEVEL);
  if (timeText === null) at = putAscii(batch, put(batch, at, TIME), epochText());
  else at += batch.write(timeText, at, 'utf8');
  at = putString(batch, put(batch, at, logger.bytes), id);
  at = putString(batch, put(batch, at, METHOD), method);
  at = putString(batch, put(batch, at, URL_), url);
  if (version !== '') at += batch.write(version, at, 'utf8');
  at = put(batch, at, connection);
  at = putNumber(batch, put(batch, at, STATUS), reply.statusCode);
  at = putMilliseconds(batch, put(batch, at, RESPONSE_TIME), responseTime);
  into.gatheredTo(put(batch, at, END));
  return true;
}
