// hostile gRPC requests: mutated and random ModelInferRequest bytes, and well-formed messages with
// hostile field values, on unary calls and on a stream. Every call ends OK or with a client's code
// (INVALID_ARGUMENT, NOT_FOUND), never INTERNAL or UNKNOWN; a stream answers each request in its
// place; afterwards the server still answers right and holds no tensor memory.
import { credentials, Client, status as Status, type ServiceError } from '@grpc/grpc-js';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { inferRequest, param, rawInput, useGrpcServer } from './client.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_126);
const server = useGrpcServer();

const PROTO = readFileSync(fileURLToPath(new URL('../../src/grpc/proto/inference.proto', import.meta.url)), 'utf8');
const Request = protobuf.parse(PROTO, { keepCase: true }).root.lookupType('inference.ModelInferRequest');
const encode = (message: object) => Buffer.from(Request.encode(Request.fromObject(message)).finish());

const MODELS = ['rmsnorm', 'layernorm', 'batchnorm', 'groupnorm'] as const;
const VALUES = [0.5, -1.25, 2, 3.5, -4, 5.25, 6, -7.5];
const CLIENT_CODES = new Set([Status.OK, Status.INVALID_ARGUMENT, Status.NOT_FOUND]);

function valid(model: string): object {
  const parameters = model === 'groupnorm' ? { num_groups: param(2) } : model === 'batchnorm' ? { training: param(true) } : {};
  return inferRequest(model, [rawInput('input', 'FP32', [2, 4], VALUES)], { parameters });
}

/** a unary ModelInfer of raw bytes: its final code and message */
function rawCall(bytes: Buffer): Promise<{ code: number; details: string }> {
  const client = new Client(`127.0.0.1:${server.current.front.port}`, credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest('/inference.GRPCInferenceService/ModelInfer', (b: Buffer) => b, (b: Buffer) => b, bytes, (err: ServiceError | null) => {
      client.close();
      resolve(err === null ? { code: Status.OK, details: '' } : { code: err.code, details: err.details });
    });
  });
}

function expectClientCode(res: { code: number; details: string }): void {
  expect(CLIENT_CODES.has(res.code), `${Status[res.code]}: ${res.details}`).toBe(true);
  if (res.code !== Status.OK) expect(res.details.length).toBeGreaterThan(0);
}

async function stillServing(): Promise<void> {
  for (const model of MODELS) expect(await server.current.client.call('ModelInfer', valid(model)), model).toMatchObject({ ok: true });
  expect(server.current.app.engine.slabs.inUseBytes).toBe(0);
}

const model = fc.constantFrom(...MODELS);

describe('fuzz gRPC ModelInfer: OK or a client\'s code, never INTERNAL', () => {
  it('valid messages with bytes flipped, cut, or inserted', async () => {
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
    );
    await fc.assert(fc.asyncProperty(model, fc.array(mutation, { minLength: 1, maxLength: 3 }), async (m, mutations) => {
      let bytes = encode(valid(m));
      for (const mu of mutations) {
        const at = mu.at % (bytes.length + 1);
        if (mu.kind === 'flip' && at < bytes.length) bytes[at] ^= 1 << mu.bit;
        else if (mu.kind === 'cut') bytes = bytes.subarray(0, at);
        else if (mu.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(mu.bytes), bytes.subarray(at)]);
      }
      expectClientCode(await rawCall(Buffer.from(bytes)));
    }), { numRuns: 150, seed: SEED });
    await stillServing();
  });

  it('random bytes', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
      expectClientCode(await rawCall(Buffer.from(bytes)));
    }), { numRuns: 100, seed: SEED });
    await stillServing();
  });

  it('well-formed messages with hostile values: shapes, datatypes, parameters, outputs, raw sizes', async () => {
    const dim = fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom(-1, 2 ** 31, 2 ** 53 - 1, -(2 ** 53)));
    const anyParam = fc.oneof(
      fc.boolean().map((v) => ({ bool_param: v })),
      fc.integer().map((v) => ({ int64_param: v })),
      fc.double().map((v) => ({ double_param: v })),
      fc.constantFrom('FP32', 'outside', '', 'x'.repeat(300)).map((v) => ({ string_param: v })),
      fc.constant({}),
    );
    const message = fc.record({
      model_name: fc.constantFrom(...MODELS, '', 'x'),
      model_version: fc.constantFrom('', '1', '2'),
      inputs: fc.array(fc.record({
        name: fc.constantFrom('input', 'weight', 'bias', 'residual', 'running_mean', 'running_var', 'nope'),
        datatype: fc.constantFrom('FP32', 'FP64', 'FP16', 'BF16', 'INT8', ''),
        shape: fc.array(dim, { maxLength: 9 }),
      }), { maxLength: 3 }),
      parameters: fc.dictionary(fc.constantFrom('axis', 'eps', 'num_groups', 'training', 'channel_axis', 'partial', 'output_dtype', 'timeout', 'momentum', 'priority'), anyParam, { maxKeys: 4 }),
      outputs: fc.array(fc.record({ name: fc.constantFrom('output', 'mean', 'rstd', 'residual', 'x') }), { maxLength: 2 }),
      raw_input_contents: fc.array(fc.integer({ min: 0, max: 64 }).map((n) => Buffer.alloc(n, 0x3f)), { maxLength: 3 }),
    });
    await fc.assert(fc.asyncProperty(message, async (m) => {
      expectClientCode(await rawCall(encode(m)));
    }), { numRuns: 300, seed: SEED });
    await stillServing();
  });

  it('a stream of hostile requests answers each one in its place and ends OK', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.oneof(model.map(valid), fc.constant(inferRequest('rmsnorm', [rawInput('input', 'FP32', [2, 4], [1])]))), { minLength: 1, maxLength: 6 }), async (requests) => {
      const stream = server.current.client.raw.ModelStreamInfer();
      const answers: any[] = [];
      stream.on('data', (a: any) => answers.push(a));
      const ended = new Promise<number>((resolve) => {
        stream.on('status', (s: { code: number }) => resolve(s.code));
        stream.on('error', (e: ServiceError) => resolve(e.code));
      });
      requests.forEach((r, i) => stream.write({ ...r, id: `r${i}` }));
      stream.end();
      expect(await ended).toBe(Status.OK);
      expect(answers.map((a) => a.infer_response.id)).toEqual(requests.map((_, i) => `r${i}`));
    }), { numRuns: 30, seed: SEED });
    await stillServing();
  });
});
