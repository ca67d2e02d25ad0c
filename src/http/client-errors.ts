// answers for what Node's HTTP parser refuses before any route sees it (API.md §5): a malformed
// request, headers over the size limit (431), headers not complete within HEADERS_TIMEOUT_MS (408).
// The same coded body and X-Request-Id as every other error; the connection is closed after it.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { serviceError, type ServiceError } from '../errors.js';
import { serviceErrorBody } from './error-handler.js';
import { madeRequestId } from './request-id.js';

function errorFor(err: NodeJS.ErrnoException, headersTimeoutMs: number): ServiceError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return serviceError('headersTimeout', headersTimeoutMs);
  if (err.code === 'HPE_HEADER_OVERFLOW') return serviceError('headersTooLarge');
  return serviceError('requestMalformed', (err.code ?? 'error').slice(0, 40));
}

/** fastify's clientErrorHandler: `this` is the app, `socket` the connection the request came on */
export function clientErrorHandler(headersTimeoutMs: number) {
  return function answer(this: { log: FastifyBaseLogger }, err: NodeJS.ErrnoException, socket: Socket): void {
    // a reset connection has nobody to answer
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const error = errorFor(err, headersTimeoutMs);
    const id = madeRequestId();
    this.log.debug({ err, reqId: id }, 'refused by the HTTP parser');
    if (socket.writable) {
      const body = JSON.stringify(serviceErrorBody(error));
      socket.write(`HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode]}\r\n`
        + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy(err);
  };
}
