/**
 * @mrtr/replay/contract-tests: the reusable vitest suite every
 * {@link ReplayStore} must pass. It checks the contract documented on
 * `ReplayStore` (at most once per nonce, recorded outcomes replayed to an
 * identical re-issue, other uses refused, nonces released on a throw,
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
import {
  type Json,
  MAX_EXPIRES_AT,
  type OnceRequest,
  type OnceResult,
  type ReplayStore,
} from './contract.js';
import { describeExpiry } from './contract-expiry.js';
import { counted, deferred, freshRequest, OUTCOMES, sleep } from './contract-support.js';

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
    // Opening may start an embedded database or connect pools: not part of any test's time. PGlite
    // took over a minute to start on a loaded two-core machine: three minutes, as the suites' hooks get.
    beforeAll(async () => {
      await instances();
    }, 180_000);
    afterAll(async () => {
      for (const store of opened) await options.close?.(store);
    });

    it('performs the first presentation, runs the action once and returns its outcome', async () => {
      const [a] = await instances();
      const { calls, action } = counted({ deleted: 'note-1' });
      expect(await a.once(freshRequest(), action)).toEqual({
        status: 'performed',
        outcome: { deleted: 'note-1' },
      });
      expect(calls.count).toBe(1);
    });

    it('replays an identical re-issue with the recorded outcome, on either instance, for every JSON shape', async () => {
      const [a, b] = await instances();
      for (const outcome of OUTCOMES) {
        const request = freshRequest();
        expect(await a.once(request, async () => outcome)).toEqual({
          status: 'performed',
          outcome,
        });
        const again = counted<Json>('must not run');
        expect(await a.once(request, again.action)).toEqual({ status: 'replayed', outcome });
        expect(await b.once(request, again.action)).toEqual({ status: 'replayed', outcome });
        expect(again.calls.count).toBe(0);
      }
    });

    it('refuses a used nonce presented with another request digest as used; the original still replays', async () => {
      const [a, b] = await instances();
      const request = freshRequest();
      await a.once(request, async () => 'first');
      const other = counted('second');
      const changed = { ...request, requestDigest: 'sha256:answer-b' };
      expect(await a.once(changed, other.action)).toEqual({ status: 'refused', reason: 'used' });
      expect(await b.once(changed, other.action)).toEqual({ status: 'refused', reason: 'used' });
      expect(other.calls.count).toBe(0);
      expect(await b.once(request, other.action)).toEqual({ status: 'replayed', outcome: 'first' });
    });

    it('keeps different nonces independent', async () => {
      const [a, b] = await instances();
      const x = freshRequest();
      const y = freshRequest();
      expect(await a.once(x, async () => 'X')).toEqual({ status: 'performed', outcome: 'X' });
      expect(await b.once(y, async () => 'Y')).toEqual({ status: 'performed', outcome: 'Y' });
      expect(await b.once(x, async () => 'no')).toEqual({ status: 'replayed', outcome: 'X' });
      expect(await a.once(y, async () => 'no')).toEqual({ status: 'replayed', outcome: 'Y' });
    });

    it(`answers a presentation made while the first one runs: ${options.whileRunning === 'waits' ? 'it waits, then identical → replayed and different → used' : 'identical → in_progress, different → used'}`, async () => {
      const [a, b] = await instances();
      const request = freshRequest();
      const gate = deferred<void>();
      let runs = 0;
      const claimed = deferred<void>();
      const first = a.once(request, async () => {
        runs++;
        claimed.resolve(); // the action runs only once the nonce is claimed
        await gate.promise;
        return { deleted: 'note-1' };
      });
      await claimed.promise; // not a fixed sleep: on a loaded host 50 ms did not cover the claim
      const second = counted<Json>('second');
      const identical = b.once(request, second.action);
      const different = b.once({ ...request, requestDigest: 'sha256:answer-b' }, second.action);
      const settledEarly: string[] = [];
      void identical.then(() => settledEarly.push('identical'));
      void different.then(() => settledEarly.push('different'));
      if (options.whileRunning === 'waits') {
        await sleep(100); // a negative check: a slow host can only make it pass, never fail
        expect(settledEarly).toEqual([]);
      } else {
        await Promise.all([identical, different]); // they answer without waiting for the gate
        expect(settledEarly.sort()).toEqual(['different', 'identical']);
      }
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
      expect(await a.once(request, second.action)).toEqual({
        status: 'replayed',
        outcome: { deleted: 'note-1' },
      });
    });

    it('runs the action exactly once for 50 concurrent presentations of one confirmation on two instances', async () => {
      const [a, b] = await instances();
      const request = freshRequest();
      let runs = 0;
      const action = async (): Promise<Json> => {
        runs++;
        await sleep(30);
        return { deleted: 'note-1', run: runs };
      };
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).once(request, action)),
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
      expect(await b.once(request, late.action)).toEqual({
        status: 'replayed',
        outcome: { deleted: 'note-1', run: 1 },
      });
      expect(await a.once(request, late.action)).toEqual({
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

    it('releases the nonce when the action throws, rethrows the same error, and lets a retry on another instance perform', async () => {
      const [a, b] = await instances();
      const request = freshRequest();
      const boom = new Error('mutation failed');
      await expect(
        a.once(request, async () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      const syncThrow = (() => {
        throw new RangeError('thrown before any await');
      }) as unknown as () => Promise<Json>;
      await expect(b.once(request, syncThrow)).rejects.toThrow(RangeError);
      // Nothing is left half-claimed: even another answer may now claim it.
      const retry = counted('deleted');
      expect(await b.once({ ...request, requestDigest: 'sha256:answer-b' }, retry.action)).toEqual({
        status: 'performed',
        outcome: 'deleted',
      });
      expect(retry.calls.count).toBe(1);
    });

    it('rejects a malformed request with TypeError and runs nothing', async () => {
      const [a] = await instances();
      const { calls, action } = counted('x');
      const bad: unknown[] = [
        { ...freshRequest(), nonce: '' },
        { ...freshRequest(), nonce: 42 },
        { ...freshRequest(), nonce: 'n'.repeat(513) },
        { ...freshRequest(), requestDigest: undefined },
        // Text a backend cannot keep exactly: two such nonces could become one key.
        { ...freshRequest(), nonce: `${freshRequest().nonce}\u0000` },
        { ...freshRequest(), nonce: `${freshRequest().nonce}\ud800` },
        { ...freshRequest(), requestDigest: 'sha256:\u0000' },
        { ...freshRequest(), requestDigest: 'sha256:\udfff' },
        { ...freshRequest(), expiresAt: Number.NaN },
        { ...freshRequest(), expiresAt: '1800000000000' },
        { ...freshRequest(), expiresAt: -1 },
        { ...freshRequest(), expiresAt: MAX_EXPIRES_AT + 1 },
        { ...freshRequest(), expiresAt: 1e20 },
        { ...freshRequest(), expiresAt: Number.POSITIVE_INFINITY },
        null,
      ];
      for (const request of bad)
        await expect(a.once(request as OnceRequest, action)).rejects.toThrow(TypeError);
      expect(calls.count).toBe(0);
    });

    it('keeps any expiresAt the contract allows: a fraction of a millisecond, the latest time', async () => {
      const [a, b] = await instances();
      for (const expiresAt of [Date.now() + 300_000.5, MAX_EXPIRES_AT]) {
        const request = freshRequest({ expiresAt });
        const first = counted({ expiresAt });
        expect(await a.once(request, first.action)).toEqual({
          status: 'performed',
          outcome: { expiresAt },
        });
        expect(await b.once(request, counted('again').action)).toEqual({
          status: 'replayed',
          outcome: { expiresAt },
        });
        const other = { ...request, requestDigest: 'sha256:answer-b' };
        expect(await b.once(other, counted('other').action)).toEqual({
          status: 'refused',
          reason: 'used',
        });
        expect(first.calls.count).toBe(1);
      }
    });

    it('rejects an outcome that is not JSON with TypeError', async () => {
      const [a] = await instances();
      const notJson = (async () => undefined) as unknown as () => Promise<Json>;
      await expect(a.once(freshRequest(), notJson)).rejects.toThrow(TypeError);
      const bigint = (async () => ({ n: 1n })) as unknown as () => Promise<Json>;
      await expect(a.once(freshRequest(), bigint)).rejects.toThrow(TypeError);
    });

    describeExpiry(instances, options.sweepDeletes);
  });
}

export type { OnceRequest, Json, OnceResult, ReplayStore };
