// the tensor memory's one budget: slabs and held body bytes together never exceed the limit, a refusal is
// the 503 memoryExhausted, and memory given back serves any size again.
import { describe, expect, it } from 'vitest';
import { createTensorMemory } from '../../src/memory/tensor-memory.js';

const MiB = 1024 * 1024;

describe('createTensorMemory', () => {
  it('refuses past the budget with the coded 503, and serves again once memory is back', () => {
    const slabs = createTensorMemory(8 * MiB);
    const a = slabs.acquire(4 * MiB);
    const b = slabs.acquire(4 * MiB);
    expect(slabs.inUseBytes).toBe(8 * MiB);
    expect(() => slabs.acquire(1)).toThrow(expect.objectContaining({ code: 'NORM_ERR_OVERLOADED', statusCode: 503 }));
    slabs.release(a);
    slabs.release(b);
    const whole = slabs.acquire(8 * MiB);
    expect(whole.size).toBe(8 * MiB);
    expect(new Uint8Array(whole.memory, whole.offset, whole.size).length).toBe(8 * MiB); // the memory grew to cover it
    slabs.release(whole);
    expect(slabs.inUseBytes).toBe(0);
  });

  it('grows a slab in place when the memory after it is free, else moves it keeping its bytes', () => {
    const slabs = createTensorMemory(8 * MiB);
    const a = slabs.acquire(64 * 1024);
    new Uint8Array(a.memory, a.offset, 3).set([1, 2, 3]);
    const inPlace = slabs.grow(a, 1 * MiB, 3);
    expect(inPlace.offset).toBe(a.offset);
    const blocker = slabs.acquire(64 * 1024); // right after it now
    const moved = slabs.grow(inPlace, 2 * MiB, 3);
    expect(moved.offset).not.toBe(a.offset);
    expect([...new Uint8Array(moved.memory, moved.offset, 3)]).toEqual([1, 2, 3]);
    expect(slabs.inUseBytes).toBe(2 * MiB + 64 * 1024);
    expect(() => slabs.grow(moved, 16 * MiB, 3)).toThrow(expect.objectContaining({ statusCode: 503 }));
    expect(slabs.inUseBytes).toBe(2 * MiB + 64 * 1024); // the failed grow left it as it was
    slabs.release(moved);
    slabs.release(blocker);
    expect(slabs.inUseBytes).toBe(0);
  });

  it('hands out exact sizes, not powers of two: a 16 MiB body takes 16 MiB', () => {
    const slabs = createTensorMemory(64 * MiB);
    const slab = slabs.acquire(16 * MiB + 10);
    expect(slab.size).toBe(16 * MiB + 64);
    slabs.release(slab);
  });
});
