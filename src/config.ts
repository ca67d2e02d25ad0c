import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import envSchema from 'env-schema';

export interface Config {
  port: number;
  host: string;
  workers: number;
  maxBodyBytes: number;
  maxQueue: number;
  requestTimeoutMs: number;
  apiKeys: string[];
  logLevel: string;
  /** tensors with at most this many elements are normalized on the main thread (SIMD kernels;
   *  the JS kernels, about 8× slower per element, get an eighth of it) */
  inlineMaxElements: number;
  /** a pool task gets at least this many elements, so small tensors are not split thin */
  minTaskElements: number;
  /** mean event-loop delay (ms) beyond which /v1 requests get 503; 0 turns the check off */
  maxEventLoopDelayMs: number;
  /** tests only, never from the environment: honour the X-Test-Fault header */
  faultInjection: boolean;
}

/** CPUs this process may use: the cgroup CPU quota (v2, then v1) when one is set, else the cores */
export function cpuQuota(readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): number {
  const cores = availableParallelism();
  const attempt = (read: () => [number, number] | null): number | null => {
    try {
      const pair = read();
      return pair && pair[0] > 0 && pair[1] > 0 ? Math.max(1, Math.min(cores, Math.ceil(pair[0] / pair[1]))) : null;
    } catch {
      return null;
    }
  };
  const v2 = attempt(() => {
    const [quota, period] = readFile('/sys/fs/cgroup/cpu.max').trim().split(/\s+/);
    return quota === 'max' ? null : [Number(quota), Number(period)];
  });
  const v1 = () => attempt(() => [
    Number(readFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')),
    Number(readFile('/sys/fs/cgroup/cpu/cpu.cfs_period_us')),
  ]);
  return v2 ?? v1() ?? cores;
}

export const defaults: Readonly<Config> = Object.freeze({
  port: 8080,
  host: '0.0.0.0',
  workers: cpuQuota(), // a container's CPU quota, not the host's core count
  maxBodyBytes: 64 * 1024 * 1024, // 64 MiB
  maxQueue: 256, // queued pool tasks before 503
  requestTimeoutMs: 30_000, // 30 s
  apiKeys: [],
  logLevel: 'info',
  // measured (scripts/measure-inline-threshold.mjs): a hop to a warm worker costs ~200 µs, the
  // SIMD kernel's work for ~170 Ki float32 elements, the JS kernels' for ~18 Ki
  inlineMaxElements: 128 * 1024,
  minTaskElements: 64 * 1024,
  maxEventLoopDelayMs: 1000, // a main thread a second late is not keeping up
  faultInjection: false,
});

const envSchemaDefinition = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    HOST: { type: 'string', minLength: 1 },
    WORKERS: { type: 'integer', minimum: 1, maximum: 256 },
    MAX_BODY_BYTES: { type: 'integer', minimum: 1 },
    MAX_QUEUE: { type: 'integer', minimum: 1 },
    REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 1 },
    API_KEYS: { type: 'string' },
    LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    INLINE_MAX_ELEMENTS: { type: 'integer', minimum: 0 },
    MIN_TASK_ELEMENTS: { type: 'integer', minimum: 1 },
    MAX_EVENT_LOOP_DELAY_MS: { type: 'integer', minimum: 0 },
  },
} as const;

interface RawEnv {
  PORT?: number; HOST?: string; WORKERS?: number; MAX_BODY_BYTES?: number; MAX_QUEUE?: number;
  REQUEST_TIMEOUT_MS?: number; API_KEYS?: string; LOG_LEVEL?: string;
  INLINE_MAX_ELEMENTS?: number; MIN_TASK_ELEMENTS?: number; MAX_EVENT_LOOP_DELAY_MS?: number;
}

/** reads and validates the environment once at start-up; throws naming the bad variable */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  // env-schema reads process.env unless given data; pass only the variables we know
  const raw = envSchema<RawEnv>({ schema: envSchemaDefinition, data: { ...env }, dotenv: false });
  return resolveConfig({
    port: raw.PORT, host: raw.HOST, workers: raw.WORKERS, maxBodyBytes: raw.MAX_BODY_BYTES,
    maxQueue: raw.MAX_QUEUE, requestTimeoutMs: raw.REQUEST_TIMEOUT_MS,
    apiKeys: raw.API_KEYS?.split(',').map((k) => k.trim()).filter((k) => k.length > 0),
    logLevel: raw.LOG_LEVEL, inlineMaxElements: raw.INLINE_MAX_ELEMENTS, minTaskElements: raw.MIN_TASK_ELEMENTS,
    maxEventLoopDelayMs: raw.MAX_EVENT_LOOP_DELAY_MS,
  });
}

/** fills unset fields from the defaults; what tests and buildApp take */
export function resolveConfig(partial: Partial<Config> = {}): Readonly<Config> {
  const merged: Config = { ...defaults };
  for (const [key, value] of Object.entries(partial) as [keyof Config, never][]) {
    if (value !== undefined) merged[key] = value;
  }
  return Object.freeze(merged);
}
