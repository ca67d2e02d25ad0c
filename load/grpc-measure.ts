// one measured run of a gRPC scenario against one server, as load/measure.ts does for HTTP: the gRPC
// load client (load/grpc-load.ts) closed loop or at a fixed rate after a warm-up, the server's CPU over
// the window, then spot checks sent by another client (@grpc/grpc-js), decoded by protobufjs.
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { scrapeLoopDelay } from './event-loop.js';
import type { ClientHttp2Session } from 'node:http2';
import { openGrpcSessions, runGrpcLoad, type GrpcLoadResult, type GrpcMode } from './grpc-load.js';
import type { GrpcSample, GrpcScenario } from './grpc-scenarios.js';
import { MIN_OK, pacedWarmup, percentile, settle } from './measure.js';
import { fixedAmount, type Options } from './options.js';
import { SLICE_MS } from './paced-http.js';
import { cpuSeconds } from './processes.js';
import type { SlicedRun } from './interleave.js';
import type { GrpcSide, PacedFigures, RunFigures } from './results.js';

const SHORT_MAX_MS = 30_000; // a short run's fixed amount is answered within this, or the run ends
const CHECK_DEADLINE_MS = 60_000;

export interface GrpcEndpoint {
  target: GrpcSide;
  /** host:port */
  address: string;
  pid: number | null;
  /** the service's HTTP base, for its event-loop delay; null for the floor */
  base: string | null;
}

const PATH: Record<GrpcMode, string> = { unary: '/inference.GRPCInferenceService/ModelInfer', stream: '/inference.GRPCInferenceService/ModelStreamInfer' };
const same = (bytes: Buffer) => bytes;

function metadataOf(o: Options): Record<string, string> {
  return o.apiKey === null ? {} : { authorization: `Bearer ${o.apiKey}` };
}

/** each sample's answer (or what went wrong), all sent at once: unary calls side by side, or on one stream in order */
async function answersOf(address: string, mode: GrpcMode, samples: GrpcSample[], o: Options): Promise<Array<Buffer | string>> {
  const client = new Client(address, credentials.createInsecure(), { 'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1 });
  const metadata = () => {
    const m = new Metadata();
    for (const [k, v] of Object.entries(metadataOf(o))) m.set(k, v);
    return m;
  };
  const deadline = () => Date.now() + CHECK_DEADLINE_MS;
  try {
    if (mode === 'unary') {
      return await Promise.all(samples.map((sample) => new Promise<Buffer | string>((resolve) => {
        client.makeUnaryRequest(PATH.unary, same, same, sample.message, metadata(), { deadline: deadline() }, (err, answer) => {
          resolve(err ? `call failed: ${err.message}` : answer!);
        });
      })));
    }
    return await new Promise((resolve) => {
      const got: Buffer[] = [];
      const call = client.makeBidiStreamRequest(PATH.stream, same, same, metadata(), { deadline: deadline() });
      call.on('data', (answer: Buffer) => got.push(answer));
      call.on('error', () => {}); // its status follows
      call.on('status', (s: { code: number; details: string }) => {
        resolve(samples.map((_, k) => got[k] ?? `no answer on the stream (status ${s.code} ${s.details})`));
      });
      for (const sample of samples) call.write(sample.message);
      call.end();
    });
  } finally {
    client.close();
  }
}

export async function spotCheckGrpc(e: GrpcEndpoint, mode: GrpcMode, samples: GrpcSample[], o: Options): Promise<string[]> {
  const answers = await answersOf(e.address, mode, samples, o);
  return answers.map((a, k) => (typeof a === 'string' ? a : samples[k].check(a, e.target, mode))).filter((f): f is string => f !== null);
}

/** warm-up, then the measured window straight after it, closed loop */
export async function measureGrpc(e: GrpcEndpoint, s: GrpcScenario, samples: GrpcSample[], o: Options): Promise<RunFigures> {
  const fixed = fixedAmount(o);
  const t = tally();
  // the scrape starts the event-loop histogram afresh, before the warm-up (measure.ts says why)
  if (e.base !== null) await scrapeLoopDelay(e.base);
  if (o.warmup > 0) await loadOf(e, s, samples, o, null)({ durationMs: o.warmup * 1000 });
  const cpu0 = e.pid === null ? 0 : cpuSeconds(e.pid);
  do {
    t.add(await loadOf(e, s, samples, o, null)(fixed ? { amount: s.shortAmount, durationMs: SHORT_MAX_MS } : { durationMs: o.duration * 1000 }));
  } while (!fixed && t.c.ok < MIN_OK && t.c.ms < 3000 * o.duration);
  const cpu1 = e.pid === null ? 0 : cpuSeconds(e.pid);
  return (await closeRun(e, s, samples, o, t, e.pid === null ? null : cpu1 - cpu0, false)).figures;
}

/**
 * a run at `rate` offered req/s taken in slices beside other servers' (load/interleave.ts), as
 * measure.ts's pacedRun for HTTP; achieved: what was answered within the slices
 */
export function grpcPacedRun(e: GrpcEndpoint, s: GrpcScenario, samples: GrpcSample[], o: Options, rate: number): SlicedRun<PacedFigures> {
  const fixed = fixedAmount(o);
  const t = tally();
  // the warm-up and every slice on the same connections, as the HTTP rows' (load/paced-http.ts says why)
  let sessions: ClientHttp2Session[] | undefined;
  const load = loadOf(e, s, samples, o, rate, () => sessions);
  return {
    pid: e.pid,
    async open() {
      // as the HTTP rows' (measure.ts, pacedRun): the scrape first, then the warm-up
      if (e.base !== null) await scrapeLoopDelay(e.base);
      sessions = await openGrpcSessions(e.address, o.connections ?? s.connections);
      const warmup = pacedWarmup(o);
      if (warmup > 0) await load({ durationMs: warmup * 1000 });
    },
    async slice(seconds) {
      const got = await load(fixed ? { amount: s.shortAmount, durationMs: SHORT_MAX_MS } : { durationMs: seconds * 1000 });
      t.add(got);
      return got.ok + got.errors;
    },
    async close(serverCpu, slices) {
      for (const session of sessions ?? []) session.close();
      const { figures, windowAnswers } = await closeRun(e, s, samples, o, t, serverCpu, true);
      return { ...figures, achievedRate: windowAnswers / figures.seconds, busyShare: figures.busyShare ?? 0, slices };
    },
  };
}

/** `kept`: the connections to send on, else each run makes its own */
const loadOf = (e: GrpcEndpoint, s: GrpcScenario, samples: GrpcSample[], o: Options, rate: number | null, kept: () => ClientHttp2Session[] | undefined = () => undefined) =>
  (limits: { durationMs: number; amount?: number }) => runGrpcLoad({
    target: e.address, mode: s.mode, message: samples[0].message, connections: o.connections ?? s.connections, rate, metadata: metadataOf(o), sessions: kept(), ...limits,
  });

/**
 * a window's load results added up. Answers that came after a window (a server behind the offered
 * rate answering what it queued) cost CPU, counted per answer; req/s and the achieved rate count the window's own
 */
function tally() {
  const c = { ok: 0, errors: 0, windowOk: 0, windowAnswers: 0, ms: 0, clientMs: 0, busySlices: 0, latencies: [] as number[], statuses: {} as GrpcLoadResult['statuses'] };
  return {
    c,
    add(r: GrpcLoadResult) {
      c.ok += r.ok; c.errors += r.errors; c.windowOk += r.windowOk; c.windowAnswers += r.windowAnswers; c.ms += r.elapsedMs; c.clientMs += r.clientCpuMs; c.busySlices += r.busySlices;
      for (const l of r.latencies) c.latencies.push(l);
      for (const [code, k] of Object.entries(r.statuses)) c.statuses[code] = (c.statuses[code] ?? 0) + k;
    },
  };
}

/** after the window: the event-loop scrape, settle, spot checks, and the figures */
async function closeRun(
  e: GrpcEndpoint, s: GrpcScenario, samples: GrpcSample[], o: Options, t: ReturnType<typeof tally>, serverCpu: number | null, paced: boolean,
): Promise<{ figures: RunFigures; windowAnswers: number }> {
  const c = t.c;
  const eventLoop = e.base === null ? null : await scrapeLoopDelay(e.base);
  if (!fixedAmount(o)) await settle(e.pid);
  const failures = await spotCheckGrpc(e, s.mode, samples, o);
  if (Object.keys(c.statuses).length > 0) process.stdout.write(`load: ${s.id} ${e.target}: calls ended with grpc-status ${JSON.stringify(c.statuses)}\n`);
  const sorted = c.latencies.sort((a, b) => a - b);
  const seconds = c.ms / 1000;
  const responses = c.ok + c.errors;
  const rps = c.windowOk / seconds;
  const figures: RunFigures = {
    responses, ok: c.ok, non2xx: 0, errors: c.errors, timeouts: 0, seconds,
    rps, mibPerS: (rps * s.tensorBytes) / 2 ** 20,
    p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99),
    serverCpuPerReq: serverCpu === null || responses === 0 ? null : serverCpu / responses,
    loadgenCpuPerReq: responses === 0 ? 0 : c.clientMs / 1000 / responses,
    loadgenCores: c.clientMs / c.ms,
    spotChecks: samples.length, spotCheckFailures: failures.length, firstFailure: failures[0] ?? null,
    eventLoop,
    ...(paced ? { busyShare: Math.min(1, c.busySlices / Math.ceil(c.ms / SLICE_MS)) } : {}),
  };
  return { figures, windowAnswers: c.windowAnswers };
}
