// node dist-load/compare-runs.js A1,A2,… B1,B2,…: alternating load runs (A B A B …, each written with
// `npm run load -- --out <dir>`) compared pair by pair: per scenario, B's server CPU per request ÷ A's
// in each pair, and the median over the pairs; beside it each side's service ÷ floor ratio, which
// the run measured itself. Nothing is timed here: it reads results.json files.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResults } from './results.js';

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

const rows: string[][] = [];
for (const scenario of a[0].scenarios) {
  const pairs = a.map((run, i) => [run.scenarios.find((s) => s.id === scenario.id), b[i].scenarios.find((s) => s.id === scenario.id)] as const);
  const cpu = pairs.map(([sa, sb]) => [sa?.service.serverCpuPerReq ?? null, sb?.service.serverCpuPerReq ?? null] as const);
  const ratios = cpu.filter(([ca, cb]) => ca !== null && cb !== null && ca > 0).map(([ca, cb]) => cb! / ca!);
  rows.push([
    scenario.id, 'B÷A CPU/req',
    ratios.map((r) => r.toFixed(2)).join(' '), ratios.length === 0 ? '–' : x(median(ratios)),
    cpu.map(([ca]) => ms(ca)).join(' '), cpu.map(([, cb]) => ms(cb)).join(' '),
    pairs.map(([sa]) => x(sa?.floorRatio?.serverCpuPerReq)).join(' '), pairs.map(([, sb]) => x(sb?.floorRatio?.serverCpuPerReq)).join(' '),
  ]);
}
const columns = ['scenario', 'figure', 'per pair', 'median', 'A ms/req', 'B ms/req', 'A svc÷floor', 'B svc÷floor'];
const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
const line = (r: string[]) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
process.stdout.write(`A: ${aDirs.join(', ')}\nB: ${bDirs.join(', ')}\n${[columns, ...rows].map(line).join('\n')}\n`);
