// the gRPC part of RESULTS.md and of the console (figures from grpc-runs.ts), and its targets (issue 25).
import { roundSpread } from './interleave.js';
import { n, tableMd, x, xr } from './markdown.js';
import type { Target } from './report.js';
import { ACHIEVED_TOLERANCE, type GrpcFigures, type GrpcRateFigures, type GrpcSide, type LoadResults, type PacedFigures, type RunFigures } from './results.js';

// server CPU per request at an equal offered rate, ÷ the service's over /v2 HTTP or ÷ the gRPC floor's
const GOALS: ReadonlyArray<{ scenario: string; against: 'v2' | 'floor'; max: number }> = [
  { scenario: 'rmsnorm/small-grpc-stream', against: 'v2', max: 0.75 },
  { scenario: 'rmsnorm/small-grpc-unary', against: 'v2', max: 1.5 },
  { scenario: 'rmsnorm/small-grpc-unary', against: 'floor', max: 1.3 },
  { scenario: 'rmsnorm/large-grpc-unary', against: 'v2', max: 1.2 },
];

const sides = (list: string[]) => list.join(', ');
const missedRate = (r: PacedFigures, rate: number) => Math.abs(r.achievedRate / rate - 1) > ACHIEVED_TOLERANCE;

/** met, not met, or why the figure judges nothing: a short run, or a rate not below the saturated rate or not achieved by a server compared */
function verdict(f: GrpcRateFigures, against: 'v2' | 'floor', ratio: number | null, load: LoadResults): { met: boolean | null; why: string } {
  if (load.options.short) return { met: null, why: 'n/a (short run)' };
  const compared: GrpcSide[] = against === 'floor' ? ['service', 'floor'] : ['service'];
  const notBelow = (f.notBelow ?? []).filter((t) => compared.includes(t));
  if (notBelow.length > 0) return { met: null, why: `n/a: not below the saturated rate of gRPC ${sides(notBelow)}` };
  const offRate = (f.offRate ?? []).filter((t) => compared.includes(t));
  if (offRate.length > 0) return { met: null, why: `n/a: rate not achieved by gRPC ${sides(offRate)}` };
  if (against === 'v2') {
    const v2 = load.scenarios.find((s) => s.id === f.v2);
    if (v2 === undefined || !f.v2Run) return { met: null, why: `n/a: ${f.v2} not run` };
    if (v2.service.rps <= f.rate) return { met: null, why: `n/a: not below the saturated rate of the service on /v2` };
    if (missedRate(f.v2Run, f.rate)) return { met: null, why: `n/a: rate not achieved by the service on /v2` };
  }
  if (ratio === null) return { met: null, why: 'n/a' };
  return ratio <= goalOf(f, against)!.max ? { met: true, why: 'met' } : { met: false, why: 'not met' };
}

const goalOf = (f: GrpcRateFigures, against: 'v2' | 'floor') => GOALS.find((g) => g.scenario === f.scenario && g.against === against);

// the ratios with their rounds' quartiles (load/interleave.ts)
const floorRatio = (f: GrpcRateFigures) => xr(f.floorCpuRatio, roundSpread(f.service.slices, f.floor?.slices));
const v2Ratio = (f: GrpcRateFigures) => xr(f.v2CpuRatio, roundSpread(f.service.slices, f.v2Run?.slices));

export function grpcTargets(load: LoadResults): Target[] {
  return (load.grpcRates ?? []).flatMap((f) => GOALS.filter((g) => g.scenario === f.scenario).map((g) => {
    const ratio = g.against === 'v2' ? f.v2CpuRatio : f.floorCpuRatio;
    const shown = g.against === 'v2' ? v2Ratio(f) : floorRatio(f);
    const v = verdict(f, g.against, ratio, load);
    return {
      what: `${f.id} server CPU/request ÷ ${g.against === 'v2' ? `/v2 HTTP (${f.v2})` : 'gRPC floor'}, at ${n(f.rate, 0)} req/s`,
      goal: `≤ ${g.max.toFixed(2)}×`, measured: v.met === null && v.why !== 'n/a (short run)' ? `${shown} (${v.why})` : shown, met: v.met,
    };
  }));
}

const ms = (r: RunFigures | null | undefined) => (r === null || r === undefined || r.serverCpuPerReq === null ? null : r.serverCpuPerReq * 1000);
const clientMs = (r: RunFigures | null | undefined) => (r === null || r === undefined ? null : r.loadgenCpuPerReq * 1000);
const share = (v: number | undefined) => (v === undefined ? '–' : `${Math.round(100 * v)} %`);
function each<R extends RunFigures>(f: { service: R; floor: R | null }, cell: (r: R | null, side: GrpcSide) => string): string {
  return `${cell(f.service, 'service')} / ${cell(f.floor, 'floor')}`;
}
const checks = (f: { service: RunFigures; floor: RunFigures | null }, mark: (s: string) => string) => {
  const runs = [f.service, f.floor].filter((r): r is RunFigures => r !== null);
  const failed = runs.reduce((k, r) => k + r.spotCheckFailures, 0);
  return failed === 0 ? `${runs.reduce((k, r) => k + r.spotChecks, 0)} ok` : mark(`${failed} failed`);
};

/** the cells of one rate row, each service / floor */
function rateCells(f: GrpcRateFigures, load: LoadResults, mark: (s: string) => string) {
  const v2 = f.v2Run ?? null;
  return {
    achieved: each(f, (r, side) => (r === null ? '–' : (f.offRate ?? []).includes(side) ? mark(n(r.achievedRate, 0)) : n(r.achievedRate, 0))),
    busy: each(f, (r) => share(r?.busyShare)),
    saturated: each(f, (_, side) => ((f.notBelow ?? []).includes(side) ? mark(n(f.saturated[side], 0)) : n(f.saturated[side], 0))),
    cpu: each(f, (r) => n(ms(r), 3)),
    v2Cpu: n(ms(v2), 3),
    client: each(f, (r) => n(clientMs(r), 3)),
    checks: checks(f, mark),
  };
}

export function grpcSection(load: LoadResults): string {
  const bold = (s: string) => `**${s}**`;
  const rows = (load.grpc ?? []).map((f: GrpcFigures) => [
    f.id, f.label, String(f.connections),
    each(f, (r) => n(r?.rps, 1)), x(f.floorRatio?.rps), x(f.v2Ratio?.rps), n(f.service.mibPerS, 1),
    each(f, (r) => n(r?.p50Ms)), each(f, (r) => n(r?.p99Ms)), x(f.floorRatio?.p99), x(f.v2Ratio?.p99),
    each(f, (r) => n(ms(r), 3)), x(f.floorRatio?.serverCpuPerReq), x(f.v2Ratio?.serverCpuPerReq),
    each(f, (r) => n(clientMs(r), 3)), each(f, (r) => (r === null ? '–' : String(r.errors))), checks(f, bold),
  ]);
  const rateRows = (load.grpcRates ?? []).map((f) => {
    const c = rateCells(f, load, bold);
    return [f.id, f.label, String(f.connections), n(f.rate, 0), c.achieved, c.busy, c.saturated, c.cpu, c.v2Cpu, floorRatio(f), v2Ratio(f), c.client, c.checks];
  });
  const parts = [
    '## gRPC (issue 25)',
    '',
    'Same run. The service\'s `GRPCInferenceService` on its gRPC port (the same process as the HTTP rows), rmsnorm: *unary* is one `ModelInfer` call at a time per connection, *stream* one `ModelStreamInfer` stream per connection with one request in flight on it. ' +
      'Cells are *service / gRPC floor*: the floor is a bare `@grpc/grpc-js` server answering each message with its own bytes (`load/grpc-floor-server.ts`), what no grpc-js service can go below. ' +
      '*×v2* is the service over gRPC ÷ the service over `/v2` HTTP binary with the same tensor and connections, in the same run (rows `rmsnorm/<size>-v2` above). ' +
      'The load client is `load/grpc-load.ts` (`node:http2`, one pre-encoded message, nothing decoded but frame lengths and `grpc-status`); *client CPU* is its own CPU time per answer (autocannon\'s for HTTP is the *gen* figure above). ' +
      'Spot checks send distinct requests after each run with `@grpc/grpc-js` and decode the answers with protobufjs: against the float64 reference (service), byte for byte (floor).',
    '',
    tableMd(
      ['scenario', 'request', 'conns', 'req/s', '×floor', '×v2', 'MiB/s', 'p50 ms', 'p99 ms', '×floor p99', '×v2 p99', 'server CPU ms/req', '×floor CPU', '×v2 CPU', 'client CPU ms/req', 'errors', 'spot checks'],
      rows,
      [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
    ),
  ];
  if (rateRows.length > 0) {
    parts.push(
      '',
      '### gRPC at equal offered rates',
      '',
      'After the `/v2` equal-rate runs above: rows of small requests on their service (its gRPC port) and a gRPC floor of its own, idle until then; the 16 MiB row on the service and gRPC floor of the saturated runs above, which have served such calls (a fresh process pays for first touching the memory they take). Each row sends its requests to the service over gRPC, the gRPC floor and the service over `/v2` HTTP (the same tensor) at the same offered rate, warm-up and window alike, over connections kept from the warm-up to the last slice, ' +
        'measured side by side in slices of one second, the three in turn (`load/interleave.ts`), so a drift of the machine falls on all alike. ' +
        'The gRPC client spreads the requests evenly, as the HTTP rows\' client does: every millisecond it sends those due by then, round-robin over the connections, so *answered in* reads near 100 %. ' +
        '*/v2 CPU ms/req* is the service\'s over `/v2` HTTP in those slices, *×v2* the service\'s gRPC figure ÷ that one (in brackets, as above, the quartiles of that ratio round by round); its saturated rate is that of `rmsnorm/<size>-v2` above. ' +
        `*Saturated* is each server's closed-loop req/s above, in bold when not above the rate; *achieved* in bold when more than ${Math.round(100 * ACHIEVED_TOLERANCE)} % off it. Either voids the targets that compare that server.`,
      '',
      tableMd(
        ['scenario', 'request', 'conns', 'offered req/s', 'achieved req/s', 'answered in', 'saturated req/s', 'CPU ms/req', '/v2 CPU ms/req', '×floor CPU', '×v2 CPU', 'client CPU ms/req', 'spot checks'],
        rateRows,
        [false, false, true, true, true, true, true, true, true, true, true, true, true],
      ),
    );
  }
  return parts.join('\n');
}

/** the console's table of the equal-rate gRPC runs */
export function grpcRateTable(load: LoadResults): string[][] {
  const head = ['gRPC rate scenario', 'offered', 'achieved s/f', 'answered in', 'saturated req/s', 'CPU ms/req', '/v2 CPU', '×floor', '×v2', 'client CPU'];
  return [head, ...(load.grpcRates ?? []).map((f) => {
    const c = rateCells(f, load, (s) => `${s}!`);
    return [f.id, n(f.rate, 0), c.achieved, c.busy, c.saturated, c.cpu, c.v2Cpu, floorRatio(f), v2Ratio(f), c.client];
  })];
}
