// API.md §5: a full work queue is a 503 with Retry-After, and the server keeps serving.
import { describe, expect, it, vi } from 'vitest';
import { expectError, okBody, postMsgpack, useFreshApp } from '../helpers/http.js';
import { expectClose, reference } from '../helpers/reference.js';
import { randomValues, valuesOf } from '../helpers/tensors.js';

// one worker and a queue of one; every tensor goes to the pool as one task. msgpack bodies: a JSON one
// this long (78 KB) would be parsed on the pool too, ahead of the work in the same queue
const ctx = useFreshApp({ workers: 1, maxQueue: 1, inlineMaxElements: 0, minTaskElements: 1 });
const values = randomValues(501, 64 * 64, 2);
const input = { shape: [64, 64], data: values };

describe('queue full', () => {
  // no task can finish before every injected request has been admitted: results come back
  // from the worker as messages, which wait until the requests' synchronous steps are done
  it('5 concurrent 64x64 requests on 1 worker, maxQueue 1: 2 answered, 3 → 503 with Retry-After', async () => {
    const responses = await Promise.all([0, 1, 2, 3, 4].map(() => postMsgpack(ctx.app, '/v1/layernorm', { input })));
    const ok = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode !== 200);
    expect(ok).toHaveLength(2);
    expect(refused).toHaveLength(3);
    const ref = reference({ op: 'layernorm', dtype: 'float32', shape: [64, 64], values });
    for (const res of ok) expectClose(valuesOf(okBody(res).output), ref.output, 'float32');
    for (const res of refused) {
      expectError(res, 503, 'NORM_ERR_OVERLOADED', 'too many requests in flight; retry later');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
    }
  });

  // a batch submits all of its tasks in one tick: the first runs (or waits for the starting
  // worker), the second waits in the queue, the third finds the queue full
  it('a batch of 3 pool tasks on 1 worker, maxQueue 1 → 503 with Retry-After', async () => {
    const requests = [0, 1, 2].map(() => ({ op: 'rmsnorm', input }));
    const res = await postMsgpack(ctx.app, '/v1/batch', { requests });
    expectError(res, 503, 'NORM_ERR_OVERLOADED', 'the work queue is full; retry later');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('a batch of 2 pool tasks fits (1 running, 1 queued) → 200', async () => {
    const requests = [0, 1].map(() => ({ op: 'rmsnorm', input }));
    const { results } = okBody(await postMsgpack(ctx.app, '/v1/batch', { requests }));
    expect(results).toHaveLength(2);
  });

  it('after 503s the server answers again once the work drains', async () => {
    const responses = await Promise.all([0, 1, 2, 3].map(() => postMsgpack(ctx.app, '/v1/rmsnorm', { input })));
    expect(responses.map((r) => r.statusCode)).toContain(503);
    // what a client honouring Retry-After does: retry until the admitted work has drained
    const res = await vi.waitFor(async () => {
      const again = await postMsgpack(ctx.app, '/v1/rmsnorm', { input });
      expect(again.statusCode).toBe(200);
      return again;
    }, { timeout: 20_000, interval: 10 });
    expectClose(valuesOf(okBody(res).output), reference({ op: 'rmsnorm', dtype: 'float32', shape: [64, 64], values }).output, 'float32');
  });
});
