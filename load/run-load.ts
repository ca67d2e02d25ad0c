// npm run load: every scenario against the service and two baselines, interleaved: the echo (fastify +
// msgpackr, no compute) and the transport floor (node:http moving the same bytes); the gRPC scenarios
// against the service's gRPC port and the gRPC floor (load/grpc-runs.ts); then the small scenarios at
// equal offered rates (load/rates.ts), HTTP then gRPC. Figures as ratios to the baselines; responses
// spot-checked; load/results.json and RESULTS.md.
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { grpcPacedRowsOf, grpcRowsOf, mixedRowsOf, mixedSummary, pacedRowsOf, rowsOf, table, textTable } from './console-table.js';
import { grpcRateTable } from './grpc-report.js';
import { measureGrpcRates, measureGrpcScenarios, type GrpcServers } from './grpc-runs.js';
import { grpcPlan, type GrpcRateScenario } from './grpc-scenarios.js';
import { roundsFor } from './interleave.js';
import { commandLine, machine } from './machine.js';
import { measureInTurn, ratioOf, SATURATED_SLICES, SETTLE_MAX_MS, type Endpoint } from './measure.js';
import { measureMixed } from './mixed.js';
import { fixedAmount, options } from './options.js';
import { killAll, spawnServer, type Spawned } from './processes.js';
import { rateTable } from './rates-report.js';
import { measureRates, rateScenarios } from './rates.js';
import { writeReport } from './report.js';
import type { GrpcRateFigures, LoadResults, MixedFigures, RunFigures, ScenarioFigures } from './results.js';
import { makeSample, scenarios, type Scenario, type Target } from './scenarios.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// distinct bodies sent at once after each run (so a response holding another request's data
// shows), plus the run's own body
const SPOT_CHECKS = 3;
const SPOT_CHECKS_SHORT = 1;
/** the largest tensor whose gRPC equal-rate rows run on servers of their own (below; the HTTP ones are all small) */
const FRESH_ROW_MAX_BYTES = 1024 * 1024;

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

async function main(): Promise<number> {
  const o = options(ROOT);
  const list = scenarios(o.only);
  const selected = rateScenarios(o.only);
  // an info run needs a service of its own at LOG_LEVEL=info: none with --url
  const rates = selected.filter((r) => r.logLevel === 'warn' || o.url === null);
  if (rates.length < selected.length) process.stdout.write('load: with --url, no runs of the service at LOG_LEVEL=info\n');
  // gRPC needs the service spawned here, with a gRPC port: none with --url
  const wanted = grpcPlan(o.only);
  const grpc = o.url === null ? wanted : { scenarios: [], rates: [], v2: [] };
  if (o.url !== null && wanted.scenarios.length > 0) process.stdout.write('load: with --url, no gRPC runs\n');
  // the gRPC figures are judged against the service's /v2 HTTP runs of the same requests in the same run
  for (const id of grpc.v2.filter((v) => !list.some((s) => s.id === v))) {
    list.push(scenarios([id]).find((s) => s.id === id)!);
    process.stdout.write(`load: the gRPC runs are compared with ${id}: added\n`);
  }
  if (list.length === 0 && rates.length === 0) throw new Error(`--only ${o.only.join(',')} matches no scenario`);
  // a rate is judged against each server's saturated rate in the same run
  for (const r of rates) {
    if (list.some((s) => s.id === r.scenario.id)) continue;
    list.push(r.scenario);
    process.stdout.write(`load: ${r.id} is judged against ${r.scenario.id}'s saturated rates in the same run: added\n`);
  }
  // a guard against a hang, not a schedule: every run at its longest, plus start-up
  const perRun = fixedAmount(o) ? 5 : o.warmup + 3 * o.duration + SETTLE_MAX_MS / 1000 + 10;
  const budgetMs = ((list.length + rates.length + grpc.scenarios.length + grpc.rates.length) * 2 * perRun + 120) * 1000;
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
    let info: Endpoint | null = null;
    let grpcServers: GrpcServers | null = null;
    /** the servers of the equal-rate rows: the same as the rest, unless spawned for them (below) */
    let rateServers: { service: Endpoint; echo: Endpoint | null; floor: Endpoint | null } | null = null;
    let rateGrpcServers: GrpcServers | null = null;
    if (o.url !== null) {
      service = { target: 'service', base: o.url, pid: o.serverPid };
      echo = o.echoUrl === null ? null : { target: 'echo', base: o.echoUrl, pid: null };
      floor = o.floorUrl === null ? null : { target: 'floor', base: o.floorUrl, pid: null };
    } else {
      const env: Record<string, string> = { LOG_LEVEL: 'warn' };
      if (o.workers !== null) env.WORKERS = o.workers;
      const runtime = { node: o.node, startFlags: o.startFlags };
      const script = join(snapshotService(o.serviceDist ?? join(ROOT, 'dist')), 'dist', 'server.js');
      const svc = await spawnServer('service', script, env, runtime, 'pipe', grpc.scenarios.length > 0 ? 'http+grpc' : 'http');
      spawned.push(svc);
      if (rates.length + grpc.rates.length > 0) {
        // the equal-rate rows get servers of their own, idle until then: every server of a row has
        // served the same requests before it. After the saturated runs (16 MiB bodies, gRPC, mixed
        // load) the service costs more per small request than a fresh one (load/RESULTS.md), and the
        // info service beside it would be fresh
        const of = (x: Spawned, target: Target): Endpoint => ({ target, base: x.base, pid: x.pid });
        const own = [
          await spawnServer('service-rates', script, env, runtime, 'pipe', grpc.rates.length > 0 ? 'http+grpc' : 'http'),
          await spawnServer('echo-rates', join(ROOT, 'dist-load', 'echo-server.js'), {}, runtime),
          await spawnServer('floor-rates', join(ROOT, 'dist-load', 'floor-server.js'), {}, runtime),
        ];
        spawned.push(...own);
        rateServers = { service: of(own[0], 'service'), echo: of(own[1], 'echo'), floor: of(own[2], 'floor') };
        if (grpc.rates.length > 0) {
          const gfl = await spawnServer('grpc-floor-rates', join(ROOT, 'dist-load', 'grpc-floor-server.js'), {}, runtime, 'ignore', 'grpc');
          spawned.push(gfl);
          rateGrpcServers = { service: { target: 'service', address: own[0].grpc!, pid: own[0].pid, base: own[0].base }, floor: { target: 'floor', address: gfl.grpc!, pid: gfl.pid, base: null } };
        }
      }
      if (rates.some((r) => r.logLevel === 'info')) {
        // the service at its default log level, as npm start and the image run it; its log to /dev/null
        const inf = await spawnServer('service-info', script, { ...env, LOG_LEVEL: 'info' }, runtime, 'ignore');
        spawned.push(inf);
        info = { target: 'service', base: inf.base, pid: inf.pid };
      }
      const ech = await spawnServer('echo', join(ROOT, 'dist-load', 'echo-server.js'), {}, runtime);
      spawned.push(ech);
      const flo = await spawnServer('floor', join(ROOT, 'dist-load', 'floor-server.js'), {}, runtime);
      spawned.push(flo);
      if (grpc.scenarios.length > 0) {
        // its stdout is only the line saying it listens
        const gfl = await spawnServer('grpc-floor', join(ROOT, 'dist-load', 'grpc-floor-server.js'), {}, runtime, 'ignore', 'grpc');
        spawned.push(gfl);
        grpcServers = { service: { target: 'service', address: svc.grpc!, pid: svc.pid, base: svc.base }, floor: { target: 'floor', address: gfl.grpc!, pid: gfl.pid, base: null } };
      }
      service = { target: 'service', base: svc.base, pid: svc.pid };
      echo = { target: 'echo', base: ech.base, pid: ech.pid };
      floor = { target: 'floor', base: flo.base, pid: flo.pid };
    }
    const how = fixedAmount(o) ? 'short: a fixed number of requests per run' : `${o.duration} s per run after ${o.warmup} s warm-up`;
    const servers = o.url === null ? `; servers on node ${o.node}${o.startFlags ? '' : ' without the start-up flags'}` : '';
    const grpcAt = grpcServers === null ? '' : `, gRPC ${grpcServers.service.address}, gRPC floor ${grpcServers.floor?.address}`;
    process.stdout.write(`load: ${list.length} scenarios, ${grpc.scenarios.length} gRPC, and ${rates.length + grpc.rates.length} at equal rates, ${o.connections ?? 'per-scenario'} connections, ${how}${servers}; service ${service.base}${echo ? `, echo ${echo.base}` : ''}${floor ? `, floor ${floor.base}` : ''}${grpcAt}\n`);

    const figures: ScenarioFigures[] = [];
    const mixed: MixedFigures[] = [];
    const checksPerRun = o.short ? SPOT_CHECKS_SHORT : SPOT_CHECKS;
    const samplesOf = (s: Scenario) => Array.from({ length: 1 + checksPerRun }, (_, k) => makeSample(s, k));
    const print = (rows: string[][]) => process.stdout.write(`${table(rows).split('\n').slice(1).join('\n')}\n`);
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      const samples = samplesOf(s);
      if (s.beside !== null) {
        // the service only: what it is measured against is itself, alone
        const m = await measureMixed(service, s, samples, o);
        mixed.push(m);
        print(mixedRowsOf(m));
        process.stdout.write(mixedSummary(m));
        continue;
      }
      // rotate which side goes first, so a slow drift of the machine favours none
      const sides = [service, echo, floor].filter((e): e is Endpoint => e !== null);
      const order = sides.map((_, k) => sides[(i + k) % sides.length]);
      const got = await measureInTurn(order, s, samples, o);
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
      print(rowsOf(f));
    }

    const grpcFigures = grpcServers === null ? [] : await measureGrpcScenarios(grpc.scenarios, grpcServers, figures, checksPerRun, o, (f) => print(grpcRowsOf(f)));

    const paced = await measureRates(rates, { ...(rateServers ?? { service, echo, floor }), info }, figures, samplesOf, o, (f) => print(pacedRowsOf(f)));
    // rows of small requests on the equal-rate servers; rows of large ones on the servers that have just
    // served them saturated, as a fresh process pays for first touching the memory 16 MiB messages take
    // (a fresh gRPC floor's call cost 92 ms, against 44 after the saturated runs)
    const onOwn = (r: GrpcRateScenario) => rateGrpcServers !== null && rateServers !== null && r.scenario.tensorBytes <= FRESH_ROW_MAX_BYTES;
    const grpcRates: GrpcRateFigures[] = [];
    for (const r of grpcServers === null ? [] : grpc.rates) {
      const [servers, http] = onOwn(r) ? [rateGrpcServers!, rateServers!.service] : [grpcServers!, service];
      grpcRates.push(...await measureGrpcRates([r], servers, http, samplesOf, grpcFigures, checksPerRun, o, (f) => print(grpcPacedRowsOf(f))));
    }

    process.stdout.write(`\n${table([...figures.flatMap(rowsOf), ...grpcFigures.flatMap(grpcRowsOf), ...mixed.flatMap(mixedRowsOf)])}\n`);
    for (const m of mixed) process.stdout.write(mixedSummary(m));
    const results: LoadResults = {
      kind: 'load', date: new Date().toISOString(), command: commandLine('dist-load/run-load.js'), machine: machine(),
      loadAverage: { start: loadAtStart, end: loadavg()[0] },
      options: {
        short: o.short, duration: fixedAmount(o) ? null : o.duration, warmup: o.warmup, connections: o.connections, rounds: fixedAmount(o) ? 1 : roundsFor(o),
        saturatedSlices: fixedAmount(o) ? undefined : SATURATED_SLICES,
        url: o.url, echoUrl: o.echoUrl, floorUrl: o.floorUrl, workers: o.workers ?? (o.url === null ? `service default (${availableParallelism()} CPUs here)` : 'unknown'),
        node: o.url === null ? o.node : undefined, startFlags: o.url === null ? o.startFlags : undefined,
        serviceDist: o.serviceDist ?? undefined,
      },
      scenarios: figures,
      mixed,
      rates: paced.rates,
      infoSaturated: paced.infoSaturated,
      grpc: grpcFigures,
      grpcRates,
    };
    if (paced.rates.length > 0) process.stdout.write(`\nCPU per request at equal offered rates (cells service / echo / floor; ! marks a figure that voids the row)\n${textTable(rateTable(results), 1)}\n`);
    if (grpcRates.length > 0) process.stdout.write(`\ngRPC CPU per request at equal offered rates (cells service / gRPC floor; /v2: the service's at the same rate over /v2 HTTP)\n${textTable(grpcRateTable(results), 1)}\n`);
    mkdirSync(o.out, { recursive: true });
    writeFileSync(join(o.out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    await writeReport(o.out);
    process.stdout.write(`wrote ${join(o.out, 'results.json')}, RESULTS.md, results.svg\n`);

    const checked = [
      ...figures.flatMap((f) => ([['service', f.service], ['echo', f.echo], ['floor', f.floor]] as const).map(([target, r]) => ({ id: f.id, target, r }))),
      ...mixed.flatMap((m) => ([['alone', m.alone], ['mixed', m.mixed], ['background', m.background]] as const).map(([target, r]) => ({ id: m.id, target, r }))),
      ...paced.rates.flatMap((f) => ([['service', f.service], ['echo', f.echo], ['floor', f.floor]] as const).map(([target, r]) => ({ id: f.id, target, r }))),
      ...paced.infoSaturated.map((f) => ({ id: `${f.scenario} saturated`, target: 'service at info', r: f.service })),
      ...[...grpcFigures, ...grpcRates].flatMap((f) => ([['service (gRPC)', f.service], ['gRPC floor', f.floor]] as const).map(([target, r]) => ({ id: f.id, target, r }))),
    ];
    const checks = checked.reduce((k, c) => k + (c.r?.spotChecks ?? 0), 0);
    const failed = checked.reduce((k, c) => k + (c.r?.spotCheckFailures ?? 0), 0);
    // the background may get no answer in a window while the service is that slow: its spot check still runs
    const empty = [
      ...figures.filter((f) => f.service.ok === 0 || f.echo?.ok === 0 || f.floor?.ok === 0).map((f) => f.id),
      ...mixed.filter((m) => m.alone.ok === 0 || m.mixed.ok === 0).map((m) => m.id),
      ...paced.rates.filter((f) => f.service.ok === 0 || f.echo?.ok === 0 || f.floor?.ok === 0).map((f) => f.id),
      ...paced.infoSaturated.filter((f) => f.service.ok === 0).map((f) => `${f.scenario} saturated at info`),
      ...[...grpcFigures, ...grpcRates].filter((f) => f.service.ok === 0 || f.floor?.ok === 0).map((f) => f.id),
    ];
    process.stdout.write(`spot checks: ${checks - failed} passed, ${failed} failed\n`);
    for (const c of checked) if (c.r?.firstFailure) process.stdout.write(`  ${c.id} ${c.target}: ${c.r.firstFailure}\n`);
    if (empty.length > 0) process.stdout.write(`no successful responses: ${empty.join(', ')}\n`);
    return failed === 0 && empty.length === 0 ? 0 : 1;
  } finally {
    await Promise.all(spawned.map((p) => p.stop()));
    removeSnapshot();
  }
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
