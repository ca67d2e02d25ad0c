// the console table a load run prints as it goes and at the end.
import type { LoopDelay } from './event-loop.js';
import type { GrpcFigures, GrpcRateFigures, MixedFigures, RateFigures, Ratio, RunFigures, ScenarioFigures } from './results.js';

const fmt = (v: number | null, digits = 2) => (v === null || !Number.isFinite(v) ? '–' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(digits));
const ms = (seconds: number | null) => (seconds === null ? null : seconds * 1000);
const times = (v: number | null) => (v === null || !Number.isFinite(v) ? '–' : `${v.toFixed(2)}×`);

const COLUMNS = ['scenario', 'target', 'req/s', 'MiB/s', 'p50 ms', 'p99 ms', 'non-2xx', 'srv CPU ms/req', 'gen CPU ms/req', 'gen cores', 'loop p50/p99/max ms', 'spot checks'];

const checks = (r: { spotChecks: number; spotCheckFailures: number }) => (r.spotCheckFailures === 0 ? `${r.spotChecks} ok` : `${r.spotCheckFailures}/${r.spotChecks} FAILED`);
const loop = (l: LoopDelay | null | undefined, digits = 0) => (l ? `${fmt(l.p50Ms, digits)}/${fmt(l.p99Ms, digits)}/${fmt(l.maxMs, digits)}` : '–');

/** one run's row under COLUMNS */
export function line(id: string, target: string, r: RunFigures): string[] {
  return [
    id, target, fmt(r.rps, 1), fmt(r.mibPerS, 1), fmt(r.p50Ms), fmt(r.p99Ms), String(r.non2xx + r.errors + r.timeouts),
    fmt(ms(r.serverCpuPerReq), 3), fmt(ms(r.loadgenCpuPerReq), 3), fmt(r.loadgenCores),
    loop(r.eventLoop), checks(r),
  ];
}

export function rowsOf(f: ScenarioFigures): string[][] {
  const ratio = (target: string, r: Ratio) => [f.id, target, times(r.rps), times(r.rps), times(r.p50), times(r.p99), '', times(r.serverCpuPerReq), '', '', '', ''];
  const rows = [line(f.id, 'service', f.service)];
  if (f.echo !== null) rows.push(line(f.id, 'echo', f.echo));
  if (f.floor !== null) rows.push(line(f.id, 'floor', f.floor));
  if (f.ratio !== null) rows.push(ratio('svc/echo', f.ratio));
  if (f.floorRatio !== null) rows.push(ratio('svc/floor', f.floorRatio));
  return rows;
}

/** a rate scenario's runs (req/s is what was achieved) and the service's CPU per request ÷ the others' */
export function pacedRowsOf(f: RateFigures): string[][] {
  const id = f.id;
  const ratio = (target: string, v: number | null) => [id, target, '', '', '', '', '', times(v), '', '', '', ''];
  const rows = [line(id, f.logLevel === 'info' ? 'service (info)' : 'service', f.service)];
  if (f.atWarn) rows.push(line(id, 'service (warn)', f.atWarn));
  if (f.echo !== null) rows.push(line(id, 'echo', f.echo));
  if (f.floor !== null) rows.push(line(id, 'floor', f.floor));
  if (f.echo !== null) rows.push(ratio('svc/echo', f.echoCpuRatio));
  if (f.floor !== null) rows.push(ratio('svc/floor', f.floorCpuRatio));
  if (f.logLevel === 'info') rows.push(ratio('info/warn', f.warnCpuRatio));
  return rows;
}

/** a gRPC scenario's runs, and the service's figures ÷ the gRPC floor's and ÷ its own over /v2 HTTP */
export function grpcRowsOf(f: GrpcFigures): string[][] {
  const ratio = (target: string, r: Ratio) => [f.id, target, times(r.rps), times(r.rps), times(r.p50), times(r.p99), '', times(r.serverCpuPerReq), '', '', '', ''];
  const rows = [line(f.id, 'service', f.service)];
  if (f.floor !== null) rows.push(line(f.id, 'grpc floor', f.floor));
  if (f.floorRatio !== null) rows.push(ratio('svc/floor', f.floorRatio));
  if (f.v2Ratio !== null) rows.push(ratio('svc/v2', f.v2Ratio));
  return rows;
}

/** a gRPC rate scenario's runs (req/s is what was achieved), CPU per request ÷ the floor's and ÷ the service's on /v2 */
export function grpcPacedRowsOf(f: GrpcRateFigures): string[][] {
  const ratio = (target: string, v: number | null) => [f.id, target, '', '', '', '', '', times(v), '', '', '', ''];
  const rows = [line(f.id, 'service', f.service)];
  if (f.floor !== null) rows.push(line(f.id, 'grpc floor', f.floor), ratio('svc/floor', f.floorCpuRatio));
  rows.push(ratio('svc/v2', f.v2CpuRatio));
  return rows;
}

/** the small requests alone and mixed, their ratio, and the background's answers over the mixed window */
export function mixedRowsOf(m: MixedFigures): string[][] {
  const b = m.background;
  return [
    line(m.id, 'alone', m.alone),
    line(m.id, 'mixed', m.mixed),
    [m.id, 'mixed/alone', times(m.mixed.rps / m.alone.rps), '', times(m.p50Ratio), times(m.p99Ratio), '', '', '', '', '', ''],
    [m.id, `beside (${b.connections} conns)`, fmt(b.ok / m.mixed.seconds, 1), '', '', '', String(b.non2xx + b.errors + b.timeouts), '', '', '', '', checks(b)],
  ];
}

/** what issue 23 asks of the mixed window, in one line */
export function mixedSummary(m: MixedFigures): string {
  const b = m.background;
  const l = m.mixed.eventLoop;
  return `${m.id}: small p50/p99 ${fmt(m.mixed.p50Ms)}/${fmt(m.mixed.p99Ms)} ms and ${fmt(m.mixed.rps, 1)} req/s beside ${b.label} on ${b.connections} connections ` +
    `(alone ${fmt(m.alone.p50Ms)}/${fmt(m.alone.p99Ms)} ms, ${fmt(m.alone.rps, 1)} req/s): p99 ${times(m.p99Ratio)} alone; ` +
    `background ${b.ok} answers, ${b.non2xx} non-2xx, ${b.errors} errors in the window; ` +
    `service event loop p50/p99/max ${loop(l, 1)} ms (alone ${loop(m.alone.eventLoop, 1)}), load generator's ${loop(m.loadgenLoop, 1)} ms\n`;
}

export function table(rows: string[][]): string {
  return textTable([COLUMNS, ...rows]);
}

/** rows under their head, the first `left` columns left-aligned, the rest right-aligned */
export function textTable(all: string[][], left = 2): string {
  const widths = all[0].map((_, c) => Math.max(...all.map((r) => r[c].length)));
  return all.map((r) => r.map((cell, c) => (c < left ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n');
}
