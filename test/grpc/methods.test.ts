// OIP.md "gRPC", "Services and methods", "Authentication", "Metrics": every method served, the ones
// that are not (UNIMPLEMENTED), health, reflection, API keys, and the call counts on /metrics.
import { credentials, Client, status as Status, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { inferRequest, rawInput, useGrpcServer } from './client.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const server = useGrpcServer();
const keyed = useGrpcServer({ apiKeys: ['k1'] });

const INFERENCE = 'inference.GRPCInferenceService';
const X = rawInput('input', 'FP32', [1, 4], [1, 2, 3, 4]);

describe('the server methods', () => {
  it('ServerLive, ServerReady, ServerMetadata', async () => {
    const { client } = server.current;
    expect(await client.call('ServerLive', {})).toMatchObject({ ok: true, value: { live: true } });
    expect(await client.call('ServerReady', {})).toMatchObject({ ok: true, value: { ready: true } });
    const meta = await client.call('ServerMetadata', {});
    expect(meta).toMatchObject({ ok: true, value: { name: 'tensor-norm-service', version, extensions: ['binary_tensor_data', 'parameters'] } });
  });

  it('ModelMetadata: OIP.md\'s table, datatype FP32 and shape [-1] for each tensor, versions ["1"]', async () => {
    const table: Record<string, [string[], string[]]> = {
      rmsnorm: [['input', 'weight', 'bias', 'residual'], ['output', 'residual', 'rstd']],
      layernorm: [['input', 'weight', 'bias', 'residual'], ['output', 'residual', 'mean', 'rstd']],
      batchnorm: [['input', 'weight', 'bias', 'running_mean', 'running_var'], ['output', 'running_mean', 'running_var', 'mean', 'rstd']],
      groupnorm: [['input', 'weight', 'bias'], ['output', 'mean', 'rstd']],
    };
    for (const [name, [inputs, outputs]] of Object.entries(table)) {
      for (const version of ['', '1']) {
        const res = await server.current.client.call('ModelMetadata', { name, version });
        const tensor = (n: string) => ({ name: n, datatype: 'FP32', shape: [-1] });
        expect(res, `${name} version "${version}"`).toEqual({
          ok: true, trailers: expect.anything(),
          value: { name, versions: ['1'], platform: 'tensor-norm-service', inputs: inputs.map(tensor), outputs: outputs.map(tensor) },
        });
      }
    }
  });

  it('ModelReady; an unknown model or version is NOT_FOUND naming it, for metadata, readiness and inference', async () => {
    const { client } = server.current;
    expect(await client.call('ModelReady', { name: 'groupnorm', version: '1' })).toMatchObject({ ok: true, value: { ready: true } });
    for (const method of ['ModelReady', 'ModelMetadata']) {
      expect(await client.call(method, { name: 'softmax' })).toMatchObject({ ok: false, code: Status.NOT_FOUND, details: expect.stringMatching(/^model softmax: unknown/) });
      for (const v of ['2', 'latest']) {
        expect(await client.call(method, { name: 'rmsnorm', version: v })).toMatchObject({ ok: false, code: Status.NOT_FOUND, details: `model rmsnorm version ${v}: unknown; the one version is 1` });
      }
    }
    expect(await client.call('ModelInfer', inferRequest('softmax', [X]))).toMatchObject({ ok: false, code: Status.NOT_FOUND, details: expect.stringMatching(/^model softmax: unknown/) });
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [X], { model_version: '2' }))).toMatchObject({ ok: false, code: Status.NOT_FOUND, details: expect.stringMatching(/version 2: unknown/) });
  });

  it('fields left at their defaults are off the wire (as Python clients send them): an empty model name is NOT_FOUND naming it', async () => {
    const { client } = server.current;
    expect(await client.call('ModelInfer', {})).toMatchObject({ ok: false, code: Status.NOT_FOUND, details: expect.stringMatching(/^model : unknown/) });
    expect(await client.call('ModelMetadata', {})).toMatchObject({ ok: false, code: Status.NOT_FOUND });
    expect(await client.call('Check', {}, { service: 'health' })).toMatchObject({ ok: true, value: { status: 'SERVING' } });
  });

  it('bytes that are not a ModelInferRequest are INVALID_ARGUMENT saying so (and the server serves on)', async () => {
    const client = new Client(`127.0.0.1:${server.current.front.port}`, credentials.createInsecure());
    const status = await new Promise<ServiceError | null>((resolve) => {
      // field 1 (model_name) says 7 bytes and the message ends after 2
      client.makeUnaryRequest('/inference.GRPCInferenceService/ModelInfer', (b: Buffer) => b, (b: Buffer) => b, Buffer.from([0x0a, 0x07, 0x72, 0x6d]), (err: ServiceError | null) => resolve(err));
    });
    expect([status?.code, status?.details]).toEqual([Status.INVALID_ARGUMENT, 'body: not a ModelInferRequest (protobuf: a field runs past the end of the message)']);
    client.close();
    expect(await server.current.client.call('ServerLive', {})).toMatchObject({ ok: true });
  });

  it('a parameter named __proto__ is a key like any other: INVALID_ARGUMENT naming it', async () => {
    // ModelInferRequest { model_name: "rmsnorm", parameters: { "__proto__": { double_param: 1 } } },
    // by hand: a JavaScript encoder's own map would take the key as a prototype and drop it
    const param = Buffer.concat([Buffer.from([0x21]), Buffer.from(new Float64Array([1]).buffer)]);
    const key = Buffer.from('__proto__');
    const entry = Buffer.concat([Buffer.from([0x0a, key.length]), key, Buffer.from([0x12, param.length]), param]);
    const model = Buffer.from('rmsnorm');
    const message = Buffer.concat([Buffer.from([0x0a, model.length]), model, Buffer.from([0x22, entry.length]), entry]);
    const client = new Client(`127.0.0.1:${server.current.front.port}`, credentials.createInsecure());
    const status = await new Promise<ServiceError | null>((resolve) => {
      client.makeUnaryRequest('/inference.GRPCInferenceService/ModelInfer', (b: Buffer) => b, (b: Buffer) => b, message, (err: ServiceError | null) => resolve(err));
    });
    expect([status?.code, status?.details]).toEqual([Status.INVALID_ARGUMENT, 'parameters.__proto__: unknown field']);
    client.close();
  });

  it('grpc.health.v1 Check: SERVING for "" and the inference service; another name is NOT_FOUND naming it', async () => {
    const { client } = server.current;
    for (const service of ['', INFERENCE]) expect(await client.call('Check', { service }, { service: 'health' })).toMatchObject({ ok: true, value: { status: 'SERVING' } });
    expect(await client.call('Check', { service: 'grpc.Other' }, { service: 'health' })).toMatchObject({ ok: false, code: Status.NOT_FOUND, details: expect.stringMatching(/^service grpc\.Other: not served/) });
  });

  it('methods not served are UNIMPLEMENTED, with or without a key: upstream\'s others, Health/Watch, an unknown one', async () => {
    for (const { port } of [server.current.front, keyed.current.front]) {
      const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
      const unimplemented = ['/inference.GRPCInferenceService/ModelConfig', '/inference.GRPCInferenceService/ModelStatistics', '/inference.GRPCInferenceService/RepositoryIndex',
        '/inference.GRPCInferenceService/SystemSharedMemoryStatus', '/grpc.health.v1.Health/Watch', '/no.Such/Method'];
      for (const path of unimplemented) {
        const code = await new Promise<number>((resolve) => {
          client.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (err: ServiceError | null) => resolve(err?.code ?? Status.OK));
        });
        expect(code, path).toBe(Status.UNIMPLEMENTED);
      }
      client.close();
    }
  });
});

describe('API keys (API_KEYS)', () => {
  it('every method but ServerLive, ServerReady and Check needs "authorization: Bearer <key>"; UNAUTHENTICATED comes first', async () => {
    const { client } = keyed.current;
    const unauthenticated = { ok: false, code: Status.UNAUTHENTICATED, details: 'authorization: a metadata entry "Bearer <key>" with a valid key is required' };
    for (const metadata of [{}, { authorization: 'Bearer nope' }, { authorization: 'k1' }]) {
      expect(await client.call('ServerMetadata', {}, { metadata })).toMatchObject(unauthenticated);
      expect(await client.call('ModelMetadata', { name: 'rmsnorm' }, { metadata })).toMatchObject(unauthenticated);
      expect(await client.call('ModelReady', { name: 'softmax' }, { metadata })).toMatchObject(unauthenticated);
      expect(await client.call('ModelInfer', inferRequest('softmax', [X]), { metadata })).toMatchObject(unauthenticated);
    }
    expect(await client.call('ServerLive', {})).toMatchObject({ ok: true });
    expect(await client.call('ServerReady', {})).toMatchObject({ ok: true, value: { ready: true } });
    expect(await client.call('Check', { service: '' }, { service: 'health' })).toMatchObject({ ok: true });
    const metadata = { authorization: 'Bearer k1' };
    expect(await client.call('ServerMetadata', {}, { metadata })).toMatchObject({ ok: true });
    expect(await client.call('ModelInfer', inferRequest('rmsnorm', [X]), { metadata })).toMatchObject({ ok: true });
  });

  it('a stream without a key ends UNAUTHENTICATED before any request is read', async () => {
    const stream = keyed.current.client.raw.ModelStreamInfer();
    const got: unknown[] = [];
    stream.on('data', (m: unknown) => got.push(m));
    const status = await new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    expect([status.code, got]).toEqual([Status.UNAUTHENTICATED, []]);
  });
});

describe('server reflection', () => {
  it('lists both services over v1 and v1alpha, without a key', async () => {
    for (const version of ['v1', 'v1alpha']) {
      const { port } = keyed.current.front;
      const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
      // ServerReflectionRequest { list_services (7): "" } and the response's ListServiceResponse
      // (field 6) of ServiceResponse names (field 1 each), read with protobuf's wire rules by hand
      const request = Buffer.from([0x3a, 0x00]);
      const call = client.makeBidiStreamRequest(`/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`, (b: Buffer) => b, (b: Buffer) => b);
      const answer = await new Promise<Buffer>((resolve, reject) => {
        call.on('data', resolve);
        call.on('error', reject);
        call.write(request);
        call.end();
      });
      const text = answer.toString('latin1');
      expect(text, version).toContain(INFERENCE);
      expect(text, version).toContain('grpc.health.v1.Health');
      client.close();
    }
  });
});

describe('/metrics counts gRPC calls', () => {
  it('grpc_server_handled_total by final code and grpc_server_handling_seconds', async () => {
    const { client, app } = server.current;
    await client.call('ModelInfer', inferRequest('rmsnorm', [X]));
    await client.call('ModelInfer', inferRequest('rmsnorm', [rawInput('input', 'FP32', [1, 4], [1, 2, 3])]));
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = (code: string) => new RegExp(`^grpc_server_handled_total\\{grpc_service="${INFERENCE}",grpc_method="ModelInfer",grpc_type="unary",grpc_code="${code}"\\} ([1-9]\\d*)$`, 'm');
    expect(text).toMatch(line('OK'));
    expect(text).toMatch(line('InvalidArgument'));
    expect(text).toMatch(new RegExp(`^grpc_server_handling_seconds_count\\{grpc_service="${INFERENCE}",grpc_method="ModelInfer",grpc_type="unary"\\} [1-9]`, 'm'));
    expect(text).toMatch(/^norm_rows_total\{op="rmsnorm",dtype="float32"\} [1-9]/m);
    // Check under its own service
    await client.call('Check', { service: '' }, { service: 'health' });
    const after = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(after).toMatch(/^grpc_server_handled_total\{grpc_service="grpc.health.v1.Health",grpc_method="Check",grpc_type="unary",grpc_code="OK"\} [1-9]/m);
  });
});
