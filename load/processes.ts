// the servers a load run spawns: on a free 127.0.0.1 port, waited for until ready, their
// CPU time read from /proc, and always stopped by PID (also on error and on Ctrl-C).
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect as connectTcp, createServer } from 'node:net';

const READY_TIMEOUT_MS = 30_000; // a cold start on a busy shared machine
const STOP_GRACE_MS = 10_000; // the service drains in-flight requests on SIGTERM
const MAX_LOG_LINES = 10; // of each server's output, forwarded to stderr

/**
 * How the service's process is started: `npm start` and the image give the same (a test keeps them
 * in step), and every server a load run spawns gets them, so the echo and the floor run on equal terms.
 * - V8: a floor under the old generation's limit. Under sustained 16 MiB uploads V8 shrank the limit
 *   to 1.1–1.6× the ~20 MB live heap and marking restarted after every mark-compact: 100+ of them per
 *   200 requests and 25–46 ms of CPU per request instead of 21–24. 64 MB held for a fresh process
 *   only; after a few minutes of mixed traffic 96 MB kept it at one mark-compact per run. Small
 *   gRPC calls too: at 2,000 unary calls a second without it, a mark-compact every ~0.3 s (V8's
 *   trace: marking started with the old generation at 25 of its 48 MB limit), with it none in 8 s (2026-11-27).
 * - V8: no allocation-site pretenuring. Under small gRPC calls V8 decided, at random in the first
 *   seconds (9 of 11 runs of the bare gRPC floor here), that objects from a few of grpc-js's and
 *   Node's HTTP/2 allocation sites outlive the young generation, and allocated them in the old one from
 *   then on: dead within their call, they still held the call's young objects through every scavenge,
 *   so each scavenge promoted whole calls (~2.5 MB, ~7 KB a call, a mark-compact every ~1.6 s) instead
 *   of 50-90 KB. With the flag: 0 of 9 runs (--trace-gc-nvp); the service on Node 22, 3 of 3 runs without
 *   it and 0 of 3 with it. The service at 3,000 unary calls a second,
 *   6 same-run A/Bs of 10 pairs (npm run ab --kind grpc-unary, B with the flag): B ÷ A 0.76-1.00, mean
 *   0.88, by the state A fell into. Small calls on streams and small HTTP requests did not fall into it
 *   (3 runs each); their A/Bs with the flag read 0.96-1.06, within this machine's noise.
 * - V8: no memory reducer. When a process goes quiet, V8's memory reducer runs a full collection
 *   that shrinks the heap and, to save memory, drops every map (hidden class) not in use right then;
 *   optimized code that checked for one of them is thrown away and compiled again as the traffic
 *   comes back. In the load suite's equal-rate runs (each server idle two seconds in three) that
 *   collection (`--trace-gc`: "Mark-Compact (reduce)") came a few seconds into /v1/batch at 600
 *   req/s in all four runs that served the rows of other requests first (not in the one without
 *   them): the service's CPU per answer went from ~240 µs to 590–760 µs in the next slice and took
 *   ~8 s to settle (~1 s of CPU lost; the row read 1.46–1.71× the echo's, 1.16× without the rows
 *   before it). With the flag: no such collection and no such slice (2026-11-28). The cost: an idle
 *   process keeps the heap its traffic grew (a fresh process idle 35 s here: heap 64 MiB against 24,
 *   resident 151 MiB against 114), which the container's limit bounds like the rest.
 * - glibc: each socket chunk is a fresh 64 KiB malloc; with the default 128 KiB trim threshold free()
 *   gave the heap's top back to the kernel and the next chunks faulted it in again, 4,000 page faults
 *   per 16 MiB request once the process had served other traffic (25–34 ms of CPU instead of 17–19).
 *   Setting the trim threshold also fixes glibc's mmap threshold at 128 KiB (it no longer rises after
 *   a large free), so every 16 MiB buffer grpc-js makes (a message's join, an answer's frame) was a
 *   fresh mapping, faulted in page by page: ~6,100 faults and 155 ms of CPU a 16 MiB unary call here
 *   on 2026-11-27 (the bare gRPC floor: 122 ms). With the mmap threshold at 32 MiB (the most glibc's
 *   own rule raises it to; 16 MiB buffers then come from the heap, reused): ~1,100 faults and 64–81
 *   ms a call (3 pairs, 0.42–0.69×); /v2 HTTP's 16 MiB unchanged (48–52 ms either way); the resident
 *   set after the calls 453–515 MiB against 376–467.
 * Figures: load/RESULTS.md, notes.
 */
export const NODE_FLAGS = ['--initial-old-space-size=96', '--no-allocation-site-pretenuring', '--no-memory-reducer'];
export const SERVICE_ENV = { GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=33554432:glibc.malloc.mmap_threshold=33554432' };

export interface Spawned {
  name: string;
  pid: number;
  base: string;
  /** host:port of its gRPC listener; null without one */
  grpc: string | null;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** kills whatever is still running; sync, so it can run from an 'exit' handler */
export function killAll(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try { process.kill(child.pid, 'SIGKILL'); } catch { /* already gone */ }
    }
  }
  running.clear();
}

export function freePort(): Promise<number> {
  return freePorts(1).then(([port]) => port);
}

/** `count` distinct free ports: all held at once, so none is handed out twice */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(servers.map((server) => new Promise<number>((resolve, reject) => {
      server.unref();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    })));
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** whether something on 127.0.0.1 accepts a TCP connection on `port` */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/** which node runs the servers, and whether with the start-up settings (for A/B runs of them) */
export interface Runtime { node: string; startFlags: boolean }

export const THIS_RUNTIME: Runtime = { node: process.execPath, startFlags: true };

/** what a server listens on: HTTP, ready once GET /readyz answers 200; gRPC on GRPC_PORT, ready once
 *  that port takes connections (the service binds it after its HTTP port); or both */
export type Listens = 'http' | 'grpc' | 'http+grpc';

/**
 * starts `node NODE_FLAGS script` with SERVICE_ENV, PORT, GRPC_PORT and HOST set, resolves once it is ready;
 * `stdout: 'ignore'` sends it to /dev/null (a request log: what making its lines costs, not reading them here)
 */
export async function spawnServer(
  name: string, script: string, env: Record<string, string>, runtime: Runtime = THIS_RUNTIME, stdout: 'pipe' | 'ignore' = 'pipe', listens: Listens = 'http',
): Promise<Spawned> {
  const [port, grpcPort] = await freePorts(2);
  const http = listens !== 'grpc';
  const grpc = listens !== 'http';
  const child = spawn(runtime.node, [...(runtime.startFlags ? NODE_FLAGS : []), script], {
    // no gRPC listener unless asked for (its default port would clash between servers)
    env: { ...process.env, ...(runtime.startFlags ? SERVICE_ENV : {}), GRPC_PORT: grpc ? String(grpcPort) : 'off', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', stdout, 'pipe'],
  });
  running.add(child);
  let output = '';
  let shown = 0;
  let hidden = 0;
  const keep = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-4000);
    // a run's end abandons requests in flight, which the service may log one by one
    for (const line of text.split('\n').filter((l) => l.length > 0)) {
      if (shown < MAX_LOG_LINES) {
        process.stderr.write(`[${name}] ${line.slice(0, 400)}\n`);
        shown++;
      } else {
        hidden++;
      }
    }
  };
  child.stdout?.on('data', keep);
  child.stderr!.on('data', keep);
  let inUse = false; // from ready until stopped
  const exited = new Promise<void>((resolve) => child.once('exit', (code, signal) => {
    // a server gone mid-run shows as refused connections: say why
    if (inUse) process.stderr.write(`[${name}] exited (${code ?? signal}) while in use\n`);
    resolve();
  }));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(child);
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`);
    }
    try {
      const ready = !http || (await fetch(`${base}/readyz`)).status === 200;
      if (ready && (!grpc || await accepts(grpcPort))) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      running.delete(child);
      throw new Error(`${name} not ready after ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  inUse = true;
  return {
    name, pid: child.pid!, base, grpc: grpc ? `127.0.0.1:${grpcPort}` : null,
    async stop() {
      inUse = false;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      running.delete(child);
      if (hidden > 0) process.stderr.write(`[${name}] ${hidden} more log lines not shown\n`);
    },
  };
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU seconds of a process, all its threads: the sum of each thread's time on a CPU as the scheduler
 * counts it, in ns (/proc/<pid>/task/<tid>/schedstat). /proc/<pid>/stat gives it in whole clock ticks
 * (10 ms here): a one-second slice of a server answering 2,000 small requests uses ~100 ms, so ticks
 * alone were ±10 % a slice. A thread that ends between two readings takes its time with it (the
 * servers here keep their threads); where schedstat is missing, /proc/<pid>/stat
 */
export function cpuSeconds(pid: number): number {
  let tids: string[] | null = null;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    // the process is gone: as /proc/<pid>/stat would fail
  }
  if (tids !== null && SCHEDSTAT) {
    let ns = 0;
    for (const tid of tids) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // the thread ended after the listing
      }
    }
    return ns / 1e9;
  }
  return tickSeconds(pid);
}

/** whether this kernel keeps per-thread run times (it shows 0 ns for a thread that has run, else) */
const SCHEDSTAT = (() => {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[0]) > 0;
  } catch {
    return false;
  }
})();

/** user + system CPU seconds of a process, all its threads, from /proc/<pid>/stat, in clock ticks */
function tickSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name, which is in parentheses and may hold spaces
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime (fields 14, 15)
}
