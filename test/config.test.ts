// settings: the environment and buildApp's options are checked against the same schemas; the
// container's limits are read from its cgroup.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { cpuQuota, defaults, defaultTensorMemory, loadConfig, memoryLimit, resolveConfig } from '../src/config.js';

it('the environment maps to options, API_KEYS split on commas and trimmed', () => {
  const config = loadConfig({ PORT: '9000', WORKERS: '3', API_KEYS: ' a, b ,,c', LOG_LEVEL: 'warn', UNRELATED: 'x' });
  expect(config).toEqual({ ...defaults, port: 9000, workers: 3, apiKeys: ['a', 'b', 'c'], logLevel: 'warn' });
  expect(Object.isFrozen(config)).toBe(true);
});

it('API_KEYS_FILE (a mounted secret): one key a line, blank lines skipped, joining API_KEYS; an unreadable file is named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keys-'));
  try {
    const file = join(dir, 'api-keys');
    writeFileSync(file, 'k1\r\n\n  k2  \nk3\n');
    expect(loadConfig({ API_KEYS_FILE: file }).apiKeys).toEqual(['k1', 'k2', 'k3']);
    expect(loadConfig({ API_KEYS: 'a,b', API_KEYS_FILE: file }).apiKeys).toEqual(['a', 'b', 'k1', 'k2', 'k3']);
    expect(() => loadConfig({ API_KEYS_FILE: join(dir, 'missing') })).toThrow(`API_KEYS_FILE: cannot read ${join(dir, 'missing')} (ENOENT)`);
    expect(() => loadConfig({ API_KEYS_FILE: '' })).toThrow(/API_KEYS_FILE must NOT have fewer than 1 characters/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('GRPC_PORT: 8081 by default, 0 for a free port, off for none; anything else, or PORT\'s own port, is named', () => {
  expect(loadConfig({}).grpcPort).toBe(8081);
  expect(loadConfig({ GRPC_PORT: '9001' }).grpcPort).toBe(9001);
  expect(loadConfig({ GRPC_PORT: '0', PORT: '0' }).grpcPort).toBe(0);
  expect(loadConfig({ GRPC_PORT: 'off' }).grpcPort).toBe(null);
  for (const bad of ['', 'on', '-1', '08081', '8081.0', 'OFF']) expect(() => loadConfig({ GRPC_PORT: bad }), bad).toThrow(/GRPC_PORT must match pattern/);
  expect(() => loadConfig({ GRPC_PORT: '65536' })).toThrow('GRPC_PORT: 65536 is not a port (0 to 65535, or off)');
  expect(() => loadConfig({ GRPC_PORT: '9000', PORT: '9000' })).toThrow('GRPC_PORT: 9000 is also PORT');
  expect(() => resolveConfig({ grpcPort: 8080, port: 8080 })).toThrow('GRPC_PORT: 8080 is also PORT');
});

it('a bad variable is named', () => {
  expect(() => loadConfig({ WORKERS: '0' })).toThrow(/WORKERS must be >= 1/);
  expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be integer/);
  expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be equal to one of the allowed values/);
});

it('options are not coerced, and a bad or unknown one is named', () => {
  expect(() => resolveConfig({ workers: 0 })).toThrow('buildApp options: workers: must be >= 1');
  expect(() => resolveConfig({ port: '8080' as never })).toThrow('buildApp options: port: must be integer');
  expect(() => resolveConfig({ apiKeys: 'k' as never })).toThrow('buildApp options: apiKeys: must be array');
  expect(() => resolveConfig({ workerz: 2 } as never)).toThrow('buildApp options: workerz: unknown option');
  expect(resolveConfig({ workers: 2, port: undefined })).toEqual({ ...defaults, workers: 2 });
});

it('buildApp refuses bad options before it starts a worker', async () => {
  await expect(buildApp({ maxQueue: -1 })).rejects.toThrow('buildApp options: maxQueue: must be >= 1');
});

describe('limits read from the cgroup', () => {
  /** a file system of these files only; any other path is missing */
  const files = (contents: Record<string, string>) => (path: string) => {
    if (!(path in contents)) throw new Error(`ENOENT: ${path}`);
    return contents[path];
  };
  const cores = availableParallelism();

  it('CPUs: v2 cpu.max, then v1 quota/period, else the cores; never more than the cores', () => {
    expect(cpuQuota(files({ '/sys/fs/cgroup/cpu.max': '150000 100000\n' }))).toBe(Math.min(cores, 2));
    expect(cpuQuota(files({ '/sys/fs/cgroup/cpu.max': '50000 100000\n' }))).toBe(1);
    expect(cpuQuota(files({ '/sys/fs/cgroup/cpu.max': 'max 100000\n', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '100000\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' }))).toBe(1);
    expect(cpuQuota(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' }))).toBe(cores);
    expect(cpuQuota(files({ '/sys/fs/cgroup/cpu.max': `${(cores + 3) * 100000} 100000` }))).toBe(cores);
    expect(cpuQuota(files({}))).toBe(cores);
  });

  it('memory: v2 memory.max, then v1 memory.limit_in_bytes; "max" and v1\'s near-2^63 mean none', () => {
    expect(memoryLimit(files({ '/sys/fs/cgroup/memory.max': '536870912\n' }))).toBe(536870912);
    expect(memoryLimit(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).toBeNull();
    expect(memoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '536870912\n' }))).toBe(536870912);
    expect(memoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n' }))).toBeNull();
    expect(memoryLimit(files({}))).toBeNull();
  });

  it('tensor memory defaults to half the container limit, else 4 GiB', () => {
    expect(defaultTensorMemory(536870912)).toBe(268435456);
    expect(defaultTensorMemory(null)).toBe(4 * 1024 ** 3);
  });
});
