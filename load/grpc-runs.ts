// the gRPC part of a load run (issue 25): each gRPC scenario closed loop against the service's gRPC port
// and the gRPC floor, then each at its fixed offered rates beside the service's /v2 HTTP binary at the
// same rate; figures as ratios to the floor and to the service's /v2 HTTP runs of the same request.
import { grpcPacedRun, measureGrpc, type GrpcEndpoint } from './grpc-measure.js';
import { makeGrpcSample, type GrpcRateScenario, type GrpcSample, type GrpcScenario } from './grpc-scenarios.js';
import { interleave, roundsFor } from './interleave.js';
import { pacedRun, ratioOf, type Endpoint } from './measure.js';
import { fixedAmount, type Options } from './options.js';
import { ACHIEVED_TOLERANCE, type GrpcFigures, type GrpcRateFigures, type GrpcSide, type PacedFigures, type RunFigures, type ScenarioFigures } from './results.js';
import { scenarios, type Sample, type Scenario } from './scenarios.js';

export interface GrpcServers { service: GrpcEndpoint; floor: GrpcEndpoint | null }

const SIDES: readonly GrpcSide[] = ['service', 'floor'];

/** the scenario's first sample is what the load sends; `checks` more, distinct, are spot-checked with it */
export function grpcSamples(s: GrpcScenario, checks: number): GrpcSample[] {
  return Array.from({ length: 1 + checks }, (_, k) => makeGrpcSample(s, k));
}

/** the servers of a run in an order rotating with `i`, so a slow drift of the machine favours none */
const rotated = (servers: GrpcServers, i: number) => {
  const sides = [servers.service, servers.floor].filter((e): e is GrpcEndpoint => e !== null);
  return sides.map((_, k) => sides[(i + k) % sides.length]);
};

const cpuRatio = (a: RunFigures | null | undefined, b: RunFigures | null | undefined) =>
  (a?.serverCpuPerReq ?? null) === null || (b?.serverCpuPerReq ?? null) === null ? null : a!.serverCpuPerReq! / b!.serverCpuPerReq!;

/** closed loop; `http`: the saturated HTTP scenarios of the same run, the /v2 ones among them */
export async function measureGrpcScenarios(
  list: GrpcScenario[], servers: GrpcServers, http: ScenarioFigures[], checks: number, o: Options, report: (f: GrpcFigures) => void,
): Promise<GrpcFigures[]> {
  const out: GrpcFigures[] = [];
  for (let i = 0; i < list.length; i++) {
    const s = list[i];
    const samples = grpcSamples(s, checks);
    const got = new Map<GrpcSide, RunFigures>();
    for (const e of rotated(servers, i)) got.set(e.target, await measureGrpc(e, s, samples, o));
    const service = got.get('service')!;
    const floor = got.get('floor') ?? null;
    const v2 = http.find((f) => f.id === s.v2)?.service ?? null;
    const f: GrpcFigures = {
      id: s.id, op: s.op, name: s.name, label: s.label, mode: s.mode, tensorBytes: s.tensorBytes, connections: o.connections ?? s.connections,
      service, floor, v2: s.v2,
      floorRatio: floor === null ? null : ratioOf(service, floor),
      v2Ratio: v2 === null ? null : ratioOf(service, v2),
    };
    out.push(f);
    report(f);
  }
  return out;
}

/**
 * each at its offered rate, the service over gRPC, the gRPC floor and the service over /v2 HTTP with
 * the same tensor measured side by side (load/interleave.ts); `saturated`: the closed-loop gRPC
 * figures of the same run
 */
export async function measureGrpcRates(
  list: GrpcRateScenario[], servers: GrpcServers, http: Endpoint, httpSamples: (s: Scenario) => Sample[], saturated: GrpcFigures[], checks: number, o: Options,
  report: (f: GrpcRateFigures) => void,
): Promise<GrpcRateFigures[]> {
  const out: GrpcRateFigures[] = [];
  // a short run sends a fixed few requests in one go: neither its rates nor its saturation say anything
  const judged = !fixedAmount(o);
  const rounds = judged ? roundsFor(o) : 1;
  for (const r of list) {
    const s = r.scenario;
    const samples = grpcSamples(s, checks);
    const sides = [servers.service, servers.floor].filter((e): e is GrpcEndpoint => e !== null);
    const v2 = scenarios([r.v2]).find((h) => h.id === r.v2)!;
    const runs = await interleave<PacedFigures>([
      ...sides.map((e) => grpcPacedRun(e, s, samples, o, r.rate)),
      pacedRun(http, v2, httpSamples(v2), o, r.rate),
    ], rounds);
    const got = new Map<GrpcSide, PacedFigures>(sides.map((e, k) => [e.target, runs[k]]));
    const v2Run = runs[sides.length];
    const base = saturated.find((f) => f.id === s.id);
    const sat: Record<GrpcSide, number | null> = { service: base?.service.rps ?? null, floor: base?.floor?.rps ?? null };
    const service = got.get('service')!;
    const floor = got.get('floor') ?? null;
    const f: GrpcRateFigures = {
      id: r.id, scenario: s.id, label: s.label, mode: s.mode, connections: o.connections ?? s.connections, rate: r.rate,
      service, floor, saturated: sat,
      notBelow: judged ? SIDES.filter((t) => sat[t] !== null && sat[t]! <= r.rate) : null,
      offRate: judged ? SIDES.filter((t) => { const p = got.get(t); return p !== undefined && Math.abs(p.achievedRate / r.rate - 1) > ACHIEVED_TOLERANCE; }) : null,
      floorCpuRatio: cpuRatio(service, floor),
      v2: r.v2, v2Run, v2CpuRatio: cpuRatio(service, v2Run),
    };
    out.push(f);
    report(f);
  }
  return out;
}
