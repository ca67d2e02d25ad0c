// npm run bench:path: what the engine costs one small request without any transport, as CPU µs per
// call in one process (stable where socket runs on this shared machine spread by ±30 %); the cases
// are load/path-cases.ts'. `--dist <dir>` measures another build (a worktree of an older commit,
// say); for a before/after of two builds, npm run ab:path runs them side by side in one process.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CALL_WEIGHT, cpuPerCall, PATH_CASES, pathBuild, type PathCase } from './path-cases.js';

const { values } = parseArgs({ options: { dist: { type: 'string' }, calls: { type: 'string', default: '100000' } } });
const dist = resolve(values.dist ?? fileURLToPath(new URL('../dist', import.meta.url)));
const calls = Number(values.calls);
if (!Number.isSafeInteger(calls) || calls < 1) throw new Error(`--calls: ${values.calls} is not a whole number ≥ 1`);

const LABELS: Readonly<Record<PathCase, string>> = {
  pipeline: 'pipeline (1×768 rmsnorm, /v1 msgpack answer)',
  batch: 'batch pipeline (64 such items, msgpack)',
  grpc: 'grpc infer (message bytes → encoded answer)',
  body: 'batch body (decode + normalize, 64 items)',
  v1: '/v1 msgpack by inject (all but the socket)',
  v2: '/v2 binary by inject (all but the socket)',
  socket: '/v1 msgpack over a UNIX socket, client included',
};

const build = await pathBuild(dist);
const figures: [PathCase, number][] = [];
for (const name of PATH_CASES) {
  const count = Math.ceil(calls / CALL_WEIGHT[name]);
  await cpuPerCall(build.call[name], Math.ceil(count / 10)); // warm-up
  figures.push([name, await cpuPerCall(build.call[name], count)]);
}
await build.close();
console.log(`build: ${dist}, ${calls} pipeline calls' worth each, CPU µs per call`);
const width = Math.max(...Object.values(LABELS).map((label) => label.length));
for (const [name, µs] of figures) console.log(`${LABELS[name].padEnd(width)} ${µs.toFixed(2)}`);
