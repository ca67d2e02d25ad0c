// OIP.md "Streams (ModelStreamInfer)": answers in request order whatever each request's work takes,
// failures answered in place (or, with triton_grpc_error, ending the stream), one stream mixing
// models, an empty stream. Held requests wait at the fault gate; the test synchronizes on the gate
// (Atomics) and on the engine's own counters, never on time.
import { Metadata, status as Status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { faultGate } from '../helpers/fault-gate.js';
import { expectClose, reference } from '../helpers/reference.js';
import { randomValues } from '../helpers/tensors.js';
import { inferRequest, outputsOf, param, rawInput, useGrpcServer, until } from './client.js';

const server = useGrpcServer({ faultInjection: true });

interface StreamRun { answers: any[]; status: Promise<{ code: number; details: string }> }

/** opens a stream, sends `requests`, half-closes; collects answers until the stream's status */
function runStream(requests: object[], metadata: Record<string, string> = {}, end = true): StreamRun & { stream: ClientDuplexStream<object, any> } {
  const md = new Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  const stream = server.current.client.raw.ModelStreamInfer(md) as ClientDuplexStream<object, any>;
  const answers: any[] = [];
  stream.on('data', (m: any) => answers.push(m));
  const status = new Promise<{ code: number; details: string }>((resolve) => {
    stream.on('error', (err: ServiceError) => resolve({ code: err.code, details: err.details }));
    stream.on('status', (s: { code: number; details: string }) => { if (s.code === Status.OK) resolve(s); });
  });
  for (const r of requests) stream.write(r);
  if (end) stream.end();
  return { stream, answers, status };
}

const small = (id: string, values = [1, 2, 3, 4]) => inferRequest('rmsnorm', [rawInput('input', 'FP32', [1, values.length], values)], { id });


describe('ModelStreamInfer', () => {
  it('answers in request order: a held first request is answered before later ones that finished first', async () => {
    const { app } = server.current;
    const gate = faultGate(app);
    const rows = app.engine.metrics.rows.cell('rmsnorm', 'float32');
    const before = rows.value;
    const run = runStream([small('x-test-fault=hold'), small('b'), small('c')]);
    await gate.held(1);
    // b and c are computed (counted) while the first waits at the gate; none is answered yet
    await until(() => rows.value >= before + 2);
    expect(run.answers).toEqual([]);
    gate.open();
    expect(await run.status).toMatchObject({ code: Status.OK });
    expect(run.answers.map((a) => [a.error_message, a.infer_response.id])).toEqual([['', 'x-test-fault=hold'], ['', 'b'], ['', 'c']]);
  });

  it('one stream mixes models; each answer is its ModelInfer answer', async () => {
    const x = randomValues(61, 16);
    const run = runStream([
      inferRequest('layernorm', [rawInput('input', 'FP32', [2, 8], x)], { id: 'ln' }),
      inferRequest('rmsnorm', [rawInput('input', 'FP64', [4, 4], x)], { id: 'rms', parameters: { return_stats: param(true) } }),
    ]);
    expect(await run.status).toMatchObject({ code: Status.OK });
    const [ln, rms] = run.answers.map((a) => a.infer_response);
    expect([ln.model_name, ln.model_version, ln.id, rms.model_name, rms.id]).toEqual(['layernorm', '1', 'ln', 'rmsnorm', 'rms']);
    const refLn = reference({ op: 'layernorm', dtype: 'float32', shape: [2, 8], values: x });
    expectClose(outputsOf(ln).get('output')!.values, refLn.output, 'float32', refLn.largeMean);
    const refRms = reference({ op: 'rmsnorm', dtype: 'float64', shape: [4, 4], values: x });
    expectClose(outputsOf(rms).get('output')!.values, refRms.output, 'float64', refRms.largeMean);
    expectClose(outputsOf(rms).get('rstd')!.values, refRms.rstd, 'float32');
  });

  it('a failure is answered in its place: error_message, and infer_response holding its id alone; the stream goes on', async () => {
    const run = runStream([small('a'), inferRequest('softmax', [rawInput('input', 'FP32', [1, 2], [1, 2])], { id: 'bad' }), small('c', [1, 2, 3]), small('d')]);
    expect(await run.status).toMatchObject({ code: Status.OK });
    expect(run.answers.length).toBe(4);
    const [a, bad, c, d] = run.answers;
    expect([a.error_message, a.infer_response.id, d.infer_response.id]).toEqual(['', 'a', 'd']);
    expect(bad.error_message).toMatch(/^model softmax: unknown/);
    expect(bad.infer_response).toEqual({ model_name: '', model_version: '', id: 'bad', parameters: {}, outputs: [], raw_output_contents: [] });
    expect(c.error_message).toBe('');
  });

  it('with triton_grpc_error: true the first failure ends the stream with its code, after the answers before it', async () => {
    const short = { ...small('b'), raw_input_contents: [Buffer.alloc(8)] };
    const run = runStream([small('a'), short, small('c')], { triton_grpc_error: 'true' });
    const status = await run.status;
    expect([Status[status.code], status.details]).toEqual(['INVALID_ARGUMENT', 'input raw_input_contents: 8 bytes, but shape [1, 4] of FP32 needs 16']);
    expect(run.answers.map((a) => a.infer_response.id)).toEqual(['a']);
  });

  it('triton_grpc_error other than exactly "true" answers failures in place', async () => {
    const run = runStream([inferRequest('softmax', [], { id: 'bad' }), small('b')], { triton_grpc_error: 'True' });
    expect(await run.status).toMatchObject({ code: Status.OK });
    expect(run.answers.map((a) => [a.error_message === '', a.infer_response.id])).toEqual([[false, 'bad'], [true, 'b']]);
  });

  it('a client that sends nothing gets no answer, and the stream ends OK', async () => {
    const run = runStream([]);
    expect(await run.status).toMatchObject({ code: Status.OK });
    expect(run.answers).toEqual([]);
  });

  it('norm_stream_requests_total counts each request by model ("unknown" for a name no model has) and outcome', async () => {
    const text = (await server.current.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/^norm_stream_requests_total\{model="rmsnorm",outcome="ok"\} [1-9]/m);
    expect(text).toMatch(/^norm_stream_requests_total\{model="unknown",outcome="error"\} [1-9]/m);
    expect(text).toMatch(/^grpc_server_handled_total\{grpc_service="inference.GRPCInferenceService",grpc_method="ModelStreamInfer",grpc_type="bidi_stream",grpc_code="OK"\} [1-9]/m);
    expect(text).toMatch(/^grpc_server_handled_total\{grpc_service="inference.GRPCInferenceService",grpc_method="ModelStreamInfer",grpc_type="bidi_stream",grpc_code="InvalidArgument"\} 1$/m);
  });
});
