// a request's cancellation on a fake clock: the deadline is read when asked, and a timer runs only
// while a listener waits for it.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Cancellation } from '../../src/engine/cancellation.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

it('arms no timer until a listener waits, and fires it at the deadline', () => {
  const c = new Cancellation(1000);
  expect(c.cancelled).toBe(false);
  expect(vi.getTimerCount()).toBe(0);
  const listener = vi.fn();
  c.onCancel(listener);
  expect(vi.getTimerCount()).toBe(1);
  vi.advanceTimersByTime(999);
  expect(listener).not.toHaveBeenCalled();
  expect(c.cancelled).toBe(false);
  vi.advanceTimersByTime(1);
  expect(listener).toHaveBeenCalledTimes(1);
  expect(c.cancelled).toBe(true);
  expect(vi.getTimerCount()).toBe(0);
});

it('is cancelled once past its deadline with nobody listening, and a later listener is called at once', () => {
  const c = new Cancellation(50);
  vi.advanceTimersByTime(50);
  expect(c.cancelled).toBe(true);
  const listener = vi.fn();
  c.onCancel(listener);
  expect(listener).toHaveBeenCalledTimes(1);
  expect(vi.getTimerCount()).toBe(0);
});

it('removing the listener disarms the timer; the deadline still holds', () => {
  const c = new Cancellation(100);
  const listener = vi.fn();
  c.onCancel(listener);
  c.onCancel(null);
  expect(vi.getTimerCount()).toBe(0);
  vi.advanceTimersByTime(100);
  expect(listener).not.toHaveBeenCalled();
  expect(c.cancelled).toBe(true);
});

it('shortenTo brings an armed deadline forward, never back', () => {
  const c = new Cancellation(1000);
  const listener = vi.fn();
  c.onCancel(listener);
  vi.advanceTimersByTime(10);
  c.shortenTo(2000); // later: ignored
  c.shortenTo(100);
  vi.advanceTimersByTime(89);
  expect(listener).not.toHaveBeenCalled();
  vi.advanceTimersByTime(1);
  expect(listener).toHaveBeenCalledTimes(1);
});

it('shortenTo with nobody listening moves the deadline read from the clock', () => {
  const c = new Cancellation(1000);
  c.shortenTo(20);
  vi.advanceTimersByTime(19);
  expect(c.cancelled).toBe(false);
  vi.advanceTimersByTime(1);
  expect(c.cancelled).toBe(true);
});

it('cancel() calls the listener once and dispose() after an answer leaves nothing armed', () => {
  const c = new Cancellation(1000);
  const listener = vi.fn();
  c.onCancel(listener);
  c.cancel();
  c.cancel();
  expect(listener).toHaveBeenCalledTimes(1);
  expect(vi.getTimerCount()).toBe(0);
  const d = new Cancellation(1000);
  d.onCancel(vi.fn());
  d.dispose();
  expect(vi.getTimerCount()).toBe(0);
});
