// a stream whose client sends requests and never reads the answers (its HTTP/2 stack alive, its
// window full): the stream holds at most WINDOW requests' memory and work slots, and gives them all
// back once it has made no progress for REQUEST_TIMEOUT_MS; others are served meanwhile and after.
// Synchronized on the engine's own counters, never on the clock.
import { connect, constants } from 'node:http2';
import { describe, expect, it } from 'vitest';
import { WINDOW } from '../../src/grpc/stream.js';
import { inferFrame, inferRequest, rawInput, useGrpcServer, until } from './client.js';

// a short stall limit (REQUEST_TIMEOUT_MS), and answers big enough to fill a 64 KiB window at once
const server = useGrpcServer({ requestTimeoutMs: 1_500 });


describe('a stream whose client reads nothing', () => {
  it(`holds at most ${WINDOW} requests, serves others meanwhile, and gives everything back when it is reset`, async () => {
    const { app, front, client } = server.current;
    const { state, slabs } = app.engine;
    const frame = inferFrame(inferRequest('rmsnorm', [rawInput('input', 'FP32', [16, 1024], new Array(16 * 1024).fill(1.5))]));
    // the client's receive window is the default 64 KiB: the first answer (64 KiB) fills it
    const session = connect(`http://127.0.0.1:${front.port}`);
    session.on('error', () => {});
    const stream = session.request({ ':method': 'POST', ':path': '/inference.GRPCInferenceService/ModelStreamInfer', 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => {});
    stream.pause(); // reads nothing
    const closed = new Promise<number>((resolve) => stream.on('close', () => resolve(stream.rstCode)));
    for (let i = 0; i < 3 * WINDOW; i++) stream.write(frame);
    // the stream takes WINDOW requests, then stops reading
    await until(() => state.inFlight >= WINDOW - 1);
    expect(state.inFlight).toBeLessThanOrEqual(WINDOW);
    // other clients are served meanwhile
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [rawInput('input', 'FP32', [1, 4], [1, 2, 3, 4])]))).toMatchObject({ ok: true });
    // after REQUEST_TIMEOUT_MS without progress the stream is reset, and everything it held comes back
    expect(await closed).toBe(constants.NGHTTP2_CANCEL);
    await until(() => state.inFlight === 0 && slabs.inUseBytes === 0);
    session.destroy();
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/^grpc_server_handled_total\{grpc_service="inference.GRPCInferenceService",grpc_method="ModelStreamInfer",grpc_type="bidi_stream",grpc_code="DeadlineExceeded"\} 1$/m);
  });
});
