// the gRPC front end as `npm start` runs it (dist/server.js): GRPC_PORT=0 is a free port of its own
// beside PORT=0, GRPC_PORT=off serves none, and SIGTERM drains gRPC too: an open stream's answered
// request, then the stream ends UNAVAILABLE, ServerReady false meanwhile, and the process exits 0.
import { Metadata, status as Status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../service/helpers.js';
import { connect, inferRequest, rawInput } from './client.js';

let server: ServerProcess | null = null;
afterEach(() => {
  server?.kill();
  server = null;
});

const X = rawInput('input', 'FP32', [1, 4], [1, 2, 3, 4]);

describe('dist/server.js with gRPC', () => {
  it('GRPC_PORT=0 with PORT=0: two free ports, both served', async () => {
    server = await startServer({});
    expect(server.grpcPort).not.toBeNull();
    expect(server.grpcPort).not.toBe(server.port);
    const client = connect(server.grpcPort!);
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [X]))).toMatchObject({ ok: true });
    client.close();
  });

  it('GRPC_PORT=off: no gRPC listener, HTTP as ever', async () => {
    server = await startServer({ GRPC_PORT: 'off' });
    expect(server.grpcPort).toBeNull();
    expect(server.lines.some((l) => l.includes('gRPC listening'))).toBe(false);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('SIGTERM: a stream\'s request read before it is answered, the stream then ends UNAVAILABLE, exit 0', async () => {
    server = await startServer({});
    const client = connect(server.grpcPort!);
    const stream = client.raw.ModelStreamInfer(new Metadata()) as ClientDuplexStream<object, any>;
    const answers: any[] = [];
    const first = new Promise<void>((resolve) => stream.on('data', (a: any) => { answers.push(a); resolve(); }));
    const ended = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    stream.write(inferRequest('rmsnorm', [X], { id: 'before' }));
    await first;
    process.kill(server.pid, 'SIGTERM');
    const status = await ended;
    expect([Status[status.code], answers.map((a) => a.infer_response.id)]).toEqual(['UNAVAILABLE', ['before']]);
    expect(await server.exit).toEqual({ code: 0, signal: null });
    client.close();
  });
});
