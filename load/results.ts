// the figures a run writes (load/results.json, load/bench.json) and the report reads.
import type { LoopDelay } from './event-loop.js';
import type { Slice } from './interleave.js';
import type { Machine } from './machine.js';

export interface RunFigures {
  /** responses received, any status */
  responses: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  /** 2xx responses per second */
  rps: number;
  /** input tensor MiB per second of 2xx responses */
  mibPerS: number;
  /** over 2xx responses, from autocannon's per-response times (not its whole-ms histogram) */
  p50Ms: number;
  p99Ms: number;
  /** server user+system CPU seconds per response; null when its PID is unknown */
  serverCpuPerReq: number | null;
  loadgenCpuPerReq: number;
  /** load generator CPU time / wall time (1 = one core busy) */
  loadgenCores: number;
  spotChecks: number;
  spotCheckFailures: number;
  firstFailure: string | null;
  /** the service's event-loop delay over the measured window (its /metrics); null for the baselines */
  eventLoop?: LoopDelay | null;
  /** paced runs only: the share of the window's 10 ms slices in which an answer came (1 = answers all along) */
  busyShare?: number;
}

export interface ScenarioFigures {
  id: string;
  op: string;
  name: string;
  label: string;
  path: string;
  encoding: string;
  tensorBytes: number;
  connections: number;
  service: RunFigures;
  echo: RunFigures | null;
  /** the transport floor (load/floor-server.ts); null without one */
  floor: RunFigures | null;
  /** service ÷ echo; null without an echo */
  ratio: Ratio | null;
  /** service ÷ floor; null without a floor */
  floorRatio: Ratio | null;
}

export interface Ratio { rps: number; p50: number; p99: number; serverCpuPerReq: number | null }

/** the large requests sent beside the small ones in the mixed window (issue 23) */
export interface BackgroundFigures {
  label: string;
  path: string;
  /** what the requests ask their answers in */
  answer: string;
  connections: number;
  /** answers, 2xx answers, non-2xx answers, errors and timeouts that came within the mixed window */
  responses: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** one answer after the window, decoded and compared with the float64 reference */
  spotChecks: number;
  spotCheckFailures: number;
  firstFailure: string | null;
}

/** small requests alone, then the same requests while large ones are answered beside them (issue 23) */
export interface MixedFigures {
  id: string;
  op: string;
  label: string;
  path: string;
  connections: number;
  /** the small requests alone, measured right before the mixed window */
  alone: RunFigures;
  /** the same during the mixed window; serverCpuPerReq is null: the server's time is mostly the background's */
  mixed: RunFigures;
  /** mixed ÷ alone */
  p50Ratio: number;
  p99Ratio: number;
  background: BackgroundFigures;
  /** the event-loop delay of the process timing the small requests (the background runs in another), over the mixed window: what it adds to their times */
  loadgenLoop: LoopDelay;
}

/** an achieved rate further than this from the offered one is marked: the server or the generator did not keep up */
export const ACHIEVED_TOLERANCE = 0.05;

/** a run at a fixed offered rate (issue 24) */
export interface PacedFigures extends RunFigures {
  /** answers (any status) ÷ the window's seconds */
  achievedRate: number;
  busyShare: number;
  /** each slice's CPU seconds and answers, in round order (load/interleave.ts); absent in runs older than it */
  slices?: Slice[];
}

export type Side = 'service' | 'echo' | 'floor';

/** one scenario sent at one fixed offered rate to each server, side by side in slices (load/rates.ts, load/interleave.ts) */
export interface RateFigures {
  /** e.g. `rmsnorm/small@2000`, `rmsnorm/small@2000/info` */
  id: string;
  /** the saturated scenario whose requests it sends, e.g. `rmsnorm/small` */
  scenario: string;
  label: string;
  path: string;
  connections: number;
  /** offered req/s over all connections (autocannon's overallRate) */
  rate: number;
  /** the service's LOG_LEVEL; an `info` run measures that service alone */
  logLevel: 'warn' | 'info';
  service: PacedFigures;
  echo: PacedFigures | null;
  floor: PacedFigures | null;
  /** each server's saturated req/s in the same run (an info run: the info service's own); null where not measured */
  saturated: Record<Side, number | null>;
  /** the servers whose saturated req/s is not above the rate (their figures at it are then meaningless); null in a short run */
  notBelow: Side[] | null;
  /** the servers whose achieved rate is more than ACHIEVED_TOLERANCE off the rate; null in a short run (one burst) */
  offRate: Side[] | null;
  /** service CPU per answer ÷ the echo's and the floor's at this rate */
  echoCpuRatio: number | null;
  floorCpuRatio: number | null;
  /** an info run: the service at warn, measured in the slices between the info service's */
  atWarn?: PacedFigures | null;
  /** an info run: service CPU per answer ÷ the same service's at warn (atWarn), same rate and slices */
  warnCpuRatio: number | null;
}

/** the gRPC servers (issue 25): the service's gRPC port, and the gRPC floor (load/grpc-floor-server.ts) */
export type GrpcSide = 'service' | 'floor';

/** a gRPC scenario, closed loop, against the service and the gRPC floor in turn (load/grpc-measure.ts) */
export interface GrpcFigures {
  /** e.g. `rmsnorm/small-grpc-unary` */
  id: string;
  op: string;
  name: string;
  label: string;
  /** unary calls, or one ModelStreamInfer stream per connection */
  mode: 'unary' | 'stream';
  tensorBytes: number;
  connections: number;
  service: RunFigures;
  floor: RunFigures | null;
  /** the /v2 HTTP binary scenario of the same request, e.g. `rmsnorm/small-v2` */
  v2: string;
  /** service ÷ gRPC floor */
  floorRatio: Ratio | null;
  /** service over gRPC ÷ the service over /v2 HTTP, same run; null when that was not measured */
  v2Ratio: Ratio | null;
}

/** a gRPC scenario at one fixed offered rate, paced evenly (load/grpc-load.ts), to the service and the gRPC floor */
export interface GrpcRateFigures {
  /** e.g. `rmsnorm/small-grpc-stream@2000` */
  id: string;
  scenario: string;
  label: string;
  mode: 'unary' | 'stream';
  connections: number;
  rate: number;
  service: PacedFigures;
  floor: PacedFigures | null;
  /** each server's saturated req/s in the same run */
  saturated: Record<GrpcSide, number | null>;
  /** as RateFigures: null in a short run */
  notBelow: GrpcSide[] | null;
  offRate: GrpcSide[] | null;
  floorCpuRatio: number | null;
  /** the saturated /v2 HTTP scenario whose requests v2Run sent, e.g. `rmsnorm/small-v2` */
  v2: string;
  /** the service over /v2 HTTP at the same rate, measured side by side with the gRPC runs */
  v2Run?: PacedFigures | null;
  /** service CPU per answer over gRPC ÷ over /v2 HTTP (v2Run) at the same rate; null when that was not measured */
  v2CpuRatio: number | null;
}

/** the service at LOG_LEVEL=info, saturated: the rate its info runs must stay below */
export interface InfoSaturatedFigures { scenario: string; service: RunFigures }

/** the 1-minute load average when a run started and ended: how busy the shared machine was */
export interface LoadAverage { start: number; end: number }

export interface LoadResults {
  kind: 'load';
  date: string;
  command: string;
  machine: Machine;
  loadAverage: LoadAverage;
  options: {
    short: boolean; duration: number | null; warmup: number;
    /** slices per server in each equal-rate run; absent in runs from before it was an option */
    rounds?: number;
    /** slices of each saturated window, taken in turn with the other servers' (measureInTurn); absent in runs
     *  from before: each window whole, one server after the other */
    saturatedSlices?: number;
    /** null: each scenario's own (ScenarioFigures.connections) */
    connections: number | null;
    url: string | null; echoUrl: string | null; floorUrl?: string | null; workers: string; node?: string; startFlags?: boolean; serviceDist?: string;
  };
  scenarios: ScenarioFigures[];
  /** absent in runs from before the mixed scenario */
  mixed?: MixedFigures[];
  /** absent in runs from before the equal-rate runs (issue 24) */
  rates?: RateFigures[];
  infoSaturated?: InfoSaturatedFigures[];
  /** absent in runs from before the gRPC scenarios (issue 25) */
  grpc?: GrpcFigures[];
  grpcRates?: GrpcRateFigures[];
}

/** one kernel figure on one thread, as a share of a memory copy of the same bytes in the same run */
interface Throughput {
  /** input read + output written, per call */
  bytes: number;
  medianMs: number;
  gbPerS: number;
  /** a Float32Array.prototype.set of the input's bytes, sampled alternately with the kernel */
  memcpyGbPerS: number;
  fractionOfMemcpy: number;
  checkFailure: string | null;
}

export interface KernelFigures extends Throughput {
  kernel: string;
  /** the JavaScript kernels (src/kernels/*.ts) or the WebAssembly ones (src/kernels/wasm-kernels.ts) */
  impl: 'js' | 'wasm';
  shape: [number, number];
  inDtype: string;
  outDtype: string;
}

export interface PoolFigures {
  op: string;
  shape: [number, number];
  workers: number;
  medianMs: number;
  gbPerS: number;
  /** ÷ the one-worker time of the same op */
  speedup: number;
  checkFailure: string | null;
}

/** a per-channel op (bench-channels.ts) on one thread: the job's phases run inline */
export interface ChannelKernelFigures extends Throughput {
  /** 'batchnorm train', 'batchnorm infer', 'groupnorm G=32' */
  op: string;
  /** 'C first' or 'C last' */
  layout: string;
  /** js: the job with its SIMD choice cleared; wasm: the job as allocate lays it out */
  impl: 'js' | 'wasm';
  shape: number[];
  dtype: string;
}

/** a pool figure of a per-channel op (bench-channels.ts) */
export interface ChannelPoolFigures extends Omit<PoolFigures, 'shape'> {
  /** 'C first' or 'C last' */
  layout: string;
  shape: number[];
}

export interface BenchResults {
  kind: 'bench';
  date: string;
  command: string;
  machine: Machine;
  loadAverage: LoadAverage;
  short: boolean;
  samples: number;
  kernels: KernelFigures[];
  pool: PoolFigures[];
  /** absent in runs from before the per-channel ops */
  channelKernels?: ChannelKernelFigures[];
  channelPool?: ChannelPoolFigures[];
}
