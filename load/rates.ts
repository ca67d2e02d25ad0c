// the equal-rate runs (issue 24): small scenarios sent to the service, the echo and the floor at the
// same fixed offered rates, each below every server's saturated rate in the same run, so a slower
// server's CPU per answer is its own work and not also what a saturated closed loop costs it; and
// the service at its default LOG_LEVEL=info at the small msgpack rates, against itself at warn. The
// servers of a row are measured side by side in slices (load/interleave.ts). When the suite spawns its
// servers, these rows have a service, echo and floor of their own (load/run-load.ts).
// Ids `rmsnorm/small@2000`, `rmsnorm/small@2000/info`: `--only @` picks them all.
import { interleave, roundsFor } from './interleave.js';
import { measure, pacedRun, type Endpoint } from './measure.js';
import { fixedAmount, type Options } from './options.js';
import { ACHIEVED_TOLERANCE, type InfoSaturatedFigures, type PacedFigures, type RateFigures, type RunFigures, type ScenarioFigures, type Side } from './results.js';
import { scenarios, type Sample, type Scenario } from './scenarios.js';

export interface RateScenario {
  id: string;
  /** the saturated scenario whose requests it sends; its closed-loop run gives the saturated rates */
  scenario: Scenario;
  /** offered req/s over all the scenario's connections */
  rate: number;
  logLevel: 'warn' | 'info';
}

// rmsnorm only: at 1×768 the op's own work is a few µs of the request's hundred or more
const OP = 'rmsnorm';
const PLAN: ReadonlyArray<{ name: string; rates: readonly number[]; info: boolean }> = [
  { name: 'small', rates: [2000, 4000], info: true },
  { name: 'small-v2', rates: [2000, 4000], info: false },
  { name: 'small-json', rates: [1000, 2000], info: false },
  { name: 'batch64', rates: [300, 600], info: false },
];
const SIDES: readonly Side[] = ['service', 'echo', 'floor'];

/** the rate scenarios whose id contains one of `only` (all without it), in plan order; an info run brings its warn run */
export function rateScenarios(only: string[] = []): RateScenario[] {
  const all = PLAN.flatMap((p) => {
    const scenario = scenarios().find((s) => s.id === `${OP}/${p.name}`)!;
    return p.rates.flatMap((rate) => {
      const warn: RateScenario = { id: `${scenario.id}@${rate}`, scenario, rate, logLevel: 'warn' };
      return p.info ? [warn, { ...warn, id: `${warn.id}/info`, logLevel: 'info' as const }] : [warn];
    });
  });
  const picked = new Set(all.filter((r) => only.length === 0 || only.some((o) => r.id.includes(o))).map((r) => r.id));
  return all.filter((r) => picked.has(r.id) || picked.has(`${r.id}/info`));
}

export interface RateServers {
  service: Endpoint;
  echo: Endpoint | null;
  floor: Endpoint | null;
  /** the service at LOG_LEVEL=info; null when none was spawned (--url) */
  info: Endpoint | null;
}

export interface RateRuns { rates: RateFigures[]; infoSaturated: InfoSaturatedFigures[] }

/**
 * each rate scenario in turn, its servers measured side by side in slices (load/interleave.ts); an
 * info run is the info service beside the service at warn, and measures the info service saturated
 * first, once per scenario, for its own saturated rate. `saturated`: the closed-loop figures of the
 * same run. `report` prints each as it comes.
 */
export async function measureRates(
  list: RateScenario[], servers: RateServers, saturated: ScenarioFigures[], samplesOf: (s: Scenario) => Sample[], o: Options,
  report: (f: RateFigures) => void,
): Promise<RateRuns> {
  const rates: RateFigures[] = [];
  const infoSaturated: InfoSaturatedFigures[] = [];
  const rounds = fixedAmount(o) ? 1 : roundsFor(o);
  for (const r of list) {
    const s = r.scenario;
    const samples = samplesOf(s);
    const got = new Map<Side, PacedFigures>();
    let sat: Record<Side, number | null>;
    let atWarn: PacedFigures | null = null;
    if (r.logLevel === 'info') {
      if (servers.info === null) continue;
      let own = infoSaturated.find((f) => f.scenario === s.id);
      if (own === undefined) {
        own = { scenario: s.id, service: await measure(servers.info, s, samples, o) };
        infoSaturated.push(own);
      }
      const [info, warn] = await interleave([servers.info, servers.service].map((e) => pacedRun(e, s, samples, o, r.rate)), rounds);
      got.set('service', info);
      atWarn = warn;
      sat = { service: own.service.rps, echo: null, floor: null };
    } else {
      const sides = [servers.service, servers.echo, servers.floor].filter((e): e is Endpoint => e !== null);
      const runs = await interleave(sides.map((e) => pacedRun(e, s, samples, o, r.rate)), rounds);
      sides.forEach((e, k) => got.set(e.target, runs[k]));
      const base = saturated.find((f) => f.id === s.id);
      sat = { service: base?.service.rps ?? null, echo: base?.echo?.rps ?? null, floor: base?.floor?.rps ?? null };
    }
    const f = figuresOf(r, got, sat, atWarn, o);
    rates.push(f);
    report(f);
  }
  return { rates, infoSaturated };
}

function figuresOf(r: RateScenario, got: Map<Side, PacedFigures>, saturated: Record<Side, number | null>, atWarn: PacedFigures | null, o: Options): RateFigures {
  const service = got.get('service')!;
  const echo = got.get('echo') ?? null;
  const floor = got.get('floor') ?? null;
  const cpu = (a: RunFigures | null, b: RunFigures | null) =>
    (a?.serverCpuPerReq ?? null) === null || (b?.serverCpuPerReq ?? null) === null ? null : a!.serverCpuPerReq! / b!.serverCpuPerReq!;
  // a short run sends a fixed few requests in one burst: neither its rates nor its saturation say anything
  const judged = !fixedAmount(o);
  return {
    id: r.id, scenario: r.scenario.id, label: r.scenario.label, path: r.scenario.path, connections: o.connections ?? r.scenario.connections,
    rate: r.rate, logLevel: r.logLevel, service, echo, floor, saturated,
    notBelow: judged ? SIDES.filter((t) => saturated[t] !== null && saturated[t]! <= r.rate) : null,
    offRate: judged ? SIDES.filter((t) => { const p = got.get(t); return p !== undefined && Math.abs(p.achievedRate / r.rate - 1) > ACHIEVED_TOLERANCE; }) : null,
    echoCpuRatio: cpu(service, echo), floorCpuRatio: cpu(service, floor), atWarn, warnCpuRatio: cpu(service, atWarn),
  };
}
