// the mixed scenario's part of RESULTS.md (figures from mixed.ts) and its targets (issue 23).
import type { LoopDelay } from './event-loop.js';
import { n, tableMd, x } from './markdown.js';
import type { Target } from './report.js';
import type { LoadResults, MixedFigures } from './results.js';

const P99_RATIO_GOAL = 3; // mixed p99 ÷ alone p99
const LOOP_P99_GOAL_MS = 20; // the service's event-loop delay p99 over the mixed window

const loop = (l: LoopDelay | null | undefined) => (l ? `${n(l.p50Ms, 1)} / ${n(l.p99Ms, 1)} / ${n(l.maxMs, 1)}` : '–');

/** judged only on a full run: a short one proves the instruments run */
export function mixedTargets(load: LoadResults): Target[] {
  const judge = (met: boolean) => (load.options.short ? null : met);
  return (load.mixed ?? []).flatMap((m: MixedFigures) => {
    const l = m.mixed.eventLoop;
    return [
      { what: `${m.id} small p99 beside large JSON answers ÷ alone`, goal: `≤ ${P99_RATIO_GOAL.toFixed(2)}×`, measured: x(m.p99Ratio), met: judge(m.p99Ratio <= P99_RATIO_GOAL) },
      {
        what: `${m.id} event-loop delay p99 over the mixed window (max ${n(l?.maxMs, 1)} ms)`, goal: `< ${LOOP_P99_GOAL_MS} ms`,
        measured: l ? `${n(l.p99Ms, 1)} ms` : '–', met: l ? judge(l.p99Ms < LOOP_P99_GOAL_MS) : null,
      },
    ];
  });
}

export function mixedSection(load: LoadResults): string {
  const rows = (load.mixed ?? []).map((m) => {
    const b = m.background;
    const failed = m.alone.spotCheckFailures + m.mixed.spotCheckFailures + b.spotCheckFailures;
    const checks = m.alone.spotChecks + m.mixed.spotChecks + b.spotChecks;
    return [
      m.id, `${m.label}, ${m.connections} conns`, `${b.label}, ${b.connections} conns`,
      `${n(m.alone.rps, 1)} / ${n(m.mixed.rps, 1)}`, `${n(m.alone.p50Ms)} / ${n(m.mixed.p50Ms)}`, `${n(m.alone.p99Ms)} / ${n(m.mixed.p99Ms)}`,
      x(m.p99Ratio), `${m.alone.non2xx + m.alone.errors + m.alone.timeouts} / ${m.mixed.non2xx + m.mixed.errors + m.mixed.timeouts}`,
      String(b.ok), String(b.non2xx + b.errors + b.timeouts),
      loop(m.alone.eventLoop), loop(m.mixed.eventLoop), loop(m.loadgenLoop),
      failed === 0 ? `${checks} ok` : `**${failed} failed**`,
    ];
  });
  return [
    '## Small requests beside large JSON answers (issue 23)',
    '',
    'Same run, service only. The small requests are measured alone, then straight after, on the same service process, in the *mixed* window: the same requests while other connections send 16 MiB msgpack bodies with `Accept: application/json`, ' +
      'each answered with about 80 MB of JSON text the service writes itself. The mixed window opens at the first large answer (from then on large requests arrive, are computed and written as JSON at once) ' +
      'and lasts as long as a run alone, extended (up to 3×) until a large answer has come within it. Cells are *alone / mixed*. *Background* counts the large requests\' answers that came within the mixed window; ' +
      'one more is spot-checked after it against the float64 reference, as the small ones are. ' +
      'Event-loop delay is the service\'s own (its `/metrics`, 10 ms resolution: an idle loop reads about 10 ms, a request that holds the loop d ms about 10 + d), alone over the warm-up and the run, mixed over the mixed window; ' +
      'the load generator\'s is measured the same way over the mixed window, since a late generator would read as late answers.',
    '',
    tableMd(
      ['scenario', 'small requests', 'background', 'req/s', 'p50 ms', 'p99 ms', '×alone p99', 'non-2xx', 'background answers', 'background non-2xx', 'service loop p50 / p99 / max ms, alone', 'service loop, mixed', 'generator loop, mixed', 'spot checks'],
      rows,
      [false, false, false, true, true, true, true, true, true, true, true, true, true, true],
    ),
  ].join('\n');
}
