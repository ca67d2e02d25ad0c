// the transport floor: node:http, no framework. Each request body is copied into a reused ordinary
// Buffer and the same bytes are written back; nothing parsed, nothing computed. No Node service can
// pay less to move the same bytes, so the service's CPU per request is judged against this.
// Env: PORT, HOST (127.0.0.1), MAX_BODY_BYTES.
import { createServer } from 'node:http';
import type { Socket } from 'node:net';

const limit = Number(process.env.MAX_BODY_BYTES ?? 64 * 1024 * 1024);
// one buffer per connection: a socket write keeps a reference to the bytes it has not sent yet,
// and a client sends its next request on a connection only after reading the last answer
const buffers = new WeakMap<Socket, Buffer>();

const server = createServer((request, response) => {
  if (request.method === 'GET') {
    response.end('{"ok":true}');
    return;
  }
  let buffer = buffers.get(request.socket) ?? Buffer.allocUnsafeSlow(64 * 1024);
  let length = 0;
  request.on('data', (chunk: Buffer) => {
    if (length + chunk.length > limit) {
      response.writeHead(413).end();
      request.destroy();
      return;
    }
    if (length + chunk.length > buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(buffer.length * 2, length + chunk.length));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    length += chunk.copy(buffer, length);
  });
  request.on('end', () => {
    buffers.set(request.socket, buffer);
    response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/octet-stream', 'content-length': length });
    response.end(buffer.subarray(0, length));
  });
});
server.keepAliveTimeout = 60_000;

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
server.listen(Number(process.env.PORT ?? 8082), process.env.HOST ?? '127.0.0.1');
