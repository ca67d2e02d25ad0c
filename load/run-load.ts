// npm run load: every scenario against the service and two baselines, interleaved: the echo (fastify +
// msgpackr, no compute) and the transport floor (node:http moving the same bytes). Figures as ratios
// to both; responses spot-checked; load/results.json and RESULTS.md.
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { rowsOf, table } from './console-table.js';
import { scrapeLoopDelay } from './event-loop.js';
import { commandLine, machine } from './machine.js';
import { options, type Options } from './options.js';
import { cpuSeconds, killAll, spawnServer, type Spawned } from './processes.js';
import { writeReport } from './report.js';
import type { LoadResults, Ratio, RunFigures, ScenarioFigures } from './results.js';
import { makeSample, scenarios, type Sample, type Scenario, type Target } from './scenarios.js';

// autocannon 8 keeps every response body as a string, for hooks this suite does not use;
// decoding 16 MiB binary bodies that way made the load generator the bottleneck, so it is off
const responseQueue = createRequire(import.meta.url)('autocannon/lib/pipelinedRequestsQueue.js') as { prototype: { addBody?: unknown } };
if (typeof responseQueue.prototype.addBody === 'function') responseQueue.prototype.addBody = () => {};

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// distinct bodies sent at once after each run (so a response holding another request's data
// shows), plus the run's own body
const SPOT_CHECKS = 3;
const SPOT_CHECKS_SHORT = 1;
const MIN_OK = 20; // a run too slow to give this many answers is extended, up to 3 × --duration
const SETTLE_MAX_MS = 15_000; // after a run, until the server's CPU is idle: runs must not overlap

interface Endpoint { target: Target; base: string; pid: number | null }

/**
 * a private copy of the built service, so a rebuild of dist/ by other work on this machine
 * cannot swap the code under a running server (a worker restarted mid-run would load it)
 */
let snapshot: string | null = null;

function snapshotService(dist: string): string {
  const dir = join(ROOT, 'dist-load', `service-${process.pid}`);
  snapshot = dir;
  // inside this checkout, so the copy resolves this checkout's node_modules
  cpSync(dist, join(dir, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json')); // "type": "module", and the version
  return dir;
}

function headers(sample: Sample, o: Options): Record<string, string> {
  const h: Record<string, string> = { ...sample.headers };
  if (o.apiKey !== null) h.authorization = `Bearer ${o.apiKey}`;
  return h;
}

interface Cannon { ok: number; responses: number; non2xx: number; errors: number; timeouts: number; seconds: number; latencies: number[] }

function cannon(url: string, s: Scenario, sample: Sample, o: Options, run: { duration?: number; amount?: number }): Promise<Cannon> {
  const connections = o.connections ?? s.connections;
  return new Promise((resolvePromise, reject) => {
    const latencies: number[] = [];
    let responses = 0;
    const started = performance.now();
    const instance = autocannon({
      url, method: 'POST', headers: headers(sample, o), body: sample.body,
      connections, pipelining: 1, timeout: 60, ...run,
      // results come at a sample tick: with a fixed amount, tick often so a run ends when it is done
      sampleInt: run.amount === undefined ? 1000 : 50,
    }, (err, result) => {
      if (err) return reject(err);
      resolvePromise({
        ok: result['2xx'], responses, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts,
        seconds: (performance.now() - started) / 1000, latencies,
      });
    });
    instance.on('response', (_client, status, _bytes, ms) => {
      responses++;
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

function percentile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

async function spotCheck(url: string, s: Scenario, samples: Sample[], target: Target, o: Options): Promise<string[]> {
  const failures = await Promise.all(samples.map(async (sample) => {
    try {
      const response = await fetch(url, { method: 'POST', headers: headers(sample, o), body: sample.body as Uint8Array<ArrayBuffer> });
      return sample.check(response.status, Buffer.from(await response.arrayBuffer()), target);
    } catch (err) {
      return `request failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }));
  return failures.filter((f): f is string => f !== null);
}

const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms));

/** waits for the requests a run left in flight to finish: the server's CPU idle for 200 ms */
async function settle(pid: number | null): Promise<void> {
  if (pid === null) return sleep(1000);
  const deadline = Date.now() + SETTLE_MAX_MS;
  let last = cpuSeconds(pid);
  while (Date.now() < deadline) {
    await sleep(200);
    const now = cpuSeconds(pid);
    if (now - last <= 0.02) return; // at most 10 % of one core
    last = now;
  }
}

/**
 * warm-up, then the measured window straight after it, so the server is in a steady state
 * at both ends of the window and its CPU time over the window belongs to the responses in it
 */
async function measure(e: Endpoint, s: Scenario, samples: Sample[], o: Options): Promise<RunFigures> {
  const url = `${e.base}${s.path}`;
  const sample = samples[0];
  const fixed = o.short && o.duration === 0;
  if (o.warmup > 0) await cannon(url, s, sample, o, { duration: o.warmup });
  if (e.target === 'service') await scrapeLoopDelay(e.base); // starts the window's histogram afresh
  const cpu0 = e.pid === null ? 0 : cpuSeconds(e.pid);
  const gen0 = process.cpuUsage();
  const c: Cannon = { ok: 0, responses: 0, non2xx: 0, errors: 0, timeouts: 0, seconds: 0, latencies: [] };
  do {
    const r = await cannon(url, s, sample, o, fixed ? { amount: s.shortAmount } : { duration: o.duration });
    c.ok += r.ok; c.responses += r.responses; c.non2xx += r.non2xx; c.errors += r.errors; c.timeouts += r.timeouts;
    c.seconds += r.seconds;
    for (const l of r.latencies) c.latencies.push(l);
  } while (!fixed && c.ok < MIN_OK && c.seconds < 3 * o.duration);
  const gen = process.cpuUsage(gen0);
  const cpu1 = e.pid === null ? 0 : cpuSeconds(e.pid);
  const eventLoop = e.target === 'service' ? await scrapeLoopDelay(e.base) : null;
  if (!fixed) await settle(e.pid);
  const failures = await spotCheck(url, s, samples, e.target, o);
  const sorted = c.latencies.sort((a, b) => a - b);
  const genSeconds = (gen.user + gen.system) / 1e6;
  const rps = c.ok / c.seconds;
  return {
    responses: c.responses, ok: c.ok, non2xx: c.non2xx, errors: c.errors, timeouts: c.timeouts, seconds: c.seconds,
    rps, mibPerS: (rps * s.tensorBytes) / 2 ** 20,
    p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99),
    serverCpuPerReq: e.pid === null || c.responses === 0 ? null : (cpu1 - cpu0) / c.responses,
    loadgenCpuPerReq: c.responses === 0 ? 0 : genSeconds / c.responses,
    loadgenCores: genSeconds / c.seconds,
    spotChecks: samples.length, spotCheckFailures: failures.length, firstFailure: failures[0] ?? null,
    eventLoop,
  };
}

async function main(): Promise<number> {
  const o = options(ROOT);
  const list = scenarios(o.only);
  if (list.length === 0) throw new Error(`--only ${o.only.join(',')} matches no scenario`);
  // a guard against a hang, not a schedule: every run at its longest, plus start-up
  const perRun = o.short && o.duration === 0 ? 5 : o.warmup + 3 * o.duration + SETTLE_MAX_MS / 1000 + 10;
  const budgetMs = (list.length * 2 * perRun + 120) * 1000;
  setTimeout(() => {
    process.stderr.write(`load: over its ${Math.round(budgetMs / 1000)} s budget; stopping\n`);
    killAll();
    process.exit(2);
  }, budgetMs).unref();

  const spawned: Spawned[] = [];
  const loadAtStart = loadavg()[0];
  try {
    let service: Endpoint;
    let echo: Endpoint | null;
    let floor: Endpoint | null;
    if (o.url !== null) {
      service = { target: 'service', base: o.url, pid: o.serverPid };
      echo = o.echoUrl === null ? null : { target: 'echo', base: o.echoUrl, pid: null };
      floor = o.floorUrl === null ? null : { target: 'floor', base: o.floorUrl, pid: null };
    } else {
      const env: Record<string, string> = { LOG_LEVEL: 'warn' };
      if (o.workers !== null) env.WORKERS = o.workers;
      const runtime = { node: o.node, startFlags: o.startFlags };
      const svc = await spawnServer('service', join(snapshotService(o.serviceDist ?? join(ROOT, 'dist')), 'dist', 'server.js'), env, runtime);
      spawned.push(svc);
      const ech = await spawnServer('echo', join(ROOT, 'dist-load', 'echo-server.js'), {}, runtime);
      spawned.push(ech);
      const flo = await spawnServer('floor', join(ROOT, 'dist-load', 'floor-server.js'), {}, runtime);
      spawned.push(flo);
      service = { target: 'service', base: svc.base, pid: svc.pid };
      echo = { target: 'echo', base: ech.base, pid: ech.pid };
      floor = { target: 'floor', base: flo.base, pid: flo.pid };
    }
    const how = o.short && o.duration === 0 ? 'short: a fixed number of requests per run' : `${o.duration} s per run after ${o.warmup} s warm-up`;
    const servers = o.url === null ? `; servers on node ${o.node}${o.startFlags ? '' : ' without the start-up flags'}` : '';
    process.stdout.write(`load: ${list.length} scenarios, ${o.connections ?? 'per-scenario'} connections, ${how}${servers}; service ${service.base}${echo ? `, echo ${echo.base}` : ''}${floor ? `, floor ${floor.base}` : ''}\n`);

    const figures: ScenarioFigures[] = [];
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      const samples = Array.from({ length: 1 + (o.short ? SPOT_CHECKS_SHORT : SPOT_CHECKS) }, (_, k) => makeSample(s, k));
      // rotate which side goes first, so a slow drift of the machine favours none
      const sides = [service, echo, floor].filter((e): e is Endpoint => e !== null);
      const order = sides.map((_, k) => sides[(i + k) % sides.length]);
      const got = new Map<Target, RunFigures>();
      for (const e of order) got.set(e.target, await measure(e, s, samples, o));
      const svc = got.get('service')!;
      const ech = got.get('echo') ?? null;
      const flo = got.get('floor') ?? null;
      const f: ScenarioFigures = {
        id: s.id, op: s.op, name: s.name, label: s.label, path: s.path, encoding: s.encoding,
        tensorBytes: s.tensorBytes, connections: o.connections ?? s.connections, service: svc, echo: ech, floor: flo,
        ratio: ech === null ? null : ratioOf(svc, ech),
        floorRatio: flo === null ? null : ratioOf(svc, flo),
      };
      figures.push(f);
      process.stdout.write(`${table(rowsOf(f)).split('\n').slice(1).join('\n')}\n`);
    }

    process.stdout.write(`\n${table(figures.flatMap(rowsOf))}\n`);
    const results: LoadResults = {
      kind: 'load', date: new Date().toISOString(), command: commandLine('dist-load/run-load.js'), machine: machine(),
      loadAverage: { start: loadAtStart, end: loadavg()[0] },
      options: {
        short: o.short, duration: o.short && o.duration === 0 ? null : o.duration, warmup: o.warmup, connections: o.connections,
        url: o.url, echoUrl: o.echoUrl, floorUrl: o.floorUrl, workers: o.workers ?? (o.url === null ? `service default (${availableParallelism()} CPUs here)` : 'unknown'),
        node: o.url === null ? o.node : undefined, startFlags: o.url === null ? o.startFlags : undefined,
        serviceDist: o.serviceDist ?? undefined,
      },
      scenarios: figures,
    };
    mkdirSync(o.out, { recursive: true });
    writeFileSync(join(o.out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    await writeReport(o.out);
    process.stdout.write(`wrote ${join(o.out, 'results.json')}, RESULTS.md, results.svg\n`);

    const runs = figures.flatMap((f) => [f.service, f.echo, f.floor].filter((r): r is RunFigures => r !== null));
    const checks = runs.reduce((n, r) => n + r.spotChecks, 0);
    const failed = runs.reduce((n, r) => n + r.spotCheckFailures, 0);
    const empty = figures.filter((f) => f.service.ok === 0 || f.echo?.ok === 0 || f.floor?.ok === 0).map((f) => f.id);
    process.stdout.write(`spot checks: ${checks - failed} passed, ${failed} failed\n`);
    for (const f of figures) {
      for (const [target, r] of [['service', f.service], ['echo', f.echo], ['floor', f.floor]] as const) {
        if (r?.firstFailure) process.stdout.write(`  ${f.id} ${target}: ${r.firstFailure}\n`);
      }
    }
    if (empty.length > 0) process.stdout.write(`no successful responses: ${empty.join(', ')}\n`);
    return failed === 0 && empty.length === 0 ? 0 : 1;
  } finally {
    await Promise.all(spawned.map((p) => p.stop()));
    removeSnapshot();
  }
}

function ratioOf(svc: RunFigures, base: RunFigures): Ratio {
  return {
    rps: svc.rps / base.rps, p50: svc.p50Ms / base.p50Ms, p99: svc.p99Ms / base.p99Ms,
    serverCpuPerReq: svc.serverCpuPerReq === null || base.serverCpuPerReq === null ? null : svc.serverCpuPerReq / base.serverCpuPerReq,
  };
}

function removeSnapshot(): void {
  if (snapshot !== null) rmSync(snapshot, { recursive: true, force: true });
  snapshot = null;
}

process.on('exit', () => {
  killAll();
  removeSnapshot();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}
main().then((code) => process.exit(code), (err) => {
  // a usage error names its option; anything else gets its stack
  const text = err instanceof Error ? (err.message.startsWith('--') ? err.message : err.stack ?? err.message) : String(err);
  process.stderr.write(`load: ${text}\n`);
  killAll();
  process.exit(1);
});
