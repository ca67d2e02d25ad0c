// OIP.md "gRPC": deadlines, admission's UNAVAILABLE with its retry trailers, the message size limit,
// compressed requests and draining. Held work waits at the fault gate; the tests synchronize on the
// gate (Atomics) and on the engine's counters, never on time.
import { Metadata, status as Status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { faultGate } from '../helpers/fault-gate.js';
import { connect, inferRequest, param, rawInput, useGrpcServer, until } from './client.js';

const X = rawInput('input', 'FP32', [1, 4], [1, 2, 3, 4]);
const HOLD = { 'x-test-fault': 'hold' };


describe('deadlines', () => {
  const server = useGrpcServer({ faultInjection: true });

  it("the client's own deadline cancels the call and frees its slot", async () => {
    const { client, app } = server.current;
    // (first: the next test opens the gate for good)
    const res = await client.call('ModelInfer', inferRequest('rmsnorm', [X]), { metadata: HOLD, deadlineMs: 100 });
    expect(res).toMatchObject({ ok: false, code: Status.DEADLINE_EXCEEDED });
    await until(() => app.engine.state.inFlight === 0);
  });

  it('the timeout parameter (µs) passing before the result is DEADLINE_EXCEEDED naming the deadline; the work is given up', async () => {
    const { client, app } = server.current;
    const gate = faultGate(app);
    const res = await client.call('ModelInfer', inferRequest('rmsnorm', [X], { parameters: { timeout: param(50_000) } }), { metadata: HOLD });
    expect(res).toMatchObject({ ok: false, code: Status.DEADLINE_EXCEEDED, details: 'the request deadline passed before its result was ready' });
    gate.open();
    await until(() => app.engine.state.inFlight === 0 && app.engine.slabs.inUseBytes === 0);
  });
});

describe('admission', () => {
  const server = useGrpcServer({ faultInjection: true, workers: 1, maxQueue: 1 });

  it('every work slot taken: UNAVAILABLE at once, with retry-after and grpc-retry-pushback-ms; then served again', async () => {
    const { client, app } = server.current;
    const gate = faultGate(app);
    const held = [client.call('ModelInfer', inferRequest('rmsnorm', [X]), { metadata: HOLD }), client.call('ModelInfer', inferRequest('rmsnorm', [X]), { metadata: HOLD })];
    await gate.held(1);
    await until(() => app.engine.state.inFlight === 2);
    const refused = await client.call('ModelInfer', inferRequest('rmsnorm', [X]));
    expect(refused).toMatchObject({ ok: false, code: Status.UNAVAILABLE, details: 'too many requests in flight; retry later' });
    if (!refused.ok) expect([refused.trailers['retry-after'], refused.trailers['grpc-retry-pushback-ms']]).toEqual(['1', '1000']);
    gate.open();
    for (const res of await Promise.all(held)) expect(res.ok).toBe(true);
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [X]))).toMatchObject({ ok: true });
  });
});

describe('message size and compression', () => {
  const server = useGrpcServer({ maxBodyBytes: 64 * 1024 });

  it('a message over MAX_BODY_BYTES is RESOURCE_EXHAUSTED (said by grpc-js); the server serves on', async () => {
    const { client } = server.current;
    const big = rawInput('input', 'FP32', [1, 32 * 1024], new Array(32 * 1024).fill(1));
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [big]))).toMatchObject({ ok: false, code: Status.RESOURCE_EXHAUSTED });
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [X]))).toMatchObject({ ok: true });
  });

  it('gzip- and deflate-compressed requests are read; the limit applies after decompression', async () => {
    const { client } = server.current;
    for (const compression of ['gzip', 'deflate'] as const) {
      expect(await client.call('ModelInfer', inferRequest('rmsnorm', [X]), { compression }), compression).toMatchObject({ ok: true });
      // 256 KiB of zeros compress to a few hundred bytes, over the limit once inflated
      const zeros = rawInput('input', 'FP32', [1, 64 * 1024], new Array(64 * 1024).fill(0));
      expect(await client.call('ModelInfer', inferRequest('rmsnorm', [zeros]), { compression }), compression).toMatchObject({ ok: false, code: Status.RESOURCE_EXHAUSTED });
    }
  });
});

describe('draining', () => {
  const server = useGrpcServer({ faultInjection: true });

  it('ServerReady and Check turn false; a request read on an open stream is answered, then the stream ends UNAVAILABLE; new calls are refused', async () => {
    const { client, app, front } = server.current;
    const gate = faultGate(app);
    const stream = client.raw.ModelStreamInfer(new Metadata()) as ClientDuplexStream<object, any>;
    const answers: any[] = [];
    stream.on('data', (m: any) => answers.push(m));
    const status = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    stream.write(inferRequest('rmsnorm', [X], { id: 'x-test-fault=hold' }));
    await gate.held(1);
    app.engine.state.draining = true; // what SIGTERM sets (server.ts), before it drains
    expect(await client.call('ServerReady', {})).toMatchObject({ ok: true, value: { ready: false } });
    expect(await client.call('Check', { service: '' }, { service: 'health' })).toMatchObject({ ok: true, value: { status: 'NOT_SERVING' } });
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [X]))).toMatchObject({ ok: false, code: Status.UNAVAILABLE, details: expect.stringMatching(/shutting down/) });
    // a stream opened now is refused at once
    const lateStream = client.raw.ModelStreamInfer(new Metadata()) as ClientDuplexStream<object, any>;
    lateStream.on('data', () => {});
    expect((await new Promise<ServiceError>((resolve) => lateStream.on('error', resolve))).code).toBe(Status.UNAVAILABLE);
    const drained = front.drain();
    gate.open();
    const ended = await status;
    expect([Status[ended.code], answers.map((a) => [a.error_message, a.infer_response.id])]).toEqual(['UNAVAILABLE', [['', 'x-test-fault=hold']]]);
    await drained;
    // the listener is closed: a new connection's call fails UNAVAILABLE in the client
    const late = connect(front.port, { 'grpc.initial_reconnect_backoff_ms': 50 });
    expect(await late.call('ServerLive', {}, { deadlineMs: 2_000 })).toMatchObject({ ok: false });
    late.close();
  });
});
