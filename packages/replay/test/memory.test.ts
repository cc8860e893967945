import { describe, expect, it } from 'vitest';
import { type Json, MemoryReplayStore, type OnceRequest, type OnceResult } from '../src/index.js';

const T0 = 1_800_000_000_000;

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A clock the test moves by hand, in milliseconds. */
function clock(startMs = T0) {
  const c = { ms: startMs, now: () => c.ms };
  return c;
}

function onceRequest(overrides: Partial<OnceRequest> = {}): OnceRequest {
  return {
    nonce: 'nonce-1',
    requestDigest: 'sha256:answer-a',
    expiresAt: T0 + 60_000,
    ...overrides,
  };
}

/** An action that counts its runs and returns the given outcome. */
function counted<T extends Json>(outcome: T) {
  const calls = { count: 0 };
  const action = async (): Promise<T> => {
    calls.count++;
    return outcome;
  };
  return { calls, action };
}

describe('MemoryReplayStore.once', () => {
  it('performs the first call and returns its outcome', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const { calls, action } = counted({ deleted: 'note-1', ok: true });
    const result = await store.once(onceRequest(), action);
    expect(result).toEqual({ status: 'performed', outcome: { deleted: 'note-1', ok: true } });
    expect(calls.count).toBe(1);
    expect(store.size).toBe(1);
  });

  it('replays an identical re-issue with an equal outcome and does not run the action again', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const first = counted({ deleted: 'note-1', list: [1, 'two', null] });
    const performed = await store.once(onceRequest(), first.action);
    const again = counted({ deleted: 'SOMETHING ELSE', list: [] });
    const replayed = await store.once(onceRequest(), again.action);
    expect(replayed).toEqual({
      status: 'replayed',
      outcome: { deleted: 'note-1', list: [1, 'two', null] },
    });
    expect(performed.status).toBe('performed');
    expect(again.calls.count).toBe(0);
    const third = await store.once(onceRequest(), again.action);
    expect(third.status).toBe('replayed');
    expect(again.calls.count).toBe(0);
    expect(first.calls.count).toBe(1);
  });

  it('replays scalar and null outcomes too', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    for (const [i, outcome] of ([null, 0, false, '', [], 'done'] as Json[]).entries()) {
      const c = onceRequest({ nonce: `n-${i}` });
      expect(await store.once(c, async () => outcome)).toEqual({ status: 'performed', outcome });
      const again = counted('other');
      expect(await store.once(c, again.action)).toEqual({ status: 'replayed', outcome });
      expect(again.calls.count).toBe(0);
    }
  });

  it('replays text results and near misses of their shape exactly as they were returned', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const text = (t: string, rest: Record<string, Json> = {}): Json => ({
      resultType: 'complete',
      content: [{ type: 'text', text: t }],
      isError: false,
      ...rest,
    });
    const outcomes: Json[] = [
      text('Deleted note-1.'),
      text(''),
      text('"}],"isError":false}'),
      text('x', { structuredContent: { id: 1 } }),
      { ...(text('x') as object), isError: true },
      {
        resultType: 'complete',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        isError: false,
      },
      '{"resultType":"complete","content":[{"type":"text","text":}],"isError":false}',
    ];
    for (const [i, outcome] of outcomes.entries()) {
      const request = onceRequest({ nonce: `n-${i}` });
      await store.once(request, async () => outcome);
      expect(await store.once(request, counted('other').action)).toEqual({
        status: 'replayed',
        outcome,
      });
    }
  });

  it('tells a sha256: digest from another digest with the same characters', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const pairs: [claimed: string, presented: string][] = [
      ['sha256:abc', '#abc'],
      ['#abc', 'sha256:abc'],
      ['sha256:abc', '=sha256:abc'],
      ['=abc', 'abc'],
      ['sha256:abc', 'abc'],
    ];
    for (const [i, [claimed, presented]] of pairs.entries()) {
      const request = onceRequest({ nonce: `d-${i}`, requestDigest: claimed });
      await store.once(request, async () => 'done');
      const other = counted('other');
      expect(await store.once({ ...request, requestDigest: presented }, other.action)).toEqual({
        status: 'refused',
        reason: 'used',
      });
      expect(await store.once(request, other.action)).toEqual({
        status: 'replayed',
        outcome: 'done',
      });
      expect(other.calls.count).toBe(0);
    }
  });

  it('refuses a different requestDigest on a used nonce as used, without running the action', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    await store.once(onceRequest(), counted('first').action);
    const other = counted('second');
    const result = await store.once(
      onceRequest({ requestDigest: 'sha256:answer-b' }),
      other.action,
    );
    expect(result).toEqual({ status: 'refused', reason: 'used' });
    expect(other.calls.count).toBe(0);
    // The original request still replays.
    expect(await store.once(onceRequest(), other.action)).toEqual({
      status: 'replayed',
      outcome: 'first',
    });
  });

  it('refuses identical calls while the first is running as in_progress, then replays after it resolves', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const gate = deferred<Json>();
    let runs = 0;
    const firstPromise = store.once(onceRequest(), () => {
      runs++;
      return gate.promise;
    });
    const second = counted('second');
    expect(await store.once(onceRequest(), second.action)).toEqual({
      status: 'refused',
      reason: 'in_progress',
    });
    // A different answer on the same nonce while it runs is `used`, not `in_progress`.
    expect(await store.once(onceRequest({ requestDigest: 'sha256:other' }), second.action)).toEqual(
      {
        status: 'refused',
        reason: 'used',
      },
    );
    expect(second.calls.count).toBe(0);

    gate.resolve({ deleted: 'note-1' });
    expect(await firstPromise).toEqual({ status: 'performed', outcome: { deleted: 'note-1' } });
    expect(await store.once(onceRequest(), second.action)).toEqual({
      status: 'replayed',
      outcome: { deleted: 'note-1' },
    });
    expect(second.calls.count).toBe(0);
    expect(runs).toBe(1);
  });

  it('runs the action exactly once for 50 concurrent calls on one nonce', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const gate = deferred<void>();
    let runs = 0;
    const action = async (): Promise<Json> => {
      runs++;
      await gate.promise;
      return { run: runs };
    };
    const pending = Array.from({ length: 50 }, () => store.once(onceRequest(), action));
    gate.resolve();
    const results = await Promise.all(pending);
    expect(runs).toBe(1);
    const performed = results.filter((r) => r.status === 'performed');
    const refused = results.filter((r) => r.status === 'refused');
    expect(performed).toEqual([{ status: 'performed', outcome: { run: 1 } }]);
    expect(refused).toHaveLength(49);
    for (const r of refused) expect(r).toEqual({ status: 'refused', reason: 'in_progress' });
  });

  it('runs the action exactly once for 50 concurrent calls on one nonce with an action that never awaits', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const { calls, action } = counted('done');
    const results = await Promise.all(
      Array.from({ length: 50 }, () => store.once(onceRequest(), action)),
    );
    expect(calls.count).toBe(1);
    expect(results.filter((r) => r.status === 'performed')).toHaveLength(1);
    expect(
      results.filter((r) => r.status !== 'performed').every((r) => r.status === 'refused'),
    ).toBe(true);
  });

  it('keeps different nonces independent', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const a = await store.once(onceRequest({ nonce: 'a' }), async () => 'A');
    const b = await store.once(onceRequest({ nonce: 'b' }), async () => 'B');
    expect([a, b]).toEqual([
      { status: 'performed', outcome: 'A' },
      { status: 'performed', outcome: 'B' },
    ]);
    expect(store.size).toBe(2);
  });

  it('releases the claim when the action throws, rethrows the error, and lets a later call perform', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const boom = new Error('database down');
    const gate = deferred<Json>();
    const failing = store.once(onceRequest(), () => gate.promise);
    // While the failing attempt runs, the nonce is held.
    expect(await store.once(onceRequest(), async () => 'x')).toEqual({
      status: 'refused',
      reason: 'in_progress',
    });
    gate.reject(boom);
    await expect(failing).rejects.toBe(boom);
    expect(store.size).toBe(0);

    const retry = counted('deleted');
    expect(await store.once(onceRequest(), retry.action)).toEqual({
      status: 'performed',
      outcome: 'deleted',
    });
    expect(retry.calls.count).toBe(1);
  });

  it('releases the claim for a different request after a throw too', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    await expect(
      store.once(onceRequest(), async () => {
        throw new TypeError('bad');
      }),
    ).rejects.toThrow(TypeError);
    const other = counted('other answer');
    expect(
      await store.once(onceRequest({ requestDigest: 'sha256:answer-b' }), other.action),
    ).toEqual({
      status: 'performed',
      outcome: 'other answer',
    });
  });

  it('releases the claim when the action throws synchronously', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const action = (() => {
      throw new Error('sync');
    }) as unknown as () => Promise<Json>;
    await expect(store.once(onceRequest(), action)).rejects.toThrow('sync');
    expect(await store.once(onceRequest(), async () => 1)).toEqual({
      status: 'performed',
      outcome: 1,
    });
  });

  it('forgets an entry once now reaches expiresAt', async () => {
    const c = clock();
    const store = new MemoryReplayStore({ now: c.now });
    const expiresAt = T0 + 5_000;
    await store.once(onceRequest({ expiresAt }), async () => 'first');

    c.ms = expiresAt - 1;
    expect(await store.once(onceRequest({ expiresAt }), async () => 'x')).toEqual({
      status: 'replayed',
      outcome: 'first',
    });
    expect(
      await store.once(onceRequest({ expiresAt, requestDigest: 'sha256:b' }), async () => 'x'),
    ).toEqual({
      status: 'refused',
      reason: 'used',
    });

    c.ms = expiresAt;
    const again = counted('second');
    expect(await store.once(onceRequest({ expiresAt: expiresAt + 5_000 }), again.action)).toEqual({
      status: 'performed',
      outcome: 'second',
    });
    expect(again.calls.count).toBe(1);
  });

  it('lets a different request claim an expired nonce', async () => {
    const c = clock();
    const store = new MemoryReplayStore({ now: c.now });
    await store.once(onceRequest({ expiresAt: T0 + 1_000 }), async () => 'first');
    c.ms = T0 + 1_001;
    expect(
      await store.once(
        onceRequest({ requestDigest: 'sha256:b', expiresAt: T0 + 9_000 }),
        async () => 'b',
      ),
    ).toEqual({ status: 'performed', outcome: 'b' });
  });

  it('never lets a claim expire while its action is still running', async () => {
    const c = clock();
    const store = new MemoryReplayStore({ now: c.now });
    const gate = deferred<Json>();
    let runs = 0;
    const first = store.once(onceRequest({ expiresAt: T0 + 1_000 }), () => {
      runs++;
      return gate.promise;
    });
    c.ms = T0 + 5_000; // past expiresAt, the action has not finished
    store.sweep();
    expect(store.size).toBe(1);
    const second = counted('second');
    expect(await store.once(onceRequest({ expiresAt: T0 + 9_000 }), second.action)).toEqual({
      status: 'refused',
      reason: 'in_progress',
    });
    expect(second.calls.count).toBe(0);
    gate.resolve('first');
    expect(await first).toEqual({ status: 'performed', outcome: 'first' });
    expect(runs).toBe(1);
    // Completed and expired: now it may be forgotten.
    store.sweep();
    expect(store.size).toBe(0);
  });

  it('refuses every concurrent call whose claim is already past expiresAt: nothing runs', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const { calls, action } = counted('done');
    const late = onceRequest({ expiresAt: T0 - 1 });
    const results = await Promise.all(Array.from({ length: 10 }, () => store.once(late, action)));
    expect(calls.count).toBe(0);
    expect(results.every((r) => r.status === 'refused' && r.reason === 'expired')).toBe(true);
    expect(store.size).toBe(0);
  });

  it('sweeps expired entries every sweepEvery claims and on demand', async () => {
    const c = clock();
    const store = new MemoryReplayStore({ now: c.now, sweepEvery: 3 });
    await store.once(onceRequest({ nonce: 'a', expiresAt: T0 + 1_000 }), async () => 1);
    await store.once(onceRequest({ nonce: 'b', expiresAt: T0 + 100_000 }), async () => 2);
    expect(store.size).toBe(2);
    c.ms = T0 + 1_000;
    // The third claim triggers a sweep: 'a' is gone, 'b' stays, 'c' is added.
    await store.once(onceRequest({ nonce: 'c', expiresAt: T0 + 100_000 }), async () => 3);
    expect(store.size).toBe(2);
    c.ms = T0 + 100_000;
    store.sweep();
    expect(store.size).toBe(0);
  });

  it('sweep keeps an entry due later in a second that has begun, and sweeps it once due', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    await store.once(onceRequest({ nonce: 'a', expiresAt: T0 + 1_500 }), async () => 1);
    store.sweep(T0 + 1_200);
    expect(store.size).toBe(1);
    store.sweep(T0 + 1_500);
    expect(store.size).toBe(0);
  });

  it('sweep follows a nonce released by a failed action and claimed again later', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const failing = store.once(onceRequest({ nonce: 'b', expiresAt: T0 + 1_000 }), async () => {
      throw new Error('boom');
    });
    await expect(failing).rejects.toThrow('boom');
    expect(store.size).toBe(0);
    const again = await store.once(
      onceRequest({ nonce: 'b', expiresAt: T0 + 5_000 }),
      async () => 2,
    );
    expect(again.status).toBe('performed');
    store.sweep(T0 + 2_000);
    expect(store.size).toBe(1);
    const reused = counted('late');
    expect(
      (await store.once(onceRequest({ nonce: 'b', expiresAt: T0 + 5_000 }), reused.action)).status,
    ).toBe('replayed');
    store.sweep(T0 + 5_000);
    expect(store.size).toBe(0);
  });

  it('sweep(NaN) forgets nothing: no entry is past a broken clock', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    await store.once(onceRequest({ nonce: 'a', expiresAt: T0 + 10 }), async () => 1);
    expect(store.sweep(Number.NaN)).toBe(0);
    expect(store.size).toBe(1);
    const again = counted('again');
    expect(
      (await store.once(onceRequest({ nonce: 'a', expiresAt: T0 + 10 }), again.action)).status,
    ).toBe('replayed');
    expect(again.calls.count).toBe(0);
  });

  it('sweep of a value that is no time forgets nothing (helper-163 M1)', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    await store.once(onceRequest({ nonce: 'a', expiresAt: T0 + 10 }), async () => 1);
    for (const now of ['x', null, {}, -1, Number.NEGATIVE_INFINITY])
      expect(store.sweep(now as number)).toBe(0);
    expect(store.size).toBe(1);
    const again = counted('again');
    expect(
      (await store.once(onceRequest({ nonce: 'a', expiresAt: T0 + 10 }), again.action)).status,
    ).toBe('replayed');
    expect(again.calls.count).toBe(0);
  });

  it('a clock that reads no number fails closed: nothing claimed, nothing run twice', async () => {
    const c = clock();
    const reading = { value: Number.NaN as unknown };
    const store = new MemoryReplayStore({
      now: () => (reading.value === undefined ? c.now() : (reading.value as number)),
    });
    reading.value = undefined;
    const first = counted('done');
    await store.once(onceRequest({ nonce: 'a' }), first.action);
    for (const broken of [Number.NaN, 'later', Number.POSITIVE_INFINITY]) {
      reading.value = broken;
      await expect(store.once(onceRequest({ nonce: 'a' }), first.action)).rejects.toThrow(
        /MemoryReplayStore: the clock returned/,
      );
      await expect(store.once(onceRequest({ nonce: 'b' }), first.action)).rejects.toThrow(
        TypeError,
      );
    }
    expect(first.calls.count).toBe(1);
  });

  it('refuses options it cannot follow', () => {
    for (const sweepEvery of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '8'])
      expect(() => new MemoryReplayStore({ sweepEvery: sweepEvery as number })).toThrow(
        /sweepEvery must be a whole number of claims/,
      );
    expect(() => new MemoryReplayStore({ now: 5 as never })).toThrow(/now must be a function/);
    expect(new MemoryReplayStore({ sweepEvery: 1 }).size).toBe(0);
  });

  it('sweep(now) uses the given time', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    await store.once(onceRequest({ nonce: 'a', expiresAt: T0 + 10 }), async () => 1);
    store.sweep(T0 + 9);
    expect(store.size).toBe(1);
    store.sweep(T0 + 10);
    expect(store.size).toBe(0);
  });

  it('returns a copy on replay: mutating a replayed outcome does not change the store', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    await store.once(onceRequest(), async () => ({ deleted: ['note-1'], meta: { n: 1 } }));
    const first = (await store.once(onceRequest(), async () => null)) as OnceResult<Json>;
    expect(first.status).toBe('replayed');
    if (first.status !== 'replayed') return;
    const outcome = first.outcome as { deleted: string[]; meta: { n: number } };
    outcome.deleted.push('note-2');
    outcome.meta.n = 99;
    (outcome as Record<string, unknown>).extra = true;
    const second = await store.once(onceRequest(), async () => null);
    expect(second).toEqual({
      status: 'replayed',
      outcome: { deleted: ['note-1'], meta: { n: 1 } },
    });
    if (second.status === 'replayed') expect(second.outcome).not.toBe(first.outcome);
  });

  it('stores a copy of the performed outcome: mutating it afterwards does not change what replays', async () => {
    const store = new MemoryReplayStore({ now: clock().now });
    const outcome = { deleted: ['note-1'] };
    const performed = await store.once(onceRequest(), async () => outcome);
    expect(performed).toEqual({ status: 'performed', outcome: { deleted: ['note-1'] } });
    outcome.deleted.push('tampered');
    expect(await store.once(onceRequest(), async () => null)).toEqual({
      status: 'replayed',
      outcome: { deleted: ['note-1'] },
    });
  });

  it('keeps the nonce used when the action ran but returned no JSON value, and forgets it after expiry', async () => {
    const c = clock();
    const store = new MemoryReplayStore({ now: c.now });
    const notJson = (async () => undefined) as unknown as () => Promise<Json>;
    await expect(store.once(onceRequest(), notJson)).rejects.toThrow(TypeError);
    const again = counted('again');
    expect(await store.once(onceRequest(), again.action)).toEqual({
      status: 'refused',
      reason: 'used',
    });
    expect(again.calls.count).toBe(0);
    c.ms = T0 + 60_000;
    expect(await store.once(onceRequest({ expiresAt: T0 + 120_000 }), again.action)).toEqual({
      status: 'performed',
      outcome: 'again',
    });
  });

  it('uses Date.now by default', async () => {
    const store = new MemoryReplayStore();
    const c = onceRequest({ expiresAt: Date.now() + 60_000 });
    expect((await store.once(c, async () => 'ok')).status).toBe('performed');
    expect((await store.once(c, async () => 'ok')).status).toBe('replayed');
    const past = onceRequest({ nonce: 'old', expiresAt: Date.now() - 60_000 });
    expect(await store.once(past, async () => 'ok')).toEqual({
      status: 'refused',
      reason: 'expired',
    });
  });
});
