// one measured run of a scenario against one server: autocannon's closed loop after a warm-up, the
// server's CPU and event-loop delay over the window, then spot checks; or the same at a fixed offered
// rate, paced evenly, its window taken in slices beside other servers' (pacedRun, load/interleave.ts).
import { createRequire } from 'node:module';
import autocannon, { type Instance } from 'autocannon';
import { scrapeLoopDelay, type LoopDelay } from './event-loop.js';
import { fixedAmount, type Options } from './options.js';
import { keptPool, pacedHttp, SLICE_MS } from './paced-http.js';
import { cpuSeconds } from './processes.js';
import type { SlicedRun } from './interleave.js';
import type { PacedFigures, Ratio, RunFigures } from './results.js';
import type { Sample, Scenario, Target } from './scenarios.js';

// autocannon 8 keeps every response body as a string, for hooks this suite does not use;
// decoding 16 MiB binary bodies that way made the load generator the bottleneck, so it is off
const responseQueue = createRequire(import.meta.url)('autocannon/lib/pipelinedRequestsQueue.js') as { prototype: { addBody?: unknown } };
if (typeof responseQueue.prototype.addBody === 'function') responseQueue.prototype.addBody = () => {};

export const MIN_OK = 20; // a run too slow to give this many answers is extended, up to 3 × --duration
export const SETTLE_MAX_MS = 15_000; // after a run, until the server's CPU is idle: runs must not overlap
const BESIDE_MAX_S = 30; // a fixed-amount window lasts this long at most for the load beside it

export interface Endpoint { target: Target; base: string; pid: number | null }

export function headers(sample: Sample, o: Options): Record<string, string> {
  const h: Record<string, string> = { ...sample.headers };
  if (o.apiKey !== null) h.authorization = `Bearer ${o.apiKey}`;
  return h;
}

export interface Cannon {
  ok: number; responses: number; non2xx: number; errors: number; timeouts: number; seconds: number; latencies: number[];
  /** paced runs: the SLICE_MS slices of the run in which an answer came (0 otherwise) */
  busySlices: number;
}

/** `duration` in s or a fixed `amount` (closed loop); `prompt`: stop() takes effect within 50 ms, not at the next 1 s tick */
export interface Run { duration?: number; amount?: number; prompt?: boolean }

export function startCannon(url: string, s: Scenario, sample: Sample, o: Options, run: Run): { instance: Instance; done: Promise<Cannon> } {
  const connections = o.connections ?? s.connections;
  const { prompt, ...limits } = run; // autocannon refuses a limit given as undefined
  const latencies: number[] = [];
  let responses = 0;
  const started = performance.now();
  let instance!: Instance;
  const done = new Promise<Cannon>((resolvePromise, reject) => {
    instance = autocannon({
      url, method: 'POST', headers: headers(sample, o), body: sample.body,
      connections, pipelining: 1, timeout: 60, ...limits,
      // results come at a sample tick: with a fixed amount, tick often so a run ends when it is done
      sampleInt: run.amount === undefined && prompt !== true ? 1000 : 50,
    }, (err, result) => {
      if (err) return reject(err);
      resolvePromise({
        ok: result['2xx'], responses, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts,
        seconds: (performance.now() - started) / 1000, latencies, busySlices: 0,
      });
    });
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    responses++;
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  return { instance, done };
}

function cannon(url: string, s: Scenario, sample: Sample, o: Options, run: Run): Promise<Cannon> {
  return startCannon(url, s, sample, o, run).done;
}

export function percentile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export async function spotCheck(url: string, samples: Sample[], target: Target, o: Options): Promise<string[]> {
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
export async function settle(pid: number | null): Promise<void> {
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

/** other load, already running, that the measured window is taken beside (load/mixed.ts) */
export interface Beside {
  /** resolves once that load is in its steady state, after the warm-up (bounded by the load itself) */
  ready(): Promise<void>;
  /** the window opens */
  open(): void;
  /** the window lasts while this holds: in a fixed-amount run up to BESIDE_MAX_S, else up to 3 × --duration */
  pending(): boolean;
  /** the window closed: stop the load, before the server is left to settle */
  close(): void;
}

/** `beside`: other load the window is taken beside */
export interface How { beside?: Beside | null }

const emptyCannon = (): Cannon => ({ ok: 0, responses: 0, non2xx: 0, errors: 0, timeouts: 0, seconds: 0, latencies: [], busySlices: 0 });

function add(c: Cannon, r: Cannon): void {
  c.ok += r.ok; c.responses += r.responses; c.non2xx += r.non2xx; c.errors += r.errors; c.timeouts += r.timeouts;
  c.seconds += r.seconds; c.busySlices += r.busySlices;
  for (const l of r.latencies) c.latencies.push(l);
}

/** a window's figures: `serverCpu` the server's CPU seconds over it (null: unknown), `genSeconds` the generator's */
function figuresOf(
  e: Endpoint, s: Scenario, c: Cannon, serverCpu: number | null, genSeconds: number, eventLoop: LoopDelay | null, samples: Sample[], failures: string[], paced: boolean,
): RunFigures {
  const sorted = c.latencies.sort((a, b) => a - b);
  const rps = c.ok / c.seconds;
  return {
    responses: c.responses, ok: c.ok, non2xx: c.non2xx, errors: c.errors, timeouts: c.timeouts, seconds: c.seconds,
    rps, mibPerS: (rps * s.tensorBytes) / 2 ** 20,
    p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99),
    serverCpuPerReq: serverCpu === null || c.responses === 0 ? null : serverCpu / c.responses,
    loadgenCpuPerReq: c.responses === 0 ? 0 : genSeconds / c.responses,
    loadgenCores: genSeconds / c.seconds,
    spotChecks: samples.length, spotCheckFailures: failures.length, firstFailure: failures[0] ?? null,
    eventLoop,
    ...(paced ? { busyShare: Math.min(1, c.busySlices / Math.ceil((c.seconds * 1000) / SLICE_MS)) } : {}),
  };
}

/**
 * warm-up, then the measured window straight after it, so the server is in a steady state
 * at both ends of the window and its CPU time over the window belongs to the responses in it
 */
export async function measure(e: Endpoint, s: Scenario, samples: Sample[], o: Options, how: How = {}): Promise<RunFigures> {
  const url = `${e.base}${s.path}`;
  const sample = samples[0];
  const fixed = fixedAmount(o);
  const beside = how.beside ?? null;
  // a scrape starts the event-loop histogram afresh. It comes before the warm-up, as a scrape (a
  // request down another route) sets the service back for about a second (pacedRun says how much);
  // beside a background load, as the mixed window opens, so that it spans that window alone
  const service = e.target === 'service';
  if (service && beside === null) await scrapeLoopDelay(e.base);
  if (o.warmup > 0) await cannon(url, s, sample, o, { duration: o.warmup });
  await beside?.ready();
  if (service && beside !== null) await scrapeLoopDelay(e.base);
  beside?.open();
  const cpu0 = e.pid === null ? 0 : cpuSeconds(e.pid);
  const gen0 = process.cpuUsage();
  const c = emptyCannon();
  const more = () => (fixed
    ? beside !== null && beside.pending() && c.seconds < BESIDE_MAX_S
    : (c.ok < MIN_OK || beside?.pending() === true) && c.seconds < 3 * o.duration);
  do {
    add(c, await cannon(url, s, sample, o, fixed ? { amount: s.shortAmount } : { duration: o.duration }));
  } while (more());
  const gen = process.cpuUsage(gen0);
  const cpu1 = e.pid === null ? 0 : cpuSeconds(e.pid);
  const eventLoop = service ? await scrapeLoopDelay(e.base) : null;
  beside?.close();
  if (!fixed) await settle(e.pid);
  const failures = await spotCheck(url, samples, e.target, o);
  return figuresOf(e, s, c, e.pid === null ? null : cpu1 - cpu0, (gen.user + gen.system) / 1e6, eventLoop, samples, failures, false);
}

/** the slices each server's saturated window is taken in, in turn with the others' (measureInTurn) */
export const SATURATED_SLICES = 2;

/**
 * one scenario's saturated runs on several servers, their windows taken in turn: each server warmed
 * up straight before its first slice, then the window in SATURATED_SLICES slices of duration ÷ slices,
 * the servers' order reversed from one round to the next (A B C, C B A), each server idle again
 * before the next slice. One window per server, taken whole and one after the other, made the first
 * scenario's service ÷ echo read 0.68–0.95× in fourteen runs of the same code within an hour (the
 * service always first there, the machine's state drifting between windows seconds apart); in turn,
 * a drift over the run weighs on every server alike. A server with fewer than MIN_OK answers runs
 * on alone, up to 3 × --duration in all. The service's event-loop delay spans its warm-up, its
 * slices and the others' between them. With --short (a fixed amount) the servers run one after the other
 */
export async function measureInTurn(sides: Endpoint[], s: Scenario, samples: Sample[], o: Options): Promise<Map<Target, RunFigures>> {
  const got = new Map<Target, RunFigures>();
  if (fixedAmount(o)) {
    for (const e of sides) got.set(e.target, await measure(e, s, samples, o));
    return got;
  }
  const sample = samples[0];
  const runs = sides.map((e) => ({ e, url: `${e.base}${s.path}`, c: emptyCannon(), cpu: 0, gen: 0 }));
  const slice = async (run: (typeof runs)[number]): Promise<void> => {
    const cpu0 = run.e.pid === null ? 0 : cpuSeconds(run.e.pid);
    const gen0 = process.cpuUsage();
    add(run.c, await cannon(run.url, s, sample, o, { duration: o.duration / SATURATED_SLICES }));
    const gen = process.cpuUsage(gen0);
    run.gen += (gen.user + gen.system) / 1e6;
    if (run.e.pid !== null) run.cpu += cpuSeconds(run.e.pid) - cpu0;
    await settle(run.e.pid);
  };
  // a scrape starts the service's event-loop histogram afresh, and sets it back for about a second: before its warm-up
  for (const { e } of runs) if (e.target === 'service') await scrapeLoopDelay(e.base);
  for (let round = 0; round < SATURATED_SLICES; round++) {
    for (const run of round % 2 === 0 ? runs : [...runs].reverse()) {
      if (round === 0 && o.warmup > 0) await cannon(run.url, s, sample, o, { duration: o.warmup });
      await slice(run);
    }
  }
  for (const run of runs) while (run.c.ok < MIN_OK && run.c.seconds < 3 * o.duration) await slice(run);
  for (const run of runs) {
    const eventLoop = run.e.target === 'service' ? await scrapeLoopDelay(run.e.base) : null;
    const failures = await spotCheck(run.url, samples, run.e.target, o);
    got.set(run.e.target, figuresOf(run.e, s, run.c, run.e.pid === null ? null : run.cpu, run.gen, eventLoop, samples, failures, false));
  }
  return got;
}

/**
 * an equal-rate run's warm-up, at least (s): after 0.75 s at 2,000 small req/s the JIT was still
 * compiling through the first slices (the service's 1 s slices, µs an answer on the main thread +
 * on the other threads: 74 + 66, 45 + 7, 43 + 2, then ~40 + 1); after 3 s the first read 43 + 2
 * (2026-11-28, connections kept from the warm-up on)
 */
export const PACED_WARMUP_S = 3;

/** the warm-up of an equal-rate run: none where none was asked for (--short, --warmup 0) */
export const pacedWarmup = (o: Options): number => (o.warmup > 0 ? Math.max(o.warmup, PACED_WARMUP_S) : 0);

/**
 * a run at `rate` offered req/s taken in slices beside other servers' (load/interleave.ts): warm-up
 * at the rate, then each slice a run of its own, its requests spread evenly (load/paced-http.ts); a
 * short run sends its fixed amount in one slice. The service's event-loop delay spans the warm-up
 * and the slices: its first scrape comes before the warm-up, as the scrape (a request down another
 * route) set the service's code back: scraped after a 3 s warm-up, its first two slices cost
 * 94 + 48 and 51 + 19 µs an answer against ~46 + 1 after them (scraped before it: 43 + 2, 41 + 0).
 */
export function pacedRun(e: Endpoint, s: Scenario, samples: Sample[], o: Options, rate: number): SlicedRun<PacedFigures> {
  const url = `${e.base}${s.path}`;
  const fixed = fixedAmount(o);
  const c = emptyCannon();
  let genSeconds = 0;
  const connections = o.connections ?? s.connections;
  // the warm-up and every slice on the same connections (load/paced-http.ts says why)
  let pool: ReturnType<typeof keptPool> | null = null;
  const paced = (run: { duration: number } | { amount: number }) =>
    pacedHttp({ url, headers: headers(samples[0], o), body: samples[0].body, connections, rate, pool: pool ??= keptPool(url, connections), ...run });
  return {
    pid: e.pid,
    async open() {
      if (e.target === 'service') await scrapeLoopDelay(e.base);
      const warmup = pacedWarmup(o);
      if (warmup > 0) await paced({ duration: warmup });
    },
    async slice(seconds) {
      const gen0 = process.cpuUsage();
      const got = await paced(fixed ? { amount: s.shortAmount } : { duration: seconds });
      add(c, got);
      const gen = process.cpuUsage(gen0);
      genSeconds += (gen.user + gen.system) / 1e6;
      return got.responses;
    },
    async close(serverCpu, slices) {
      await pool?.destroy();
      const eventLoop = e.target === 'service' ? await scrapeLoopDelay(e.base) : null;
      if (!fixed) await settle(e.pid);
      const failures = await spotCheck(url, samples, e.target, o);
      const f = figuresOf(e, s, c, serverCpu, genSeconds, eventLoop, samples, failures, true);
      return { ...f, achievedRate: f.responses / f.seconds, busyShare: f.busyShare ?? 0, slices };
    },
  };
}

/** one run's figures ÷ another's */
export function ratioOf(a: RunFigures, base: RunFigures): Ratio {
  return {
    rps: a.rps / base.rps, p50: a.p50Ms / base.p50Ms, p99: a.p99Ms / base.p99Ms,
    serverCpuPerReq: a.serverCpuPerReq === null || base.serverCpuPerReq === null ? null : a.serverCpuPerReq / base.serverCpuPerReq,
  };
}
