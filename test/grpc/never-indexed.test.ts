// the server-timing trailer, whose value differs on every answer, goes out never indexed by HPACK
// (src/grpc/never-indexed.ts), so it does not churn the connection's header table; the other trailers
// stay indexable. Node's http2 client lists the never-indexed fields it received under
// http2.sensitiveHeaders.
import { connect, sensitiveHeaders, type IncomingHttpHeaders } from 'node:http2';
import { describe, expect, it } from 'vitest';
import { inferFrame, inferRequest, rawInput, useGrpcServer } from './client.js';

const server = useGrpcServer();

/** one ModelInfer over a raw HTTP/2 stream: its trailers as received */
function trailersOfOneCall(port: number): Promise<IncomingHttpHeaders> {
  const frame = inferFrame(inferRequest('rmsnorm', [rawInput('input', 'FP32', [1, 4], [1, 2, 3, 4])]));
  const session = connect(`http://127.0.0.1:${port}`);
  return new Promise<IncomingHttpHeaders>((resolve, reject) => {
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': '/inference.GRPCInferenceService/ModelInfer', 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', reject);
    stream.on('trailers', resolve);
    stream.resume();
    stream.end(frame);
  }).finally(() => session.close());
}

describe('ModelInfer trailers', () => {
  it('sends server-timing never indexed, and grpc-status as usual', async () => {
    const trailers = await trailersOfOneCall(server.current.front.port);
    expect(trailers['grpc-status']).toBe('0');
    expect(String(trailers['server-timing'])).toMatch(/^decode;dur=\d+\.\d{3}, queue;dur=\d+\.\d{3}, compute;dur=\d+\.\d{3}, encode;dur=\d+\.\d{3}$/);
    expect((trailers as Record<symbol, unknown>)[sensitiveHeaders]).toEqual(['server-timing']);
  });
});
