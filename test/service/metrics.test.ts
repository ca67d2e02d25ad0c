// GET /metrics after known traffic: counters and histograms show exactly that traffic.
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildReadyApp, msgpackBody, parseMetrics, sampleValue, type Sample } from './helpers.js';

const JSON_TYPE = { 'content-type': 'application/json' };

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildReadyApp({ workers: 1 });
});
afterEach(async () => {
  await app.close();
});

async function scrape(): Promise<Sample[]> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(res.body);
}

const series = (samples: Sample[], name: string): Record<string, string | number>[] =>
  samples.filter((s) => s.name === name).map((s) => ({ ...s.labels, value: s.value }));

it('after 3 rmsnorm float32, 2 layernorm float64 and 1 bad request, the counters show exactly that', async () => {
  const rms = JSON.stringify({ input: { dtype: 'float32', shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => i - 10) } });
  for (let i = 0; i < 3; i++) {
    const res = await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: JSON_TYPE, payload: rms });
    expect(res.statusCode, res.body).toBe(200);
  }
  const ln = msgpackBody(Float64Array.from({ length: 15 }, (_, i) => i * 0.5), [3, 5]);
  for (let i = 0; i < 2; i++) {
    expect((await app.inject({ method: 'POST', url: '/v1/layernorm', headers: { 'content-type': 'application/msgpack' }, payload: ln })).statusCode).toBe(200);
  }
  const bad = JSON.stringify({ input: { shape: [4, 8], data: [] } });
  expect((await app.inject({ method: 'POST', url: '/v1/rmsnorm', headers: JSON_TYPE, payload: bad })).statusCode).toBe(400);

  const samples = await scrape();
  const post = (route: string, status: string) => ({ method: 'POST', route, status });

  // the scrape itself is counted once it is answered, so it is not in its own output
  expect(series(samples, 'http_requests_total')).toEqual(expect.arrayContaining([
    { ...post('/v1/rmsnorm', '200'), value: 3 },
    { ...post('/v1/layernorm', '200'), value: 2 },
    { ...post('/v1/rmsnorm', '400'), value: 1 },
  ]));
  expect(series(samples, 'http_requests_total')).toHaveLength(3);

  for (const [labels, count] of [[post('/v1/rmsnorm', '200'), 3], [post('/v1/layernorm', '200'), 2], [post('/v1/rmsnorm', '400'), 1]] as const) {
    expect(sampleValue(samples, 'http_request_duration_seconds_count', labels), JSON.stringify(labels)).toBe(count);
    expect(sampleValue(samples, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(count);
    expect(sampleValue(samples, 'http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    // buckets are cumulative
    const buckets = samples.filter((s) => s.name === 'http_request_duration_seconds_bucket'
      && s.labels.route === labels.route && s.labels.status === labels.status).map((s) => s.value);
    expect(buckets.length).toBeGreaterThan(5);
    expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
  }
  expect(series(samples, 'http_request_duration_seconds_count')).toHaveLength(3);

  // rows and input bytes by op and input dtype: 3 × 4 rows × 8 float32, 2 × 3 rows × 5 float64; the 400 adds none
  expect(series(samples, 'norm_rows_total')).toEqual(expect.arrayContaining([
    { op: 'rmsnorm', dtype: 'float32', value: 12 },
    { op: 'layernorm', dtype: 'float64', value: 6 },
  ]));
  expect(series(samples, 'norm_rows_total')).toHaveLength(2);
  expect(series(samples, 'norm_bytes_total')).toEqual(expect.arrayContaining([
    { op: 'rmsnorm', dtype: 'float32', value: 3 * 32 * 4 },
    { op: 'layernorm', dtype: 'float64', value: 2 * 15 * 8 },
  ]));
  expect(series(samples, 'norm_bytes_total')).toHaveLength(2);

  // five tasks, all small enough to run inline, all ok
  expect(sampleValue(samples, 'norm_tasks_total', { outcome: 'ok' })).toBe(5);
  expect(series(samples, 'norm_tasks_total').filter((s) => s.outcome !== 'ok').every((s) => s.value === 0)).toBe(true);
  expect(sampleValue(samples, 'norm_task_run_seconds_count')).toBe(5);
  expect(sampleValue(samples, 'norm_task_wait_seconds_count')).toBe(5);
  expect(sampleValue(samples, 'norm_worker_restarts_total')).toBe(0);

  // the next scrape counts the first one
  const again = await scrape();
  expect(sampleValue(again, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);
  expect(sampleValue(again, 'http_requests_total', post('/v1/rmsnorm', '200'))).toBe(3);
});

it('batchnorm and groupnorm count a channel and a group as one row each, and every element', async () => {
  const post = async (url: string, body: unknown) => {
    const res = await app.inject({ method: 'POST', url, headers: JSON_TYPE, payload: JSON.stringify(body) });
    expect(res.statusCode, res.body).toBe(200);
  };
  const values = (count: number) => Array.from({ length: count }, (_, i) => (i * 7) % 11);
  // [4, 3, 5]: 3 channels of 20 values; [2, 4, 3] in 2 groups: 4 rows of 6 (float64: 8 bytes each)
  await post('/v1/batchnorm', { input: { shape: [4, 3, 5], data: values(60) }, training: true });
  await post('/v1/groupnorm', { input: { dtype: 'float64', shape: [2, 4, 3], data: values(24) }, num_groups: 2 });
  const samples = await scrape();
  expect(series(samples, 'norm_rows_total')).toEqual([
    { op: 'batchnorm', dtype: 'float32', value: 3 },
    { op: 'groupnorm', dtype: 'float64', value: 4 },
  ]);
  expect(series(samples, 'norm_elements_total')).toEqual([
    { op: 'batchnorm', dtype: 'float32', value: 60 },
    { op: 'groupnorm', dtype: 'float64', value: 24 },
  ]);
  expect(series(samples, 'norm_bytes_total')).toEqual([
    { op: 'batchnorm', dtype: 'float32', value: 240 },
    { op: 'groupnorm', dtype: 'float64', value: 192 },
  ]);
});

it('pool gauges and the default process metrics are present', async () => {
  const samples = await scrape();
  expect(sampleValue(samples, 'norm_pool_queue_depth')).toBe(0);
  const utilization = sampleValue(samples, 'norm_pool_utilization');
  expect(utilization).toBeGreaterThanOrEqual(0);
  expect(utilization).toBeLessThanOrEqual(1);
  expect(sampleValue(samples, 'norm_pool_workers')).toBe(1);
  for (const name of [
    'process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds',
    'nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes',
    'nodejs_version_info',
    'norm_worker_restarts_total', 'norm_task_wait_seconds_count', 'norm_task_run_seconds_count',
  ]) {
    expect(samples.some((s) => s.name === name), name).toBe(true);
  }
  // a fresh app has answered nothing yet
  expect(series(samples, 'http_requests_total')).toEqual([]);
});
