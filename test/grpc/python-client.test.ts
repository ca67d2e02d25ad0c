// test/python/grpc_client_check.py against a live gRPC front end: Debian's python3-grpcio with stubs
// that Debian's protoc and grpc_python_plugin (protobuf-compiler-grpc; CI installs them) generate
// here from the project's .proto files, as a Python user would.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useGrpcServer } from './client.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('../python/grpc_client_check.py', import.meta.url));
const PROTO_DIR = fileURLToPath(new URL('../../src/grpc/proto/', import.meta.url));
const TIMEOUT_MS = 60_000;

const server = useGrpcServer({ workers: 1 });
let stubs: string;

beforeAll(() => {
  stubs = mkdtempSync(join(tmpdir(), 'grpc-stubs-'));
  execFileSync('protoc', [`-I${PROTO_DIR}`, `--python_out=${stubs}`, `--grpc_out=${stubs}`, '--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin', 'inference.proto', 'health.proto']);
});
afterAll(() => rmSync(stubs, { recursive: true, force: true }));

describe('a Python grpcio client (stubs from the .proto)', () => {
  it('every server method, ModelInfer in every datatype against numpy float64, statuses, a stream in order', async () => {
    const result = await new Promise<{ code: number | string | null; stdout: string; stderr: string }>((resolve) => {
      execFile(PYTHON, [SCRIPT, `127.0.0.1:${server.current.front.port}`, stubs], { timeout: TIMEOUT_MS }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : error.code ?? error.signal ?? null, stdout, stderr });
      });
    });
    expect(result.code, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/^python grpc client: 20 calls, \d+ values within tolerance\n$/);
  }, TIMEOUT_MS + 10_000);
});
