import { describe, expect, it } from 'vitest';
import { MAX_PENDING_WRITES, PendingWrites } from '../src/pending.js';
import { eventually } from './support.js';

/** A `send` whose replies the test controls: each call waits until answered or failed. */
function fakeRedis() {
  const calls: { command: readonly string[]; answer: () => void; fail: () => void }[] = [];
  const send = (command: readonly string[]) =>
    new Promise<unknown>((resolve, reject) => {
      calls.push({ command, answer: () => resolve(1), fail: () => reject(new Error('down')) });
    });
  return { calls, send };
}

describe('PendingWrites', () => {
  it('keeps one round in flight: a stalled Redis gets each write once, however often it is nudged', async () => {
    const redis = fakeRedis();
    const pending = new PendingWrites(redis.send, Date.now);
    pending.add('a', ['EVAL', 'a'], Date.now() + 60_000);
    pending.add('b', ['EVAL', 'b'], Date.now() + 60_000);
    for (let i = 0; i < 10; i++) pending.nudge();
    expect(redis.calls.map((c) => c.command[1])).toEqual(['a']);
    // Redis answers: the write added meanwhile goes at once.
    redis.calls[0]?.answer();
    await eventually(async () => redis.calls.length === 2, 1000);
    expect(redis.calls[1]?.command[1]).toBe('b');
    redis.calls[1]?.answer();
    await eventually(async () => pending.size === 0, 1000);
    expect(pending.size).toBe(0);
    pending.close();
  });

  it('retries by itself on a timer, with backoff, until Redis answers', async () => {
    const redis = fakeRedis();
    const pending = new PendingWrites(redis.send, Date.now);
    pending.add('a', ['EVAL', 'a'], Date.now() + 60_000);
    redis.calls[0]?.fail();
    // No nudge from outside: the timer sends it again.
    expect(await eventually(async () => redis.calls.length === 2, 2000)).toBe(true);
    redis.calls[1]?.fail();
    expect(await eventually(async () => redis.calls.length === 3, 2000)).toBe(true);
    redis.calls[2]?.answer();
    expect(await eventually(async () => pending.size === 0, 1000)).toBe(true);
    pending.close();
  });

  it('drops writes whose key has expired in Redis anyway, and stops on close', async () => {
    let now = 1_000;
    const redis = fakeRedis();
    const pending = new PendingWrites(redis.send, () => now);
    pending.add('a', ['EVAL', 'a'], 2_000);
    redis.calls[0]?.fail();
    now = 2_000;
    await eventually(async () => pending.size === 0, 2000);
    expect(pending.size).toBe(0);
    expect(redis.calls.length).toBe(1);
    pending.add('b', ['EVAL', 'b'], 60_000);
    redis.calls[1]?.fail();
    pending.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(redis.calls.length).toBe(2); // closed: no retry
  });

  it(`holds at most ${MAX_PENDING_WRITES} writes, dropping the oldest`, () => {
    const pending = new PendingWrites(() => new Promise(() => {}), Date.now);
    for (let i = 0; i < MAX_PENDING_WRITES + 5; i++)
      pending.add(`w${i}`, ['EVAL', String(i)], Date.now() + 60_000);
    expect(pending.size).toBe(MAX_PENDING_WRITES);
    pending.close();
  });
});
