import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import envSchema from 'env-schema';

export interface Config {
  port: number;
  /** the gRPC listener's port (OIP.md "Listener"): 0 picks a free one, null serves no gRPC (`off`) */
  grpcPort: number | null;
  host: string;
  workers: number;
  maxBodyBytes: number;
  maxQueue: number;
  requestTimeoutMs: number;
  apiKeys: string[];
  logLevel: string;
  /** one info line per answered request ('request completed'); false keeps errors and lifecycle lines only */
  accessLog: boolean;
  /** tensors with at most this many elements are normalized on the main thread (SIMD kernels;
   *  the JS kernels, about 8× slower per element, get an eighth of it) */
  inlineMaxElements: number;
  /** a pool task gets at least this many elements, so small tensors are not split thin */
  minTaskElements: number;
  /** longest pause (ms) between two pieces of a request body before a 408 */
  bodyIdleTimeoutMs: number;
  /** after this long (ms) a body still arriving must have come at bodyMinBytesPerSecond on average, else a 408 */
  bodyMinRateGraceMs: number;
  bodyMinBytesPerSecond: number;
  /** a request's headers must be complete this long (ms) after its first byte, else a 408 and the connection closed */
  headersTimeoutMs: number;
  /** the most memory request tensors may hold at once: shared slabs plus bodies still arriving */
  maxTensorMemoryBytes: number;
  /** tests only, never from the environment: honour the X-Test-Fault header */
  faultInjection: boolean;
}

type ReadFile = (path: string) => string;
const readText: ReadFile = (path) => readFileSync(path, 'utf8');

/** a cgroup file as a number; NaN when it is missing (no cgroup, or the other version) or says "max" */
function cgroupNumber(readFile: ReadFile, path: string, field = 0): number {
  try {
    return Number(readFile(path).trim().split(/\s+/)[field]);
  } catch {
    return NaN;
  }
}

/** CPUs this process may use: the cgroup CPU quota (v2, then v1) when one is set, else the cores */
export function cpuQuota(readFile: ReadFile = readText): number {
  const cores = availableParallelism();
  const cpus = (quota: number, period: number) => (quota > 0 && period > 0 ? Math.max(1, Math.min(cores, Math.ceil(quota / period))) : null);
  return cpus(cgroupNumber(readFile, '/sys/fs/cgroup/cpu.max'), cgroupNumber(readFile, '/sys/fs/cgroup/cpu.max', 1))
    ?? cpus(cgroupNumber(readFile, '/sys/fs/cgroup/cpu/cpu.cfs_quota_us'), cgroupNumber(readFile, '/sys/fs/cgroup/cpu/cpu.cfs_period_us'))
    ?? cores;
}

/** the container's memory limit in bytes (cgroup v2 `memory.max`, then v1), or null when none is set */
export function memoryLimit(readFile: ReadFile = readText): number | null {
  for (const path of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    // unlimited: v2 says "max" (NaN), v1 a number near 2^63 (not a safe integer)
    const bytes = cgroupNumber(readFile, path);
    if (Number.isSafeInteger(bytes) && bytes > 0) return bytes;
  }
  return null;
}

/** API.md §7: half the container's memory limit, else 4 GiB (the tensor memory caps it at wasm32's reach) */
export function defaultTensorMemory(limit: number | null = memoryLimit()): number {
  return limit === null ? 4 * 1024 ** 3 : Math.floor(limit / 2);
}

export const defaults: Readonly<Config> = Object.freeze({
  port: 8080,
  grpcPort: 8081, // KServe pairs HTTP 8080 with gRPC 8081
  host: '0.0.0.0',
  workers: cpuQuota(), // a container's CPU quota, not the host's core count
  maxBodyBytes: 64 * 1024 * 1024, // 64 MiB
  maxQueue: 256, // queued pool tasks before 503
  requestTimeoutMs: 30_000, // 30 s
  apiKeys: [],
  logLevel: 'info',
  accessLog: true,
  // measured (scripts/measure-inline-threshold.mjs): a hop to a warm worker costs ~200 µs, the
  // SIMD kernel's work for ~170 Ki float32 elements, the JS kernels' for ~18 Ki
  inlineMaxElements: 128 * 1024,
  minTaskElements: 64 * 1024,
  bodyIdleTimeoutMs: 10_000,
  // as Apache's mod_reqtimeout (body=20,MinRate=500), in a datacenter's terms: 10 s, then 1 KiB/s
  bodyMinRateGraceMs: 10_000,
  bodyMinBytesPerSecond: 1024,
  headersTimeoutMs: 10_000,
  maxTensorMemoryBytes: defaultTensorMemory(), // the rest of the container: heap, sockets, answers
  faultInjection: false,
});

/** every setting's schema, under its option name; the environment variable of each is in ENV_NAMES */
const optionProperties = {
  port: { type: 'integer', minimum: 0, maximum: 65535 },
  grpcPort: { type: ['integer', 'null'], minimum: 0, maximum: 65535 },
  host: { type: 'string', minLength: 1 },
  workers: { type: 'integer', minimum: 1, maximum: 256 },
  maxBodyBytes: { type: 'integer', minimum: 1 },
  maxQueue: { type: 'integer', minimum: 1 },
  requestTimeoutMs: { type: 'integer', minimum: 1 },
  apiKeys: { type: 'array', items: { type: 'string', minLength: 1 } },
  logLevel: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
  accessLog: { type: 'boolean' },
  inlineMaxElements: { type: 'integer', minimum: 0 },
  minTaskElements: { type: 'integer', minimum: 1 },
  bodyIdleTimeoutMs: { type: 'integer', minimum: 1 },
  bodyMinRateGraceMs: { type: 'integer', minimum: 1 },
  bodyMinBytesPerSecond: { type: 'integer', minimum: 0 },
  headersTimeoutMs: { type: 'integer', minimum: 1 },
  maxTensorMemoryBytes: { type: 'integer', minimum: 1024 * 1024 },
  faultInjection: { type: 'boolean' },
} as const satisfies Record<keyof Config, object>;

/** the environment variable of each option; tests-only options have none */
const ENV_NAMES: Readonly<Partial<Record<keyof Config, string>>> = {
  port: 'PORT', grpcPort: 'GRPC_PORT', host: 'HOST', workers: 'WORKERS', maxBodyBytes: 'MAX_BODY_BYTES', maxQueue: 'MAX_QUEUE',
  requestTimeoutMs: 'REQUEST_TIMEOUT_MS', apiKeys: 'API_KEYS', logLevel: 'LOG_LEVEL', accessLog: 'ACCESS_LOG',
  inlineMaxElements: 'INLINE_MAX_ELEMENTS', minTaskElements: 'MIN_TASK_ELEMENTS',
  bodyIdleTimeoutMs: 'BODY_IDLE_TIMEOUT_MS', bodyMinRateGraceMs: 'BODY_MIN_RATE_GRACE_MS', bodyMinBytesPerSecond: 'BODY_MIN_BYTES_PER_S',
  headersTimeoutMs: 'HEADERS_TIMEOUT_MS', maxTensorMemoryBytes: 'MAX_TENSOR_MEMORY_BYTES',
};

/** variables read as text and turned into their option here: API_KEYS is comma-separated, GRPC_PORT a
 *  port or `off` */
const ENV_TEXT: Readonly<Record<string, object>> = {
  apiKeys: { type: 'string' },
  grpcPort: { type: 'string', pattern: '^(off|0|[1-9][0-9]{0,4})$' },
};

/** the same schemas under the variables' names; API_KEYS is comma-separated text there, and
 *  API_KEYS_FILE (a mounted secret) names a file of keys that join it */
const envProperties = {
  ...Object.fromEntries(
    Object.entries(ENV_NAMES).map(([option, name]) => [name, option in ENV_TEXT ? ENV_TEXT[option] : optionProperties[option as keyof Config]]),
  ),
  API_KEYS_FILE: { type: 'string', minLength: 1 },
};

/** GRPC_PORT: `off` (no gRPC), or a port 0-65535 */
function grpcPortOf(text: string): number | null {
  if (text === 'off') return null;
  const port = Number(text);
  if (port > 65535) throw new Error(`GRPC_PORT: ${text} is not a port (0 to 65535, or off)`);
  return port;
}

/** one key a line, blank lines skipped; read once at start-up, so a missing file stops the server */
function keysFromFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`API_KEYS_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line.length > 0);
}

/** reads and validates the environment once at start-up; throws naming the bad variable */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  // env-schema reads process.env unless given data; pass only the variables we know
  const raw = envSchema<Record<string, unknown>>({ schema: { type: 'object', properties: envProperties }, data: { ...env }, dotenv: false });
  const options: Partial<Record<keyof Config, unknown>> = {};
  for (const [option, name] of Object.entries(ENV_NAMES) as [keyof Config, string][]) {
    const value = raw[name];
    if (value === undefined) continue;
    if (option === 'apiKeys') options.apiKeys = String(value).split(',').map((k) => k.trim()).filter((k) => k.length > 0);
    else if (option === 'grpcPort') options.grpcPort = grpcPortOf(String(value));
    else options[option] = value;
  }
  if (raw.API_KEYS_FILE !== undefined) options.apiKeys = [...((options.apiKeys as string[] | undefined) ?? []), ...keysFromFile(String(raw.API_KEYS_FILE))];
  return resolveConfig(options as Partial<Config>);
}

/**
 * fills unset fields from the defaults; what tests and buildApp take. Checked against the same
 * schemas as the environment, with nothing coerced: throws naming the bad option.
 */
export function resolveConfig(partial: Partial<Config> = {}): Readonly<Config> {
  const given = Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined));
  try {
    envSchema({
      schema: { type: 'object', properties: optionProperties },
      data: given,
      env: false, // the options alone, not process.env
      dotenv: false,
      // an object of ajv options is documented (README, "customOptions"); the types know only the function form
      ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } } as never,
    });
  } catch (err) {
    const problems = ((err as { errors?: AjvProblem[] }).errors ?? []).map(describeProblem);
    throw new Error(`buildApp options: ${problems.length > 0 ? problems.join('; ') : (err as Error).message}`);
  }
  const config = { ...defaults, ...given } as Config;
  if (config.grpcPort !== null && config.grpcPort !== 0 && config.grpcPort === config.port) {
    throw new Error(`GRPC_PORT: ${config.grpcPort} is also PORT; give gRPC a port of its own (or 0, or off)`);
  }
  return Object.freeze(config);
}

interface AjvProblem { instancePath: string; message?: string; params: { additionalProperty?: string } }

/** `/workers must be >= 1` → `workers: must be >= 1`; an unknown option is named */
function describeProblem(problem: AjvProblem): string {
  if (problem.params.additionalProperty !== undefined) return `${problem.params.additionalProperty}: unknown option`;
  return `${problem.instancePath.slice(1).replaceAll('/', '.')}: ${problem.message ?? 'is invalid'}`;
}
