// a Python msgpack-numpy client (test/python/client_check.py) against a live server.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./python/client_check.py', import.meta.url));
// Debian's python3 with python3-numpy and python3-msgpack-numpy (CI installs them); a missing module fails
const PYTHON = '/usr/bin/python3';
const TIMEOUT_MS = 60_000;

describe('python msgpack-numpy client', () => {
  let app: FastifyInstance;
  let address: string;

  beforeAll(async () => {
    app = await buildApp({ logLevel: 'silent', workers: 1 });
    address = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('rmsnorm, layernorm and batch: float32/float64/float16 ndarrays in and out, bfloat16 as a plain map', async () => {
    const result = await new Promise<{ code: number | string | null; stdout: string; stderr: string }>((resolve) => {
      execFile(PYTHON, [SCRIPT, address], { cwd: ROOT, timeout: TIMEOUT_MS }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : error.code ?? error.signal ?? null, stdout, stderr: error && typeof error.code === 'string' ? `${error.message}\n${stderr}` : stderr });
      });
    });
    expect(result.code, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/^python client: 5 requests, \d+ values within tolerance\n$/);
  }, TIMEOUT_MS + 10_000);
});
