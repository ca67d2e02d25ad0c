// the equal-rate runs' part of RESULTS.md and of the console (figures from rates.ts), and their targets (issue 24).
import { roundSpread } from './interleave.js';
import { n, tableMd, x, xr } from './markdown.js';
import type { Target } from './report.js';
import { ACHIEVED_TOLERANCE, type LoadResults, type PacedFigures, type RateFigures, type RunFigures, type Side } from './results.js';

// service CPU per answer ÷ the echo's at both rates, by scenario name; an info run ÷ the service at warn
const ECHO_GOALS: Readonly<Record<string, number>> = { small: 1.25, 'small-v2': 1.25, 'small-json': 1.25, batch64: 1.5 };
const WARN_GOAL = 1.1;

interface Goal { against: 'echo' | 'warn'; max: number; ratio: number | null; shown: string }

function goalOf(f: RateFigures): Goal | null {
  if (f.logLevel === 'info') return { against: 'warn', max: WARN_GOAL, ratio: f.warnCpuRatio, shown: warnRatio(f) };
  const max = ECHO_GOALS[f.scenario.slice(f.scenario.indexOf('/') + 1)];
  return max === undefined ? null : { against: 'echo', max, ratio: f.echoCpuRatio, shown: echoRatio(f) };
}

// the ratios with their rounds' quartiles (load/interleave.ts)
const echoRatio = (f: RateFigures) => xr(f.echoCpuRatio, roundSpread(f.service.slices, f.echo?.slices));
const floorRatio = (f: RateFigures) => xr(f.floorCpuRatio, roundSpread(f.service.slices, f.floor?.slices));
const warnRatio = (f: RateFigures) => xr(f.warnCpuRatio, roundSpread(f.service.slices, f.atWarn?.slices));

const sides = (list: Side[]) => list.join(', ');
const missedRate = (r: PacedFigures, rate: number) => Math.abs(r.achievedRate / rate - 1) > ACHIEVED_TOLERANCE;

/** met, not met, or why the figure judges nothing: a short run, a rate not below a saturated rate, a rate not achieved */
function verdict(f: RateFigures, load: LoadResults): { met: boolean | null; why: string } {
  if (load.options.short) return { met: null, why: 'n/a (short run)' };
  const twin = f.logLevel === 'info' ? (load.rates ?? []).find((w) => `${w.id}/info` === f.id) ?? null : null;
  for (const g of [f, twin]) {
    if (g === null) continue;
    const who = g === twin ? ' (at warn)' : '';
    if ((g.notBelow ?? []).length > 0) return { met: null, why: `n/a: not below the saturated rate of ${sides(g.notBelow!)}${who}` };
    if ((g.offRate ?? []).length > 0) return { met: null, why: `n/a: rate not achieved by ${sides(g.offRate!)}${who}` };
  }
  if (f.atWarn && missedRate(f.atWarn, f.rate)) return { met: null, why: 'n/a: rate not achieved by the service at warn' };
  const goal = goalOf(f);
  if (goal === null || goal.ratio === null) return { met: null, why: 'n/a' };
  return goal.ratio <= goal.max ? { met: true, why: 'met' } : { met: false, why: 'not met' };
}

export function rateTargets(load: LoadResults): Target[] {
  return (load.rates ?? []).flatMap((f) => {
    const goal = goalOf(f);
    if (goal === null) return [];
    const v = verdict(f, load);
    return [{
      what: `${f.id} server CPU/request ÷ ${goal.against === 'warn' ? 'the service at warn' : 'echo'}, at ${n(f.rate, 0)} req/s`,
      goal: `≤ ${goal.max.toFixed(2)}×`, measured: v.met === null && v.why !== 'n/a (short run)' ? `${goal.shown} (${v.why})` : goal.shown, met: v.met,
    }];
  });
}

const ms = (r: RunFigures | null | undefined) => (r === null || r === undefined || r.serverCpuPerReq === null ? null : r.serverCpuPerReq * 1000);
const share = (v: number | undefined) => (v === undefined ? '–' : `${Math.round(100 * v)} %`);

/** the figures of one row, each cell service / echo / floor (an info run: its service only) */
function cells(f: RateFigures, load: LoadResults, mark: (s: string) => string) {
  const runs: Array<[Side, PacedFigures | null]> = [['service', f.service], ['echo', f.echo], ['floor', f.floor]];
  // an info run: the info service / the service at warn, measured side by side
  const shown: Array<[Side, PacedFigures | null]> = f.logLevel === 'info' ? [runs[0], ['service', f.atWarn ?? null]] : runs;
  const each = (cell: (side: Side, r: PacedFigures | null) => string) => shown.map(([side, r]) => cell(side, r)).join(' / ');
  const saturatedRun = f.logLevel === 'info'
    ? (load.infoSaturated ?? []).find((s) => s.scenario === f.scenario)?.service ?? null
    : null;
  const base = load.scenarios.find((s) => s.id === f.scenario) ?? null;
  const saturatedCpu = f.logLevel === 'info' ? n(ms(saturatedRun), 3) : [base?.service, base?.echo, base?.floor].map((r) => n(ms(r), 3)).join(' / ');
  const v = verdict(f, load);
  const goal = goalOf(f);
  const failed = shown.reduce((k, [, r]) => k + (r?.spotCheckFailures ?? 0), 0);
  return {
    achieved: each((_, r) => (r === null ? '–' : missedRate(r, f.rate) ? mark(n(r.achievedRate, 0)) : n(r.achievedRate, 0))),
    busy: each((_, r) => share(r?.busyShare)),
    // an info run: its own saturated rate / the service's at warn (the twin's row judges the latter)
    saturated: f.logLevel === 'info'
      ? [f.saturated.service, base?.service.rps ?? null].map((v) => n(v, 0)).join(' / ')
      : each((side) => ((f.notBelow ?? []).includes(side) ? mark(n(f.saturated[side], 0)) : n(f.saturated[side], 0))),
    cpu: each((_, r) => n(ms(r), 3)),
    saturatedCpu,
    saturatedRatio: f.logLevel === 'info' ? '–' : x(base?.ratio?.serverCpuPerReq),
    goal: goal === null ? '–' : `≤ ${goal.max.toFixed(2)}× ${goal.against}`,
    verdict: v,
    checks: failed === 0 ? `${shown.reduce((k, [, r]) => k + (r?.spotChecks ?? 0), 0)} ok` : mark(`${failed} failed`),
  };
}

export function rateSection(load: LoadResults): string {
  const bold = (s: string) => `**${s}**`;
  const rows = (load.rates ?? []).map((f) => {
    const c = cells(f, load, bold);
    return [
      f.id, f.label, String(f.connections), n(f.rate, 0), c.achieved, c.busy, c.saturated, c.cpu, c.saturatedCpu,
      echoRatio(f), floorRatio(f), warnRatio(f), c.saturatedRatio, c.goal,
      c.verdict.met === false ? bold(c.verdict.why) : c.verdict.why, c.checks,
    ];
  });
  return [
    '## CPU per request at equal offered rates (issue 24)',
    '',
    'Same run, after the saturated scenarios, on a service, an echo and a floor of their own, started with the others and idle until then, so that every server of a row has served the same requests before it ' +
      '(after the saturated runs, 16 MiB bodies and gRPC among them, the service costs more per small request than a fresh one: see the notes). Each row sends one scenario\'s requests to the service, the echo and the floor at the same offered rate, ' +
      `the requests spread evenly over each second (every millisecond those due by then, \`load/paced-http.ts\`), warm-up and window alike, over connections kept from the warm-up (at least 3 s: \`PACED_WARMUP_S\`, \`load/measure.ts\`) to the last slice, the service's event-loop window opened before its warm-up; rmsnorm only. The three are measured side by side: after each one's warm-up, the window is taken in slices of one second (${load.options.rounds ?? 'twice the run\'s duration'} of them each), ` +
      'the servers in turn (A B C, B C A, C A B, …), so a drift of this shared machine falls on all three alike (`load/interleave.ts`). ' +
      `*CPU ms/req* is the server process's user+system time over its slices ÷ its answers in them, *×echo*, *×floor* the service's ÷ theirs at that rate; in brackets, the lower and upper quartile of the same ratio taken round by round (each round's slices a few seconds apart), which says how far the row's ratio can be trusted. ` +
      '*Saturated* is each server\'s req/s and CPU in the closed-loop run of the same scenario above: the rate must be below all three; where it is not, the figure is in bold and the row judges nothing. ' +
      `*Achieved* is answers ÷ the window's seconds (those the requests were offered over, or until the last answer when that came later), in bold when more than ${Math.round(100 * ACHIEVED_TOLERANCE)} % off the rate. ` +
      '*Answered in* is the share of the window\'s 10 ms slices in which an answer came: near 100 % when the arrivals are spread evenly and answered as they come. ' +
      '(Until 2026-11-28 these rows used autocannon\'s `overallRate`, which sends each connection\'s share of a second back to back from the start of that second: a burst a second, served in a closed loop at each server\'s own pace; service ÷ echo read a few per cent higher that way, with wider spreads: see the notes.) ' +
      'The `/info` rows are another service process at its default `LOG_LEVEL=info` (its log to /dev/null; its saturated figures its own, measured just before) side by side with the rows\' service at warn, cells *info / warn*; *×warn* the info one\'s CPU per request ÷ the warn one\'s.',
    '',
    tableMd(
      ['scenario', 'request', 'conns', 'offered req/s', 'achieved req/s', 'answered in', 'saturated req/s', 'CPU ms/req', 'saturated CPU ms/req', '×echo CPU', '×floor CPU', '×warn CPU', 'saturated ×echo CPU', 'goal', 'met', 'spot checks'],
      rows,
      [false, false, true, true, true, true, true, true, true, true, true, true, true, false, false, true],
    ),
  ].join('\n');
}

/** the console's table of the same figures */
export function rateTable(load: LoadResults): string[][] {
  const head = ['rate scenario', 'offered', 'achieved s/e/f', 'answered in', 'saturated req/s', 'CPU ms/req', '×echo', '×floor', '×warn', 'sat ×echo', 'goal', 'met'];
  return [head, ...(load.rates ?? []).map((f) => {
    const c = cells(f, load, (s) => `${s}!`);
    return [f.id, n(f.rate, 0), c.achieved, c.busy, c.saturated, c.cpu, echoRatio(f), floorRatio(f), warnRatio(f), c.saturatedRatio, c.goal, c.verdict.why];
  })];
}
