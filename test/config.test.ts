// settings: the environment and buildApp's options are checked against the same schemas.
import { expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { defaults, loadConfig, resolveConfig } from '../src/config.js';

it('the environment maps to options, API_KEYS split on commas and trimmed', () => {
  const config = loadConfig({ PORT: '9000', WORKERS: '3', API_KEYS: ' a, b ,,c', LOG_LEVEL: 'warn', UNRELATED: 'x' });
  expect(config).toEqual({ ...defaults, port: 9000, workers: 3, apiKeys: ['a', 'b', 'c'], logLevel: 'warn' });
  expect(Object.isFrozen(config)).toBe(true);
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
