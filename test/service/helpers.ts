// shared by the service tests: request bodies, a float64 reference, Prometheus text,
// and a real server process (spawned, found through its log, killed by its pid).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { Packr, Unpackr } from 'msgpackr';
import { vi } from 'vitest';
import { mulberry32, referenceRows, tolerance } from '../reference/contract.mjs';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { NODE_FLAGS, SERVICE_ENV } from '../../load/processes.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MSGPACK = 'application/msgpack';


const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

/** deterministic values in [-1.5, 2.5), from the one seeded generator */
export function values(length: number, seed = 1): Float32Array {
  const next = mulberry32(seed);
  const x = new Float32Array(length);
  for (let i = 0; i < length; i++) x[i] = next() * 4 - 1.5;
  return x;
}

function bytesOf(x: Float32Array | Float64Array): Buffer {
  return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
}

/** a msgpack body `{ input: { dtype, shape, data: bin } }` plus any other fields */
export function msgpackBody(x: Float32Array | Float64Array, shape: number[], extra: Record<string, unknown> = {}): Buffer {
  const dtype = x instanceof Float64Array ? 'float64' : 'float32';
  return packr.pack({ input: { dtype, shape, data: bytesOf(x) }, ...extra });
}

export interface TensorReply { dtype: string; shape: number[]; data: Uint8Array }

export function decodeMsgpack(body: Buffer | Uint8Array): Record<string, TensorReply> {
  return unpackr.unpack(body) as Record<string, TensorReply>;
}

/** the float32 elements of a decoded msgpack tensor (copied: its bytes may be unaligned) */
export function float32Of(t: TensorReply): Float32Array {
  const copy = new Uint8Array(t.data);
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
}

/** RMSNorm over rows of n, eps inside, no weight, in float64 */
export function referenceRmsnorm(x: ArrayLike<number>, n: number, eps = 1e-6): Float64Array {
  return referenceRows('rmsnorm', x, n, { eps });
}

/** indices whose float32 output is outside the tolerance (at most a few, for the message) */
export function float32Mismatches(actual: ArrayLike<number>, ref: ArrayLike<number>): string[] {
  const bad: string[] = [];
  if (actual.length !== ref.length) return [`length ${actual.length} vs ${ref.length}`];
  for (let i = 0; i < ref.length && bad.length < 5; i++) {
    if (!(Math.abs(actual[i] - ref[i]) <= tolerance('float32', ref[i]))) bad.push(`[${i}] ${actual[i]} vs ${ref[i]}`);
  }
  return bad;
}

// ---- Prometheus text format ----

export interface Sample { name: string; labels: Record<string, string>; value: number }

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** the value of the one sample with exactly these labels; undefined when there is none */
/** one sample of the app's /metrics, read through inject */
export async function metricValue(app: FastifyInstance, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  return sampleValue(parseMetrics(res.body), name, labels);
}

export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const found = samples.filter((s) => s.name === name
    && Object.keys(s.labels).length === wanted.length
    && wanted.every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0]?.value;
}

// ---- apps ----

/** a raw connection to 127.0.0.1:`port`, kept in `sockets` for the test's clean-up: everything the
 *  server wrote (latin1, so bytes survive), once the connection closed */
export function rawConnection(port: number, sockets: Socket[]): { socket: Socket; answer: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => {});
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  return { socket, answer };
}

/** buildApp, silent, and ready; `beforeReady` may add hooks */
export async function buildReadyApp(options: Partial<Config>, beforeReady?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = await buildApp({ logLevel: 'silent', ...options });
  beforeReady?.(app);
  await app.ready();
  return app;
}

// ---- waiting for events ----

/** vi.waitFor until check() gives a value other than undefined/false; fails after timeoutMs */
export function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 10): Promise<T> {
  return vi.waitFor(async () => {
    const value = await check();
    if (value === undefined || value === false) throw new Error(`still waiting for ${what}`);
    return value as T;
  }, { timeout: timeoutMs, interval: everyMs });
}

// ---- a real server process ----

/** resident set size of a process in bytes, from /proc/<pid>/status */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** the gRPC port (GRPC_PORT=0 unless told: a free one), null with GRPC_PORT=off */
  grpcPort: number | null;
  /** stdout and stderr lines so far (pino JSON when LOG_LEVEL allows) */
  lines: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running; for afterEach/finally */
  kill(): void;
}

/** the pino lines of a process that are JSON, with this msg */
export const logged = (lines: string[], msg: string) =>
  lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);

/** spawns `node dist/server.js` as `npm start` does (its flags and environment) on 127.0.0.1, port 0
 *  (info logs unless told), finds its port in fastify's "Server listening at" line, and waits until
 *  /readyz answers 200; `entry`: another script that listens the same way (a test's own launcher) */
export async function startServer(env: Record<string, string>, readyTimeoutMs = 20_000, entry = 'dist/server.js'): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...NODE_FLAGS, entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...SERVICE_ENV, HOST: '127.0.0.1', PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid!;
  const lines: string[] = [];
  let exited = false;
  const exit = once(child, 'exit').then(([code, signal]) => {
    exited = true;
    return { code: code as number | null, signal: signal as NodeJS.Signals | null };
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
    });
  }
  const kill = () => {
    process.off('exit', kill);
    if (exited) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // it exited and we have not heard yet
    }
  };
  // afterEach kills it; this covers a test worker that exits without running afterEach
  process.once('exit', kill);
  try {
    const port = await waitFor('the server to listen', async () => {
      if (exited) throw new Error(`server exited before listening: ${JSON.stringify(await exit)}\n${lines.join('\n')}`);
      const line = lines.find((l) => l.includes('"Server listening at http://127.0.0.1:'));
      return line === undefined ? undefined : Number(/127\.0\.0\.1:(\d+)/.exec(line)![1]);
    }, readyTimeoutMs);
    const url = `http://127.0.0.1:${port}`;
    await waitFor('/readyz 200', async () => (await fetch(`${url}/readyz`)).status === 200, readyTimeoutMs);
    // logged at info once it listens, after the HTTP port (an entry of a test's own may serve none)
    const grpcLine = lines.find((l) => l.includes('"gRPC listening on '));
    const grpcPort = grpcLine === undefined ? null : Number(/"port":(\d+)/.exec(grpcLine)![1]);
    return { child, pid, port, url, grpcPort, lines, exit, kill };
  } catch (err) {
    kill();
    throw err;
  }
}
