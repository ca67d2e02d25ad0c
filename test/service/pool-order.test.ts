// the pool serves its queue in arrival order: under load no task overtakes an older one (Piscina's own
// queue sends a task it could not place back to its tail, so older tasks starved and timed out).
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it, vi } from 'vitest';
import { closeApp, faultGate } from '../helpers/fault-gate.js';
import { buildReadyApp, metricValue } from './helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await closeApp(app);
  app = undefined;
});

const body = (seed: number) => JSON.stringify({ input: { shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => ((i * seed) % 17) - 8) } });

it('tasks queued behind a held one finish in the order they came, and all of them do', async () => {
  // one worker, every request one pool task
  app = await buildReadyApp({ workers: 1, faultInjection: true, inlineMaxElements: 0 });
  const gate = faultGate(app);
  const finished: number[] = [];
  const post = (i: number, headers: Record<string, string> = {}) => app!.inject({
    method: 'POST', url: '/v1/rmsnorm', headers: { 'content-type': 'application/json', ...headers }, payload: body(i + 1),
  }).then((res) => {
    expect(res.statusCode, res.body).toBe(200);
    finished.push(i);
  });
  const held = post(0, { 'x-test-fault': 'hold' });
  await gate.held(1);
  const queued: Promise<void>[] = [];
  for (let i = 1; i <= 40; i++) {
    queued.push(post(i));
    // each is in the queue before the next is sent: arrival order is this loop's
    await vi.waitFor(async () => expect(await metricValue(app!, 'norm_pool_queue_depth')).toBe(i));
  }
  gate.open();
  await Promise.all([held, ...queued]);
  expect(finished).toEqual(Array.from({ length: 41 }, (_, i) => i));
});
