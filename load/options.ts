// npm run load's command line: parsed and checked once, with the defaults in one place.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const HELP = `npm run load -- [options]

  --duration <s>     seconds per measured run (default 4; 19 scenarios × service, echo and floor,
                     rmsnorm/mixed's small requests alone and beside large JSON answers, 6 gRPC
                     scenarios × the service and the gRPC floor, then 8 equal-rate runs × the
                     three, 2 of the service at LOG_LEVEL=info beside it at warn and 5 gRPC
                     ones × the two and /v2 HTTP ≈ 21 min); an equal-rate run takes its
                     servers' windows side by side in 1 s slices, --rounds of them each
  --rounds <n>       slices per server in each equal-rate run (default 4 × duration, 16: a
                     slice's CPU per answer wanders by −10 % to +30 % here, and 16 of them
                     give a row's ratio about ±10 %)
  --warmup <s>       unmeasured seconds before each run (default 0.75; an equal-rate run's at
                     least 3: load/measure.ts, PACED_WARMUP_S)
  --connections <n>  concurrent connections for every scenario (default per scenario:
                     16 small and JSON, 8 medium, bfloat16 and batch, 4 large; mixed: 16
                     small beside 8 large)
  --short            CI mode: a fixed small number of requests per run, 2 connections, no warm-up
  --only <a,b>       only scenarios whose id contains one of these, in that order (e.g. small,rmsnorm/large,mixed);
                     equal-rate runs (after the others) are named like rmsnorm/small@2000 and
                     rmsnorm/small@2000/info ('@' picks them all) and bring the saturated scenario
                     they are judged against; gRPC ones are named like rmsnorm/small-grpc-unary and
                     rmsnorm/small-grpc-stream@2000 ('grpc' picks them all) and bring the /v2 runs
                     they are compared with
  --url <base>       aim at a running deployment instead of spawning the service (no gRPC runs)
  --echo-url <base>  with --url: an echo baseline already running (node dist-load/echo-server.js)
  --floor-url <base> with --url: a transport floor already running (node dist-load/floor-server.js)
  --server-pid <n>   with --url on this machine: the service's PID, for its CPU time
  --api-key <key>    sent as Authorization: Bearer <key>
  --workers <n>      WORKERS for the spawned service (default: the service's own)
  --node <path>      the node binary that runs the spawned servers (default: this one)
  --service-dist <d> the built service to spawn (a dist/ directory, e.g. another commit's build
                     for a before/after A/B; default: this checkout's dist/)
  --no-start-flags   spawn the servers without npm start's V8 flags and glibc tunable
                     (load/processes.ts), to measure what they buy
  --out <dir>        where results.json, RESULTS.md and results.svg go
                     (default load/; with --short, dist-load/short/)
`;

export interface Options {
  duration: number; warmup: number; connections: number | null; short: boolean; only: string[];
  /** slices per server in an equal-rate run (load/interleave.ts); null: roundsFor(duration) */
  rounds: number | null;
  url: string | null; echoUrl: string | null; floorUrl: string | null; serverPid: number | null; apiKey: string | null;
  workers: string | null; node: string; startFlags: boolean; serviceDist: string | null; out: string;
}

/** --short without --duration: each run sends a fixed small number of requests, not timed windows */
export function fixedAmount(o: Pick<Options, 'short' | 'duration'>): boolean {
  return o.short && o.duration === 0;
}

export function options(root: string): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' }, warmup: { type: 'string' }, connections: { type: 'string' }, rounds: { type: 'string' },
      short: { type: 'boolean', default: false }, only: { type: 'string' },
      url: { type: 'string' }, 'echo-url': { type: 'string' }, 'floor-url': { type: 'string' }, 'server-pid': { type: 'string' },
      'api-key': { type: 'string' }, workers: { type: 'string' }, out: { type: 'string' },
      node: { type: 'string' }, 'no-start-flags': { type: 'boolean', default: false }, 'service-dist': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const number = (name: string, value: string | undefined, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name}: ${value} is not a number ≥ ${min}`);
    return n;
  };
  const short = values.short!;
  if (values['echo-url'] !== undefined && values.url === undefined) throw new Error('--echo-url needs --url');
  if (values['floor-url'] !== undefined && values.url === undefined) throw new Error('--floor-url needs --url');
  return {
    short,
    duration: number('duration', values.duration, short ? 0 : 4, 0),
    warmup: number('warmup', values.warmup, short ? 0 : 0.75, 0),
    rounds: values.rounds === undefined ? null : Math.round(number('rounds', values.rounds, 0, 1)),
    connections: values.connections === undefined ? (short ? 2 : null) : number('connections', values.connections, 0, 1),
    only: values.only?.split(',').filter((s) => s.length > 0) ?? [],
    url: values.url?.replace(/\/+$/, '') ?? null,
    echoUrl: values['echo-url']?.replace(/\/+$/, '') ?? null,
    floorUrl: values['floor-url']?.replace(/\/+$/, '') ?? null,
    serverPid: values['server-pid'] === undefined ? null : number('server-pid', values['server-pid'], 0, 1),
    apiKey: values['api-key'] ?? null,
    workers: values.workers ?? null,
    node: values.node === undefined ? process.execPath : resolve(values.node),
    startFlags: !values['no-start-flags'],
    serviceDist: values['service-dist'] === undefined ? null : resolve(values['service-dist']),
    out: resolve(values.out ?? (short ? join(root, 'dist-load', 'short') : join(root, 'load'))),
  };
}
