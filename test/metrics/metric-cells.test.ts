// the per-request counters and histograms read exactly as prom-client's own would, for the same
// label values and observations: prom-client's Counter and Histogram are the reference.
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { CellCounter, CellHistogram } from '../../src/metric-cells.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const labelValues = fc.tuple(fc.constantFrom('GET', 'POST'), fc.constantFrom('/v1/rmsnorm', '/v2/models/:model/infer', 'unmatched'), fc.constantFrom('200', '400', '503'));
// values on the bounds too: a value equal to a bound counts in that bucket (le)
const seconds = fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(...BUCKETS));

it('a histogram with labels', async () => {
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(labelValues, seconds), { maxLength: 60 }), async (observations) => {
    const mine = new Registry();
    const theirs = new Registry();
    const config = { name: 'http_request_duration_seconds', help: 'latency', labelNames: ['method', 'route', 'status'], buckets: BUCKETS };
    const cells = new CellHistogram({ ...config, registers: [mine] });
    const reference = new Histogram({ ...config, registers: [theirs] });
    for (const [[method, route, status], value] of observations) {
      cells.cell(method, route, status).observe(value);
      reference.observe({ method, route, status }, value);
    }
    expect(await mine.metrics()).toBe(await theirs.metrics());
  }));
});

it('a histogram without labels shows its zeros before any observation, and counts after', async () => {
  const mine = new Registry();
  const theirs = new Registry();
  const cells = new CellHistogram({ name: 'norm_task_run_seconds', help: 'run', buckets: BUCKETS, registers: [mine] });
  const reference = new Histogram({ name: 'norm_task_run_seconds', help: 'run', buckets: BUCKETS, registers: [theirs] });
  expect(await mine.metrics()).toBe(await theirs.metrics());
  for (const v of [0, 0.0005, 0.003, 7, 11]) {
    cells.cell().observe(v);
    reference.observe(v);
  }
  expect(await mine.metrics()).toBe(await theirs.metrics());
});

it('counters with and without labels', async () => {
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('rmsnorm', 'layernorm'), fc.constantFrom('float32', 'bfloat16'), fc.nat(5000)), { maxLength: 40 }), async (adds) => {
    const mine = new Registry();
    const theirs = new Registry();
    const cells = new CellCounter({ name: 'norm_rows_total', help: 'rows', labelNames: ['op', 'dtype'], registers: [mine] });
    const reference = new Counter({ name: 'norm_rows_total', help: 'rows', labelNames: ['op', 'dtype'], registers: [theirs] });
    const plain = new CellCounter({ name: 'plain_total', help: 'no labels', registers: [mine] });
    const plainReference = new Counter({ name: 'plain_total', help: 'no labels', registers: [theirs] });
    for (const [op, dtype, n] of adds) {
      cells.cell(op, dtype).value += n;
      reference.inc({ op, dtype }, n);
      plain.cell().value += n;
      plainReference.inc(n);
    }
    expect(await mine.metrics()).toBe(await theirs.metrics());
  }));
});
