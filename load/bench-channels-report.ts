// the per-channel ops' part of RESULTS.md (figures from bench-channels.ts) and their targets.
import { n, pct, tableMd, x } from './markdown.js';
import type { Target } from './report.js';
import type { BenchResults, ChannelKernelFigures } from './results.js';

const dims = (s: number[]) => s.join('×');

/** share of memcpy on one thread: training reads the input twice at least (statistics, output) */
const GOALS: [string, number][] = [['batchnorm train', 0.4], ['batchnorm infer', 0.6], ['groupnorm', 0.6]];

export function channelTargets(bench: BenchResults): Target[] {
  const out: Target[] = [];
  const kernels = bench.channelKernels ?? [];
  for (const layoutKey of new Set(kernels.map((k) => `${k.op}|${k.layout}`))) {
    const [op, layout] = layoutKey.split('|');
    const goal = GOALS.find(([prefix]) => op.startsWith(prefix))?.[1];
    // the best implementation the build has (the service runs that one)
    const best = kernels.filter((k) => k.op === op && k.layout === layout).sort((a, b) => b.fractionOfMemcpy - a.fractionOfMemcpy)[0];
    if (goal === undefined || best === undefined) continue;
    out.push({
      what: `${op} ${layout} (${best.impl}) ${dims(best.shape)} float32, share of memcpy`, goal: `≥ ${pct(goal)}`,
      measured: pct(best.fractionOfMemcpy), met: best.fractionOfMemcpy >= goal,
    });
  }
  for (const p of (bench.channelPool ?? []).filter((f) => f.workers === 2 && !f.op.startsWith('memcpy'))) {
    out.push({ what: `${p.op} ${p.layout} pool ${dims(p.shape)}, 2 workers ÷ 1`, goal: '≥ 1.70×', measured: x(p.speedup), met: p.speedup >= 1.7 });
  }
  return out;
}

const check = (f: { checkFailure: string | null }) => (f.checkFailure === null ? 'ok' : `**${f.checkFailure}**`);

export function channelSection(bench: BenchResults): string {
  const kernels = (bench.channelKernels ?? []).map((k: ChannelKernelFigures) => [
    k.op, k.layout, k.impl, dims(k.shape), n(k.medianMs, 3), n(k.gbPerS), n(k.memcpyGbPerS), pct(k.fractionOfMemcpy), check(k),
  ]);
  const pool = (bench.channelPool ?? []).map((p) => [
    p.op, p.layout, dims(p.shape), String(p.workers), n(p.medianMs, 2), n(p.gbPerS), x(p.speedup), check(p),
  ]);
  return [
    '## Per-channel ops: BatchNorm and GroupNorm',
    '',
    'Same run. Float32 in and out, γ, β and (BatchNorm) running statistics per channel, `return_stats` on. *C first* is `channel_axis` 1, *C last* is −1. ' +
      'One thread: the request laid out by `allocateChannelJob` / `allocateRowJob` and its phases run inline with `executeTask` (BatchNorm training: the block statistics, their merge, the output), ' +
      'allocation included, per call; *js* clears the job\'s SIMD choice, *wasm* is the job as the service runs it. GB/s counts the input read once and the output written once, as the memcpy\'s read + write of the same bytes. ' +
      'Pool: the same jobs through `runJobs` on the real pool; first, as a control, a copy of the first tensor by one thread and by two (a half each), which bounds what two workers can gain on memory-bound work in that run. ' +
      'Every figure\'s output, mean and rstd are checked against a float64 computation (`load/bench-channel-reference.ts`).',
    '',
    tableMd(['op', 'layout', 'impl', 'shape', 'ms/call', 'GB/s', 'memcpy GB/s', 'of memcpy', 'check'], kernels,
      [false, false, false, false, true, true, true, true, false]),
    '',
    tableMd(['op', 'layout', 'shape', 'workers', 'ms', 'GB/s', 'speed-up', 'check'], pool, [false, false, false, true, true, true, true, false]),
  ].join('\n');
}
