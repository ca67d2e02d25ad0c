// RESULTS.md and results.svg from the latest results.json (npm run load) and bench.json
// (npm run bench) in one folder. Text between the notes markers of an existing RESULTS.md is
// kept, so the analysis written there survives a re-run. Standalone: node dist-load/report.js [dir]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { channelSection, channelTargets } from './bench-channels-report.js';
import { n, pct, tableMd, x } from './markdown.js';
import { grpcSection, grpcTargets } from './grpc-report.js';
import { mixedSection, mixedTargets } from './mixed-report.js';
import { rateSection, rateTargets } from './rates-report.js';
import type { BenchResults, LoadResults, RunFigures, ScenarioFigures } from './results.js';

const NOTES_BEGIN = '<!-- notes:begin -->';
const NOTES_END = '<!-- notes:end -->';

function readJson<T>(path: string): T | null {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : null;
}

const shape = (s: [number, number]) => `${s[0]}×${s[1]}`;

export function chartSpec(load: LoadResults): TopLevelSpec {
  const order = load.scenarios.map((s) => s.id);
  const values = load.scenarios.flatMap((s) => (['service', 'echo', 'floor'] as const).flatMap((target) => {
    const r = s[target] ?? null; // results from before the floor have none
    return r === null ? [] : [{ scenario: s.id, target, rps: r.rps, p99: r.p99Ms }];
  })).filter((v) => v.rps > 0 && v.p99 > 0);
  const x = { field: 'scenario', type: 'nominal', sort: order, title: null, axis: { labelAngle: -40 } } as const;
  const color = { field: 'target', type: 'nominal', title: null, scale: { domain: ['service', 'echo', 'floor'], range: ['#1f77b4', '#aaaaaa', '#555555'] } } as const;
  const panel = (field: string, title: string) => ({
    width: 720, height: 220,
    mark: { type: 'bar', tooltip: true },
    encoding: {
      x, xOffset: { field: 'target', sort: ['service', 'echo', 'floor'] }, color,
      y: { field, type: 'quantitative', title, scale: { type: 'log' }, stack: null },
    },
  }) as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Service beside the echo baseline and the transport floor', subtitle: `${load.date.slice(0, 10)} · ${load.machine.nproc} CPUs · ${load.options.connections ?? 'per-scenario'} connections` },
    data: { values },
    vconcat: [panel('rps', 'requests/s (log)'), panel('p99', 'p99 latency, ms (log)')],
    config: { font: 'sans-serif' },
  } as TopLevelSpec;
}

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

export interface Target { what: string; goal: string; measured: string; met: boolean | null }

function targets(load: LoadResults | null, bench: BenchResults | null): Target[] {
  const out: Target[] = [];
  // a short run proves the instruments work; its figures judge nothing
  const judged = (t: Target, short: boolean) => out.push(short ? { ...t, met: null } : t);
  if (bench !== null) {
    for (const [kernel, goal] of [['rmsnorm', 0.75], ['layernorm', 0.65]] as const) {
      // the best implementation the build has (the service runs that one)
      const k = bench.kernels
        .filter((f) => f.kernel === kernel && f.shape[0] === 8192 && f.shape[1] === 4096 && f.inDtype === 'float32' && f.outDtype === 'float32')
        .sort((a, b) => b.fractionOfMemcpy - a.fractionOfMemcpy)[0];
      if (k) judged({ what: `${kernel} kernel (${k.impl ?? 'js'}) 8192×4096 float32, share of memcpy`, goal: `≥ ${pct(goal)}`, measured: pct(k.fractionOfMemcpy), met: k.fractionOfMemcpy >= goal }, bench.short);
    }
    for (const p of bench.pool.filter((f) => f.workers === 2)) {
      judged({ what: `${p.op} pool ${shape(p.shape)}, 2 workers ÷ 1`, goal: '≥ 1.70×', measured: x(p.speedup), met: p.speedup >= 1.7 }, bench.short);
    }
    for (const t of channelTargets(bench)) judged(t, bench.short);
  }
  if (load !== null) {
    const find = (id: string) => load.scenarios.find((s) => s.id === id && s.ratio !== null);
    for (const op of ['rmsnorm', 'layernorm']) {
      for (const [name, goal] of [['small', 0.8], ['medium', 1.5], ['large', 1.5]] as const) {
        const s = find(`${op}/${name}`);
        if (s) judged({ what: `${s.id} req/s ÷ echo`, goal: `≥ ${goal.toFixed(2)}×`, measured: x(s.ratio!.rps), met: s.ratio!.rps >= goal }, load.options.short);
      }
      for (const name of ['medium', 'large']) {
        const c = find(`${op}/${name}`)?.ratio?.serverCpuPerReq;
        if (c !== undefined && c !== null) judged({ what: `${op}/${name} server CPU/request ÷ echo`, goal: '≤ 0.50×', measured: x(c), met: c <= 0.5 }, load.options.short);
      }
      const s = find(`${op}/small`);
      if (s) {
        // the target is stated at 16 connections
        judged({ what: `${s.id} p99 ÷ echo p99 (${s.connections} connections)`, goal: '≤ 1.50×', measured: x(s.ratio!.p99), met: s.ratio!.p99 <= 1.5 }, load.options.short || s.connections !== 16);
      }
      // issue 11: server CPU per request against the transport floor
      for (const [name, goal] of [['small', 2], ['medium', 1.5], ['large', 1.5]] as const) {
        const c = load.scenarios.find((f) => f.id === `${op}/${name}`)?.floorRatio?.serverCpuPerReq;
        if (c !== undefined && c !== null) judged({ what: `${op}/${name} server CPU/request ÷ floor`, goal: `≤ ${goal.toFixed(2)}×`, measured: x(c), met: c <= goal }, load.options.short);
      }
    }
    out.push(...mixedTargets(load));
    out.push(...rateTargets(load));
    out.push(...grpcTargets(load));
  }
  return out;
}

/** how busy the shared machine was: other work competes for the same CPUs */
function busy(r: LoadResults | BenchResults): string {
  const l = r.loadAverage;
  return l === undefined ? 'load average not recorded' : `1-min load average ${l.start.toFixed(1)} → ${l.end.toFixed(1)} on ${r.machine.nproc} CPUs`;
}

function loadSection(load: LoadResults): string {
  const o = load.options;
  const slices = o.saturatedSlices ?? 1;
  const how = o.duration === null
    ? 'a fixed small number of requests per run (short mode)'
    : slices > 1
      ? `${o.duration} s per server in ${slices} slices taken in turn with the other servers' (A B C, then C B A; extended, up to 3×, until 20 answers), after ${o.warmup} s of warm-up straight before its first, each server idle again before the next slice`
      : `${o.duration} s per run (extended, up to 3×, until 20 answers) straight after ${o.warmup} s of warm-up, the server idle again before the next run`;
  const rows = load.scenarios.map((s: ScenarioFigures) => {
    const sides = [s.service, s.echo, s.floor ?? null];
    const each = (figure: (r: RunFigures) => number | null, digits = 2) => sides.map((r) => n(r === null ? null : figure(r), digits)).join(' / ');
    const runs = sides.filter((r): r is RunFigures => r !== null);
    const failed = runs.reduce((k, c) => k + c.spotCheckFailures, 0);
    const cpuMs = (r: RunFigures) => (r.serverCpuPerReq === null ? null : r.serverCpuPerReq * 1000);
    return [
      s.id, s.label, String(s.connections),
      each((r) => r.rps, 1), x(s.ratio?.rps), x(s.floorRatio?.rps),
      n(s.service.mibPerS, 1),
      each((r) => r.p50Ms), each((r) => r.p99Ms), x(s.ratio?.p99),
      each(cpuMs, 3), x(s.ratio?.serverCpuPerReq), x(s.floorRatio?.serverCpuPerReq),
      each((r) => r.non2xx + r.errors + r.timeouts, 0),
      each((r) => r.loadgenCores),
      failed === 0 ? `${runs.reduce((k, c) => k + c.spotChecks, 0)} ok` : `**${failed} failed**`,
    ];
  });
  return [
    '## Load: service beside the echo baseline and the transport floor',
    '',
    `Run: \`${load.command}\` on ${load.date} · ${busy(load)} · ${o.connections ?? 'per-scenario (column *conns*)'} connections · ${how} · service workers: ${o.workers}` +
      (o.url === null ? ' · service, echo and floor spawned on 127.0.0.1, in turn (the first of them rotating from scenario to scenario).' : ` · target ${o.url}.`),
    '',
    'Each cell is *service / echo / floor* where three figures share it; *×echo* and *×floor* are service ÷ echo and service ÷ floor from the same run. ' +
      'The echo is fastify + msgpackr answering the input tensor (`load/echo-server.ts`); the floor is `node:http` copying the body into a reused ordinary buffer and writing the same bytes back (`load/floor-server.ts`): no Node service can pay less to move the same bytes. ' +
      'MiB/s counts input tensor bytes of 2xx responses. Server CPU is user+system time of the server process (all threads) ' +
      'from `/proc/<pid>/stat` per response; *gen cores* is the load generator\'s own CPU time ÷ wall time (it shares the machine). ' +
      'Spot checks decode responses to distinct bodies sent after each run and compare them with a float64 reference (service), with the input (echo) or with the body sent (floor).',
    '',
    tableMd(
      ['scenario', 'request', 'conns', 'req/s', '×echo', '×floor', 'MiB/s', 'p50 ms', 'p99 ms', '×echo p99', 'server CPU ms/req', '×echo CPU', '×floor CPU', 'non-2xx', 'gen cores', 'spot checks'],
      rows,
      [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
    ),
  ].join('\n');
}

function benchSection(bench: BenchResults): string {
  const kernels = bench.kernels.map((k) => [
    k.kernel, k.impl ?? 'js', shape(k.shape), `${k.inDtype} → ${k.outDtype}`, n(k.medianMs, 3), n(k.gbPerS), n(k.memcpyGbPerS), pct(k.fractionOfMemcpy),
    k.checkFailure === null ? 'ok' : `**${k.checkFailure}**`,
  ]);
  const pool = bench.pool.map((p) => [
    p.op, shape(p.shape), String(p.workers), n(p.medianMs, 2), n(p.gbPerS), x(p.speedup), p.checkFailure === null ? 'ok' : `**${p.checkFailure}**`,
  ]);
  return [
    '## Kernels, single thread',
    '',
    `Run: \`${bench.command}\` on ${bench.date} · ${busy(bench)}${bench.short ? ' (short mode: shapes cut down, not a measurement)' : ''} · median of ${bench.samples} samples after warm-up.`,
    'GB/s counts input read + output written (10⁹ bytes/s). The memcpy is `Float32Array.prototype.set` of the input\'s bytes (read + write counted), ' +
      'sampled alternately with the kernel on the same shared memory. *js* is `dist/kernels/{rmsnorm,layernorm}.js`; *wasm* is `dist/kernels/wasm-kernels.js` (`prepareF32` then the row kernel, per call) on the shared `WebAssembly.Memory` holding the same bytes. bfloat16 input is widened to float32 first and that time is included: for *js* by the codec\'s `widenBfloat16` table, for *wasm* by `widenBf16`, then the SIMD kernel in place and `narrowBf16`, as the service does.',
    '',
    tableMd(['kernel', 'impl', 'shape', 'dtype', 'ms/call', 'GB/s', 'memcpy GB/s', 'of memcpy', 'check'], kernels,
      [false, false, false, false, true, true, true, true, false]),
    '',
    '## Pool scaling',
    '',
    'The service\'s own compute path on one 16 MiB request: the real Piscina pool (`createWorkerPool`), the job laid out in a slab by `allocateJob` and run by `runJobs`, which splits it into one task per worker; wall time from submitting to the last result, median of alternating samples.',
    '',
    tableMd(['op', 'shape', 'workers', 'ms', 'GB/s', 'speed-up', 'check'], pool, [false, false, true, true, true, true, false]),
  ].join('\n');
}

export async function writeReport(dir: string): Promise<void> {
  const load = readJson<LoadResults>(join(dir, 'results.json'));
  const bench = readJson<BenchResults>(join(dir, 'bench.json'));
  const mdPath = join(dir, 'RESULTS.md');
  const previous = existsSync(mdPath) ? readFileSync(mdPath, 'utf8') : '';
  const begin = previous.indexOf(NOTES_BEGIN);
  const end = previous.indexOf(NOTES_END);
  const notes = begin >= 0 && end > begin ? previous.slice(begin + NOTES_BEGIN.length, end).trim() : '';

  const m = (load ?? bench)?.machine;
  const parts: string[] = [
    '# Load and benchmark results',
    '',
    'Written by `npm run load` and `npm run bench` (`load/report.ts`); edit only between the notes markers at the end.',
    'These machines are shared: absolute figures drift by ±30 % from run to run, so compare the ratios measured within one run.',
    '',
  ];
  if (m) parts.push(`Machine: ${m.nproc} CPUs (\`nproc\`), ${m.cpuModel}, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}.`, '');
  parts.push(
    'Commands: `npm run load` (about fifteen minutes; `npm run load -- --help` for `--url`, `--duration`, `--connections`, `--only`, …), ' +
      '`npm run bench`, and `node dist-load/report.js` to rewrite this page from `results.json` and `bench.json`. ' +
      'CI runs both in short mode (`test/load/instruments.test.ts`), which proves they work and times nothing.',
    '',
  );
  if (load !== null && load.scenarios.length > 0) {
    writeFileSync(join(dir, 'results.svg'), await renderSvg(chartSpec(load)));
    parts.push('![requests/s and p99 per scenario, service beside echo and floor](results.svg)', '');
  }
  const goals = targets(load, bench);
  if (goals.length > 0) {
    const short = load?.options.short === true || bench?.short === true;
    parts.push('## Targets (issues 5, 11, 23, 24 and 25)', '');
    if (short) parts.push('Some of these figures come from a short (CI) run: they prove the instruments run and judge no target (*n/a*).', '');
    parts.push(tableMd(['target', 'goal', 'measured', 'met'],
      goals.map((g) => [g.what, g.goal, g.measured, g.met === null ? 'n/a' : g.met ? 'yes' : '**no**']), [false, true, true, false]), '');
  }
  if (load !== null) parts.push(loadSection(load), '');
  if (load !== null && (load.mixed ?? []).length > 0) parts.push(mixedSection(load), '');
  if (load !== null && (load.rates ?? []).length > 0) parts.push(rateSection(load), '');
  if (load !== null && (load.grpc ?? []).length > 0) parts.push(grpcSection(load), '');
  if (bench !== null) parts.push(benchSection(bench), '');
  if (bench?.channelKernels !== undefined) parts.push(channelSection(bench), '');
  parts.push('## Notes', '', NOTES_BEGIN, notes, NOTES_END, '');
  writeFileSync(mdPath, parts.join('\n'));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'load'));
  await writeReport(dir);
  process.stdout.write(`wrote ${join(dir, 'RESULTS.md')}\n`);
}
