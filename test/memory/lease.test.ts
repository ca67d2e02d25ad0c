// a request's lease (src/memory/lease.ts): its slabs go back together; while its tasks may still touch
// them, only once they have settled; and a slab added after the lease ended (work that went on after
// its client left) is given back too, never kept for ever.
import { expect, it } from 'vitest';
import { Lease } from '../../src/memory/lease.js';
import { createTensorMemory } from '../../src/memory/tensor-memory.js';

const MiB = 1024 * 1024;

it('release gives every held slab back at once when no task holds them', () => {
  const slabs = createTensorMemory(8 * MiB);
  const lease = new Lease(slabs);
  lease.add(slabs.acquire(1000));
  lease.add(slabs.acquire(5000));
  expect(slabs.inUseBytes).toBeGreaterThan(0);
  lease.release();
  expect(slabs.inUseBytes).toBe(0);
});

it('with tasks pending, release waits for them to settle, whether they succeed or fail', async () => {
  const slabs = createTensorMemory(8 * MiB);
  const lease = new Lease(slabs);
  lease.add(slabs.acquire(1000));
  let settle!: () => void;
  lease.holdUntil(new Promise<void>((resolve) => (settle = resolve)));
  let failLater!: () => void;
  lease.holdUntil(new Promise<void>((resolve) => (failLater = resolve)));
  lease.release();
  const held = slabs.inUseBytes;
  expect(held).toBeGreaterThan(0);
  settle();
  await Promise.resolve();
  await Promise.resolve();
  expect(slabs.inUseBytes).toBe(held); // one task still pending
  failLater();
  await new Promise((resolve) => setImmediate(resolve));
  expect(slabs.inUseBytes).toBe(0);
});

it('a slab added after the lease ended goes back (after its pending tasks, if any)', async () => {
  const slabs = createTensorMemory(8 * MiB);
  const lease = new Lease(slabs);
  lease.release();
  lease.add(slabs.acquire(4096));
  expect(slabs.inUseBytes).toBe(0);

  const busy = new Lease(slabs);
  let settle!: () => void;
  busy.holdUntil(new Promise<void>((resolve) => (settle = resolve)));
  busy.release();
  busy.add(slabs.acquire(4096));
  expect(slabs.inUseBytes).toBeGreaterThan(0);
  settle();
  await new Promise((resolve) => setImmediate(resolve));
  expect(slabs.inUseBytes).toBe(0);
});
