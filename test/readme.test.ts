// every fenced snippet in README.md runs against a live server, so none of them can rot.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import ts from 'typescript';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { startGrpc, type GrpcFrontEnd } from '../src/grpc/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PYTHON = '/usr/bin/python3'; // Debian's, with numpy and msgpack-numpy; the PATH one may not have them
const DOC_ADDRESS = 'http://127.0.0.1:8080';
const SNIPPET_TIMEOUT_MS = 60_000;
const DOC_GRPC_ADDRESS = '127.0.0.1:8081';
const PROTO_DIR = join(ROOT, 'src', 'grpc', 'proto');
const HAS_TRITON = spawnSync(PYTHON, ['-c', 'import tritonclient.http']).status === 0;
const HAS_TRITON_GRPC = spawnSync(PYTHON, ['-c', 'import tritonclient.grpc']).status === 0;

// how many blocks of each tag the README has: deleting (or adding) a snippet must show up here
const EXPECTED_COUNTS = { console: 9, bash: 2, python: 6, ts: 1 };
const RUNNABLE = new Set(['bash', 'python', 'ts']);

// API.md's worked example: rmsnorm of [[1, 2, 3, 4], [-1, -2, -3, -4]], eps 0
const WORKED_ROW = [0.3651, 0.7303, 1.0954, 1.4606];
const WORKED = [...WORKED_ROW, ...WORKED_ROW.map((v) => -v)];
const WORKED_TOLERANCE = 1e-4;

interface Block { tag: string; code: string; line: number; index: number }

/** fenced code blocks (``` or ~~~, any length ≥ 3), tagged by the info string's first word */
function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: Block[] = [];
  const seen: Record<string, number> = {};
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]);
    if (!open) continue;
    const [, fence, tag] = open;
    const close = new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`);
    let j = i + 1;
    while (j < lines.length && !close.test(lines[j])) j++;
    blocks.push({ tag, code: `${lines.slice(i + 1, j).join('\n')}\n`, line: i + 1, index: seen[tag] ?? 0 });
    seen[tag] = (seen[tag] ?? 0) + 1;
    i = j;
  }
  return blocks;
}

interface Run { code: number | null; signal: string | null; stdout: string; stderr: string }

/** async (the server shares this event loop); never throws, the test reads the exit status */
function run(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, timeout: SNIPPET_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, signal: error?.signal ?? null, stdout, stderr: error && typeof error.code === 'string' ? `${error.message}\n${stderr}` : stderr });
    });
  });
}

/** a TS snippet as an .mjs inside the package, so `tensor-norm-service` resolves by self-reference to dist/ */
async function runTypeScript(code: string): Promise<Run> {
  const out = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    reportDiagnostics: true,
  });
  const problems = (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(problems, 'TypeScript snippet does not transpile').toEqual([]);
  const tmpRoot = join(ROOT, 'test', '.tmp');
  await mkdir(tmpRoot, { recursive: true });
  const dir = await mkdtemp(join(tmpRoot, 'readme-'));
  try {
    const file = join(dir, 'snippet.mjs');
    await writeFile(file, out.outputText);
    return await run(process.execPath, [file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rmdir(tmpRoot).catch(() => {}); // only if empty: other suites may be using it
  }
}

/** numbers as printed, without the labels of typed arrays (`Float32Array(8) [`) */
function printedNumbers(text: string): number[] {
  return [...text.replace(/\b[A-Za-z]\w*\(\d+\)/g, ' ').matchAll(/(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/gi)].map((m) => Number(m[0]));
}

function containsRun(numbers: number[], expected: number[], tolerance: number): boolean {
  for (let start = 0; start + expected.length <= numbers.length; start++) {
    if (expected.every((v, k) => Math.abs(numbers[start + k] - v) <= tolerance)) return true;
  }
  return false;
}

function expectWorkedExample(values: number[]): void {
  expect(values).toHaveLength(WORKED.length);
  values.forEach((v, k) => expect(Math.abs(v - WORKED[k]), `data[${k}] = ${v}, expected ${WORKED[k]}`).toBeLessThanOrEqual(WORKED_TOLERANCE));
}

/** the checks on a snippet's stdout beyond exiting 0, by `tag[index]` */
const STDOUT_CHECKS: Record<string, (stdout: string, block: Block) => void> = {
  // curl: the worked example, and the answer the README prints after the block
  'bash[0]': (stdout, block) => {
    const body = JSON.parse(stdout) as { output: { dtype: string; shape: number[]; data: number[] } };
    expect(body.output.dtype).toBe('float32');
    expect(body.output.shape).toEqual([2, 4]);
    expectWorkedExample(body.output.data);
    const after = README.split(/\r?\n/).slice(block.line).join('\n');
    const documented = /answers `([^`]*)`/.exec(after.slice(after.indexOf('```') + 3));
    expect(documented, 'README should show the answer after the curl snippet').not.toBeNull();
    expect(stdout.trim().startsWith(documented![1].split('…')[0]), `README's answer ${documented![1]} does not match ${stdout}`).toBe(true);
  },
  // curl on /v2: the worked example in OIP's answer, and the answer the README prints after it
  'bash[1]': (stdout, block) => {
    const body = JSON.parse(stdout) as { model_name: string; outputs: { name: string; datatype: string; shape: number[]; data: number[] }[] };
    expect(body.model_name).toBe('rmsnorm');
    expect(body.outputs.map((o) => [o.name, o.datatype, o.shape])).toEqual([['output', 'FP32', [2, 4]]]);
    expectWorkedExample(body.outputs[0].data);
    const after = README.split(/\r?\n/).slice(block.line).join('\n');
    const documented = /answers `([^`]*)`/.exec(after.slice(after.indexOf('```') + 3));
    expect(stdout.trim().startsWith(documented![1].split('…')[0]), `README's answer ${documented![1]} does not match ${stdout}`).toBe(true);
  },
  // Python over gRPC: the worked example, printed as the README says
  'python[4]': (stdout) => {
    expect(containsRun(printedNumbers(stdout), WORKED, WORKED_TOLERANCE), `stdout should show the worked example:\n${stdout}`).toBe(true);
  },
  // TS client: the values its comment promises, then the batch results
  'ts[0]': (stdout) => {
    const numbers = printedNumbers(stdout);
    const rstd = WORKED_ROW[0]; // 1/sqrt(7.5)
    expect(containsRun(numbers, [...WORKED, rstd, rstd], WORKED_TOLERANCE), `stdout should show ±${JSON.stringify(WORKED_ROW)} and rstd [${rstd}, ${rstd}]:\n${stdout}`).toBe(true);
    const x = [1, 2, 3, 4];
    const rms = x.map((v) => v / Math.sqrt(7.5 + 1e-6));
    const layer = x.map((v) => (v - 2.5) / Math.sqrt(1.25 + 1e-5));
    expect(containsRun(numbers, [...rms, ...layer], WORKED_TOLERANCE), `stdout should show the batch results ${rms}, ${layer}:\n${stdout}`).toBe(true);
  },
};

/** `npm <script>` commands in console blocks must name scripts package.json has */
function npmScriptsNamed(command: string): string[] {
  const scripts: string[] = [];
  for (const part of command.split(/&&|\|\||;|\n/)) {
    const [tool, sub, name] = part.trim().replace(/^\$\s+/, '').split(/\s+/);
    if (tool !== 'npm') continue;
    if (sub === 'run' || sub === 'run-script') scripts.push(name);
    else if (['start', 'test', 'stop', 'restart'].includes(sub)) scripts.push(sub);
  }
  return scripts;
}

const blocks = fencedBlocks(README);

describe('README.md snippets', () => {
  let app: FastifyInstance;
  let address: string;
  let grpc: GrpcFrontEnd;
  /** Python stubs made from src/grpc/proto, as the README's console block makes them */
  let stubs: string;
  const responses: { url: string; status: number }[] = [];

  beforeAll(async () => {
    app = await buildApp({ logLevel: 'silent', workers: 1 });
    app.addHook('onResponse', async (request, reply) => {
      responses.push({ url: request.url, status: reply.statusCode });
    });
    address = await app.listen({ port: 0, host: '127.0.0.1' });
    grpc = await startGrpc(app.engine, { ...app.engine.config, host: '127.0.0.1', grpcPort: 0 }, (err) => { throw err; });
    stubs = await mkdtemp(join(tmpdir(), 'readme-stubs-'));
    const made = spawnSync('protoc', [`-I${PROTO_DIR}`, `--python_out=${stubs}`, `--grpc_out=${stubs}`, '--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin', 'inference.proto', 'health.proto']);
    expect(made.status, String(made.stderr)).toBe(0);
  });

  afterAll(async () => {
    grpc?.close();
    await app?.close();
    if (stubs) await rm(stubs, { recursive: true, force: true });
  });

  /** gRPC calls answered so far, by whether they ended OK */
  const grpcCalls = () => {
    let ok = 0;
    let failed = 0;
    for (const { labels, value } of app.engine.metrics.grpcHandled.get().values) {
      if (labels.grpc_code === 'OK') ok += value;
      else failed += value;
    }
    return { ok, failed };
  };

  beforeEach(() => {
    responses.length = 0;
  });

  it('README has 9 console, 2 bash, 6 python and 1 ts block, and no other kind', () => {
    const counts: Record<string, number> = {};
    for (const b of blocks) counts[b.tag] = (counts[b.tag] ?? 0) + 1;
    expect(counts).toEqual(EXPECTED_COUNTS);
  });

  it('the TS client the ts snippet imports is built (npx tsc -p tsconfig.json)', () => {
    expect(existsSync(join(ROOT, 'dist', 'client.js'))).toBe(true);
  });

  for (const block of blocks) {
    const name = `${block.tag || '(untagged)'} snippet ${block.index + 1} (README.md line ${block.line})`;

    if (block.tag === 'console') {
      it(`${name}: npm scripts it names exist (CI runs the commands)`, () => {
        const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
        for (const script of npmScriptsNamed(block.code)) expect(Object.keys(scripts), `npm ${script}`).toContain(script);
      });
      continue;
    }

    if (!RUNNABLE.has(block.tag)) {
      it(`${name}: has a known tag`, () => {
        expect.fail(`README.md line ${block.line}: fenced block tagged "${block.tag}"; use console, bash, python or ts (and teach test/readme.test.ts to run it)`);
      });
      continue;
    }

    // Triton's client is in neither Debian nor npm: where it is missing, test/python/oip_client_check.py
    // and test/python/grpc_client_check.py make the same wire exchanges
    const viaGrpc = block.code.includes(DOC_GRPC_ADDRESS);
    const needsTriton = block.tag === 'python' && block.code.includes('tritonclient');
    const hasTriton = viaGrpc ? HAS_TRITON_GRPC : HAS_TRITON;
    it.skipIf(needsTriton && !hasTriton)(`${name}: exits 0 against a live server`, async () => {
      const code = viaGrpc ? block.code.replaceAll(DOC_GRPC_ADDRESS, `127.0.0.1:${grpc.port}`) : block.code.replaceAll(DOC_ADDRESS, address);
      if (!viaGrpc) expect(block.code, 'snippet should talk to the documented address').toContain(DOC_ADDRESS);
      const before = grpcCalls();
      const result = block.tag === 'bash' ? await run('bash', ['-e', '-o', 'pipefail', '-c', code])
        : block.tag === 'python' ? await run(PYTHON, ['-c', code], viaGrpc ? { PYTHONPATH: stubs } : {})
          : await runTypeScript(code);
      expect(result.code, `exit ${result.code} (signal ${result.signal})\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
      if (viaGrpc) {
        const after = grpcCalls();
        expect(after.ok - before.ok, 'snippet should call the service').toBeGreaterThan(0);
        expect(after.failed - before.failed, 'every call should succeed').toBe(0);
      } else {
        const calls = responses.filter((r) => r.url.startsWith('/v1/') || r.url.startsWith('/v2/'));
        expect(calls.length, 'snippet should call the service').toBeGreaterThan(0);
        expect(calls.filter((r) => r.status !== 200), 'every call should succeed').toEqual([]);
      }
      STDOUT_CHECKS[`${block.tag}[${block.index}]`]?.(result.stdout, block);
    }, SNIPPET_TIMEOUT_MS + 10_000);
  }

  it('every snippet with a stdout check still exists', () => {
    const present = new Set(blocks.map((b) => `${b.tag}[${b.index}]`));
    for (const key of Object.keys(STDOUT_CHECKS)) expect(present, key).toContain(key);
  });
});
