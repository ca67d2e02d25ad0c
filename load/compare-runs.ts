// node dist-load/compare-runs.js A1,A2,… B1,B2,…: alternating load runs (A B A B …, each written with
// `npm run load -- --out <dir>`) compared pair by pair: per scenario and per equal-rate run, B's server
// CPU per request ÷ A's in each pair, and the median over the pairs; beside it each side's service ÷
// floor ratio (÷ echo at an equal rate; gRPC: ÷ the gRPC floor, at an equal rate ÷ the service on /v2),
// which the run measured itself. Nothing is timed here: it reads results.json files.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResults, RunFigures } from './results.js';

function read(dir: string): LoadResults {
  return JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as LoadResults;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const [aDirs, bDirs] = process.argv.slice(2).map((list) => list.split(',').filter((d) => d.length > 0));
if (aDirs === undefined || bDirs === undefined || aDirs.length === 0 || aDirs.length !== bDirs.length) {
  process.stderr.write('usage: node dist-load/compare-runs.js A1,A2,… B1,B2,… (as many B runs as A runs, paired in order)\n');
  process.exit(1);
}
const a = aDirs.map(read);
const b = bDirs.map(read);
const ms = (v: number | null | undefined) => (v === null || v === undefined ? '–' : (v * 1000).toFixed(3));
const x = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(2)}×`);

interface Row { id: string; service: RunFigures; base: number | null | undefined }

const rows: string[][] = [];
function compare(ids: string[], rowsOf: (run: LoadResults) => Row[]): void {
  for (const id of ids) {
    const pairs = a.map((run, i) => [rowsOf(run).find((r) => r.id === id), rowsOf(b[i]).find((r) => r.id === id)] as const);
    const cpu = pairs.map(([sa, sb]) => [sa?.service.serverCpuPerReq ?? null, sb?.service.serverCpuPerReq ?? null] as const);
    const ratios = cpu.filter(([ca, cb]) => ca !== null && cb !== null && ca > 0).map(([ca, cb]) => cb! / ca!);
    rows.push([
      id, 'B÷A CPU/req',
      ratios.map((r) => r.toFixed(2)).join(' '), ratios.length === 0 ? '–' : x(median(ratios)),
      cpu.map(([ca]) => ms(ca)).join(' '), cpu.map(([, cb]) => ms(cb)).join(' '),
      pairs.map(([sa]) => x(sa?.base)).join(' '), pairs.map(([, sb]) => x(sb?.base)).join(' '),
    ]);
  }
}
compare(a[0].scenarios.map((s) => s.id), (run) => run.scenarios.map((s) => ({ id: s.id, service: s.service, base: s.floorRatio?.serverCpuPerReq })));
// at an equal rate the service is judged against the echo (an info run: against itself at warn)
compare((a[0].rates ?? []).map((f) => f.id), (run) => (run.rates ?? []).map((f) => ({ id: f.id, service: f.service, base: f.logLevel === 'info' ? f.warnCpuRatio : f.echoCpuRatio })));
compare((a[0].grpc ?? []).map((f) => f.id), (run) => (run.grpc ?? []).map((f) => ({ id: f.id, service: f.service, base: f.floorRatio?.serverCpuPerReq })));
compare((a[0].grpcRates ?? []).map((f) => f.id), (run) => (run.grpcRates ?? []).map((f) => ({ id: f.id, service: f.service, base: f.v2CpuRatio })));
const columns = ['scenario', 'figure', 'per pair', 'median', 'A ms/req', 'B ms/req', 'A svc÷base', 'B svc÷base'];
const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
const line = (r: string[]) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
process.stdout.write(`A: ${aDirs.join(', ')}\nB: ${bDirs.join(', ')}\nbase: the floor, saturated; at an equal rate (@) the echo; an info run the service at warn; gRPC: the gRPC floor, at an equal rate the service on /v2\n${[columns, ...rows].map(line).join('\n')}\n`);
