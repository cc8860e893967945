/**
 * @mrtr/replay/contract-tests: the reusable vitest suite every
 * {@link ReplayStore} must pass. It checks the contract documented on
 * `ReplayStore` (at most once per nonce, recorded outcomes replayed to an
 * identical re-issue, other uses refused, claims released on a throw,
 * entries forgotten after expiry) on one instance and across two instances
 * that share a backend, under 50 concurrent presentations.
 *
 * Needs `vitest` (a peer dependency) and real time: expiry tests wait about
 * half a second, because a server-side store expires entries on the
 * server's clock.
 *
 * @example
 * ```ts
 * // test/contract.test.ts
 * import { describeReplayStoreContract } from '@mrtr/replay/contract-tests';
 * import { RedisReplayStore } from '@mrtr/replay-redis';
 *
 * describeReplayStoreContract('RedisReplayStore', {
 *   open: () => RedisReplayStore.connect(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'),
 *   close: (store) => store.close(),
 *   whileRunning: 'in_progress',
 * });
 * ```
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimRequest, Json, OnceResult, ReplayStore } from './contract.js';

/** How {@link describeReplayStoreContract} gets and releases store instances. */
export interface ReplayStoreContractOptions<S extends ReplayStore<unknown>> {
  /**
   * Open one store instance with its own connections to the backend the
   * other instances use. Called once per instance a test needs (at most two
   * per test).
   */
  open(): S | Promise<S>;
  /** Release what `open` created (connections, clients). Called after the suite. */
  close?(store: S): void | Promise<void>;
  /**
   * `shared` (default): instances from `open` share one backend, as two
   * server processes would (Redis, PostgreSQL). `separate`: each instance
   * has its own state (memory), so multi-instance tests use one instance.
   */
  instances?: 'shared' | 'separate';
  /**
   * What an identical presentation gets while the first one's action runs:
   * `in_progress` (refused at once) or `waits` (blocks until the first
   * settles, then gets `replayed`).
   */
  whileRunning: 'in_progress' | 'waits';
  /** Whether `sweep()` deletes expired entries itself (`false` for stores whose backend expires them). Default `true` when the store has `sweep`. */
  sweepDeletes?: boolean;
  /** Skip every test (e.g. the service is unreachable and `CI` is not `true`). */
  skip?: boolean;
}

/** Milliseconds an expiry test lets an entry live. */
const SHORT_LIFE_MS = 400;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A claim with a fresh nonce, alive for five minutes unless told otherwise. */
function freshClaim(overrides: Partial<ClaimRequest> = {}): ClaimRequest {
  return {
    nonce: `contract-${randomUUID()}`,
    requestDigest: 'sha256:answer-a',
    expiresAt: Date.now() + 300_000,
    ...overrides,
  };
}

/** An action that counts its runs, optionally waits, and returns `outcome`. */
function counted<T extends Json>(outcome: T, waitMs = 0) {
  const calls = { count: 0 };
  const action = async (): Promise<T> => {
    calls.count++;
    if (waitMs > 0) await sleep(waitMs);
    return outcome;
  };
  return { calls, action };
}

/** Outcomes of every JSON shape, including the falsy ones a store could confuse with "no outcome yet". */
const OUTCOMES: Json[] = [
  { content: [{ type: 'text', text: 'Deleted note-1 “Meeting notes” ✓' }], isError: false },
  { nested: { list: [1, -2.5, 'two', null, true, { deep: [] }] } },
  null,
  0,
  false,
  '',
  [],
  {},
  Number.MAX_SAFE_INTEGER,
  'done',
];

/**
 * Register the `ReplayStore` contract suite for the store that `options.open`
 * creates, under `describe(name)`.
 * @param name the suite's title, e.g. `RedisReplayStore`.
 * @param options how to open and close instances and which documented
 *   variations of the contract the store chose.
 */
export function describeReplayStoreContract<S extends ReplayStore<unknown>>(
  name: string,
  options: ReplayStoreContractOptions<S>,
): void {
  const opened: S[] = [];
  let pair: Promise<[S, S]> | undefined;
  const instances = (): Promise<[S, S]> => {
    pair ??= (async () => {
      const a = await options.open();
      opened.push(a);
      if (options.instances === 'separate') return [a, a];
      const b = await options.open();
      opened.push(b);
      return [a, b];
    })();
    return pair;
  };

  describe.skipIf(options.skip === true)(`${name}: ReplayStore contract`, () => {
    // Opening may start an embedded database or connect pools: not part of any test's time.
    beforeAll(async () => {
      await instances();
    }, 60_000);
    afterAll(async () => {
      for (const store of opened) await options.close?.(store);
    });

    it('performs the first presentation, runs the action once and returns its outcome', async () => {
      const [a] = await instances();
      const { calls, action } = counted({ deleted: 'note-1' });
      expect(await a.once(freshClaim(), action)).toEqual({
        status: 'performed',
        outcome: { deleted: 'note-1' },
      });
      expect(calls.count).toBe(1);
    });

    it('replays an identical re-issue with the recorded outcome, on either instance, for every JSON shape', async () => {
      const [a, b] = await instances();
      for (const outcome of OUTCOMES) {
        const claim = freshClaim();
        expect(await a.once(claim, async () => outcome)).toEqual({ status: 'performed', outcome });
        const again = counted<Json>('must not run');
        expect(await a.once(claim, again.action)).toEqual({ status: 'replayed', outcome });
        expect(await b.once(claim, again.action)).toEqual({ status: 'replayed', outcome });
        expect(again.calls.count).toBe(0);
      }
    });

    it('refuses a used nonce presented with another request digest as used; the original still replays', async () => {
      const [a, b] = await instances();
      const claim = freshClaim();
      await a.once(claim, async () => 'first');
      const other = counted('second');
      const changed = { ...claim, requestDigest: 'sha256:answer-b' };
      expect(await a.once(changed, other.action)).toEqual({ status: 'refused', reason: 'used' });
      expect(await b.once(changed, other.action)).toEqual({ status: 'refused', reason: 'used' });
      expect(other.calls.count).toBe(0);
      expect(await b.once(claim, other.action)).toEqual({ status: 'replayed', outcome: 'first' });
    });

    it('keeps different nonces independent', async () => {
      const [a, b] = await instances();
      const x = freshClaim();
      const y = freshClaim();
      expect(await a.once(x, async () => 'X')).toEqual({ status: 'performed', outcome: 'X' });
      expect(await b.once(y, async () => 'Y')).toEqual({ status: 'performed', outcome: 'Y' });
      expect(await b.once(x, async () => 'no')).toEqual({ status: 'replayed', outcome: 'X' });
      expect(await a.once(y, async () => 'no')).toEqual({ status: 'replayed', outcome: 'Y' });
    });

    it(`answers a presentation made while the first one runs: ${options.whileRunning === 'waits' ? 'it waits, then identical → replayed and different → used' : 'identical → in_progress, different → used'}`, async () => {
      const [a, b] = await instances();
      const claim = freshClaim();
      const gate = deferred<void>();
      let runs = 0;
      const first = a.once(claim, async () => {
        runs++;
        await gate.promise;
        return { deleted: 'note-1' };
      });
      await sleep(50); // let the first claim land
      const second = counted<Json>('second');
      const identical = b.once(claim, second.action);
      const different = b.once({ ...claim, requestDigest: 'sha256:answer-b' }, second.action);
      const settledEarly: string[] = [];
      void identical.then(() => settledEarly.push('identical'));
      void different.then(() => settledEarly.push('different'));
      await sleep(100);
      if (options.whileRunning === 'waits') expect(settledEarly).toEqual([]);
      else expect(settledEarly.sort()).toEqual(['different', 'identical']);
      gate.resolve();
      expect(await first).toEqual({ status: 'performed', outcome: { deleted: 'note-1' } });
      expect(await identical).toEqual(
        options.whileRunning === 'waits'
          ? { status: 'replayed', outcome: { deleted: 'note-1' } }
          : { status: 'refused', reason: 'in_progress' },
      );
      expect(await different).toEqual({ status: 'refused', reason: 'used' });
      expect(second.calls.count).toBe(0);
      expect(runs).toBe(1);
      // Settled: the identical presentation now replays everywhere.
      expect(await a.once(claim, second.action)).toEqual({
        status: 'replayed',
        outcome: { deleted: 'note-1' },
      });
    });

    it('runs the action exactly once for 50 concurrent presentations of one confirmation on two instances', async () => {
      const [a, b] = await instances();
      const claim = freshClaim();
      let runs = 0;
      const action = async (): Promise<Json> => {
        runs++;
        await sleep(30);
        return { deleted: 'note-1', run: runs };
      };
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).once(claim, action)),
      );
      expect(runs).toBe(1);
      const performed = results.filter((r) => r.status === 'performed');
      expect(performed).toEqual([{ status: 'performed', outcome: { deleted: 'note-1', run: 1 } }]);
      for (const r of results.filter((r) => r.status !== 'performed')) {
        if (options.whileRunning === 'waits')
          expect(r).toEqual({ status: 'replayed', outcome: { deleted: 'note-1', run: 1 } });
        else
          expect([
            JSON.stringify({ status: 'refused', reason: 'in_progress' }),
            JSON.stringify({ status: 'replayed', outcome: { deleted: 'note-1', run: 1 } }),
          ]).toContain(JSON.stringify(r));
      }
      // A re-issue after completion gets the recorded outcome and runs nothing.
      const late = counted<Json>('late');
      expect(await b.once(claim, late.action)).toEqual({
        status: 'replayed',
        outcome: { deleted: 'note-1', run: 1 },
      });
      expect(await a.once(claim, late.action)).toEqual({
        status: 'replayed',
        outcome: { deleted: 'note-1', run: 1 },
      });
      expect(late.calls.count).toBe(0);
    });

    it('runs once for 50 concurrent presentations that carry two different answers; the losing answer is refused as used', async () => {
      const [a, b] = await instances();
      const nonce = `contract-${randomUUID()}`;
      const expiresAt = Date.now() + 300_000;
      const runs: string[] = [];
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const digest = i % 2 ? 'sha256:keep-a' : 'sha256:keep-b';
          return (i % 4 < 2 ? a : b)
            .once({ nonce, requestDigest: digest, expiresAt }, async () => {
              runs.push(digest);
              await sleep(20);
              return digest;
            })
            .then((result) => ({ digest, result }));
        }),
      );
      expect(runs).toHaveLength(1);
      const winner = runs[0] as string;
      for (const { digest, result } of results) {
        if (digest !== winner) expect(result).toEqual({ status: 'refused', reason: 'used' });
        else if (result.status === 'refused') expect(result.reason).toBe('in_progress');
        else expect(result.outcome).toBe(winner);
      }
      expect(results.filter((r) => r.result.status === 'performed')).toHaveLength(1);
    });

    it('releases the claim when the action throws, rethrows the same error, and lets a retry on another instance perform', async () => {
      const [a, b] = await instances();
      const claim = freshClaim();
      const boom = new Error('mutation failed');
      await expect(
        a.once(claim, async () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      const syncThrow = (() => {
        throw new RangeError('thrown before any await');
      }) as unknown as () => Promise<Json>;
      await expect(b.once(claim, syncThrow)).rejects.toThrow(RangeError);
      // Nothing is left half-claimed: even another answer may now claim it.
      const retry = counted('deleted');
      expect(await b.once({ ...claim, requestDigest: 'sha256:answer-b' }, retry.action)).toEqual({
        status: 'performed',
        outcome: 'deleted',
      });
      expect(retry.calls.count).toBe(1);
    });

    it('rejects a malformed claim with TypeError and runs nothing', async () => {
      const [a] = await instances();
      const { calls, action } = counted('x');
      const bad: unknown[] = [
        { ...freshClaim(), nonce: '' },
        { ...freshClaim(), nonce: 42 },
        { ...freshClaim(), nonce: 'n'.repeat(513) },
        { ...freshClaim(), requestDigest: undefined },
        { ...freshClaim(), expiresAt: Number.NaN },
        { ...freshClaim(), expiresAt: '1800000000000' },
        null,
      ];
      for (const claim of bad)
        await expect(a.once(claim as ClaimRequest, action)).rejects.toThrow(TypeError);
      expect(calls.count).toBe(0);
    });

    it('rejects an outcome that is not JSON with TypeError', async () => {
      const [a] = await instances();
      const notJson = (async () => undefined) as unknown as () => Promise<Json>;
      await expect(a.once(freshClaim(), notJson)).rejects.toThrow(TypeError);
      const bigint = (async () => ({ n: 1n })) as unknown as () => Promise<Json>;
      await expect(a.once(freshClaim(), bigint)).rejects.toThrow(TypeError);
    });

    it('forgets an entry once expiresAt has passed: the nonce may be claimed again', async () => {
      const [a, b] = await instances();
      const claim = freshClaim({ expiresAt: Date.now() + SHORT_LIFE_MS });
      expect(await a.once(claim, async () => 'first')).toEqual({
        status: 'performed',
        outcome: 'first',
      });
      expect(await b.once(claim, async () => 'x')).toEqual({
        status: 'replayed',
        outcome: 'first',
      });
      await sleep(Math.max(0, claim.expiresAt - Date.now()) + 150);
      const later = { ...claim, requestDigest: 'sha256:b', expiresAt: Date.now() + 60_000 };
      const again = counted('second');
      expect(await b.once(later, again.action)).toEqual({ status: 'performed', outcome: 'second' });
      expect(again.calls.count).toBe(1);
    });

    it('sweep removes expired entries and keeps live ones', async ({ skip }) => {
      const [a, b] = await instances();
      if (typeof a.sweep !== 'function')
        skip('this store has no sweep: its backend expires entries');
      const expiring = freshClaim({ expiresAt: Date.now() + SHORT_LIFE_MS });
      const live = freshClaim();
      await a.once(expiring, async () => 'expiring');
      await a.once(live, async () => 'live');
      expect(typeof (await a.sweep?.())).toBe('number');
      expect(await b.once(expiring, async () => 'x')).toEqual({
        status: 'replayed',
        outcome: 'expiring',
      });
      await sleep(Math.max(0, expiring.expiresAt - Date.now()) + 150);
      const removed = await a.sweep?.();
      if (options.sweepDeletes === false) expect(removed).toBe(0);
      else expect(removed).toBeGreaterThanOrEqual(1);
      expect(await b.once(live, async () => 'x')).toEqual({ status: 'replayed', outcome: 'live' });
      expect(await b.once(expiring, async () => 'anew')).toEqual({
        status: 'performed',
        outcome: 'anew',
      });
    });
  });
}

export type { ClaimRequest, Json, OnceResult, ReplayStore };
