// test/python/oip_client_check.py against a live server: what tritonclient.http's infer() sends and
// reads (no Content-Type, Inference-Header-Content-Length, binary inputs and outputs, BF16 truncated).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../helpers/http.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../python/oip_client_check.py', import.meta.url));
// Debian's python3 with python3-numpy; the script needs nothing else
const PYTHON = '/usr/bin/python3';
const TIMEOUT_MS = 60_000;

describe('a tritonclient.http-style Python client over OIP', () => {
  let app: FastifyInstance;
  let address: string;

  beforeAll(async () => {
    app = await createApp({ workers: 1 });
    address = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('rmsnorm FP32, layernorm BF16, batchnorm FP16 training, groupnorm FP64 JSON; 400s and a 404 read as the client reads them', async () => {
    const result = await new Promise<{ code: number | string | null; stdout: string; stderr: string }>((resolve) => {
      execFile(PYTHON, [SCRIPT, address], { cwd: ROOT, timeout: TIMEOUT_MS }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : error.code ?? error.signal ?? null, stdout, stderr: error && typeof error.code === 'string' ? `${error.message}\n${stderr}` : stderr });
      });
    });
    expect(result.code, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/^oip client: 8 requests, \d+ values within tolerance\n$/);
  }, TIMEOUT_MS + 10_000);
});
