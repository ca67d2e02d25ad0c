// npm run ab:path -- --a <old dist> --b dist [--case pipeline] [--pairs 30]: a before/after of one small
// request's path (load/path-cases.ts) for two builds loaded side by side in one process, their calls
// alternated in short slices (A B, then B A), CPU time per call from process.cpuUsage. Without a
// socket and with both builds in one process and one machine state, it resolves changes of a few
// per cent that npm run ab's socket runs (±10 % a pair here) cannot; what a change buys over the
// socket still needs npm run ab or the load suite. Prints each side's µs a call, B ÷ A over all
// slices, and the pairs' median and quartiles.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CALL_WEIGHT, cpuPerCall, PATH_CASES, pathBuild, type PathCase } from './path-cases.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' }, b: { type: 'string' }, case: { type: 'string', default: 'pipeline' },
    pairs: { type: 'string', default: '30' }, calls: { type: 'string', default: '20000' },
  },
});
if (values.a === undefined || values.b === undefined) throw new Error('--a and --b: a dist folder each');
const name = values.case as PathCase;
if (!PATH_CASES.includes(name)) throw new Error(`--case ${values.case}: one of ${PATH_CASES.join(', ')}`);
const pairs = Number(values.pairs);
// pipeline calls' worth a slice
const perSlice = Math.ceil(Number(values.calls) / CALL_WEIGHT[name]);
if (!Number.isSafeInteger(pairs) || pairs < 1 || !Number.isSafeInteger(perSlice) || perSlice < 1) throw new Error('--pairs and --calls: whole numbers ≥ 1');

const builds = [await pathBuild(resolve(values.a)), await pathBuild(resolve(values.b))];
const calls = builds.map((b) => b.call[name]);
for (let i = 0; i < 3; i++) for (const call of calls) await cpuPerCall(call, perSlice); // warm-up
const total = [0, 0];
const ratios: number[] = [];
for (let p = 0; p < pairs; p++) {
  const µs = [0, 0];
  for (const k of p % 2 === 0 ? [0, 1] : [1, 0]) µs[k] = await cpuPerCall(calls[k], perSlice);
  total[0] += µs[0];
  total[1] += µs[1];
  ratios.push(µs[1] / µs[0]);
}
for (const b of builds) await b.close();
const sorted = [...ratios].sort((x, y) => x - y);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3);
console.log(`${name}, ${pairs} pairs of ${perSlice}-call slices: A ${(total[0] / pairs).toFixed(2)} µs, B ${(total[1] / pairs).toFixed(2)} µs CPU a call; `
  + `B ÷ A ${(total[1] / total[0]).toFixed(3)} (pairs: median ${at(0.5)}, quartiles ${at(0.25)}–${at(0.75)})`);
