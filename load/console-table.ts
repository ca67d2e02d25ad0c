// the console table a load run prints as it goes and at the end.
import type { Ratio, RunFigures, ScenarioFigures } from './results.js';

const fmt = (v: number | null, digits = 2) => (v === null || !Number.isFinite(v) ? '–' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(digits));
const ms = (seconds: number | null) => (seconds === null ? null : seconds * 1000);
const times = (v: number | null) => (v === null || !Number.isFinite(v) ? '–' : `${v.toFixed(2)}×`);

const COLUMNS = ['scenario', 'target', 'req/s', 'MiB/s', 'p50 ms', 'p99 ms', 'non-2xx', 'srv CPU ms/req', 'gen CPU ms/req', 'gen cores', 'loop p50/p99/max ms', 'spot checks'];

export function rowsOf(f: ScenarioFigures): string[][] {
  const line = (target: string, r: RunFigures) => [
    f.id, target, fmt(r.rps, 1), fmt(r.mibPerS, 1), fmt(r.p50Ms), fmt(r.p99Ms), String(r.non2xx + r.errors + r.timeouts),
    fmt(ms(r.serverCpuPerReq), 3), fmt(ms(r.loadgenCpuPerReq), 3), fmt(r.loadgenCores),
    r.eventLoop ? `${fmt(r.eventLoop.p50Ms, 0)}/${fmt(r.eventLoop.p99Ms, 0)}/${fmt(r.eventLoop.maxMs, 0)}` : '–',
    r.spotCheckFailures === 0 ? `${r.spotChecks} ok` : `${r.spotCheckFailures}/${r.spotChecks} FAILED`,
  ];
  const ratio = (target: string, r: Ratio) => [f.id, target, times(r.rps), times(r.rps), times(r.p50), times(r.p99), '', times(r.serverCpuPerReq), '', '', '', ''];
  const rows = [line('service', f.service)];
  if (f.echo !== null) rows.push(line('echo', f.echo));
  if (f.floor !== null) rows.push(line('floor', f.floor));
  if (f.ratio !== null) rows.push(ratio('svc/echo', f.ratio));
  if (f.floorRatio !== null) rows.push(ratio('svc/floor', f.floorRatio));
  return rows;
}

export function table(rows: string[][]): string {
  const all = [COLUMNS, ...rows];
  const widths = COLUMNS.map((_, c) => Math.max(...all.map((r) => r[c].length)));
  return all.map((r) => r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n');
}
