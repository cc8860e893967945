/**
 * The expiry part of the `ReplayStore` contract suite: an entry whose
 * `expiresAt` has passed is forgotten, and `sweep` removes expired entries
 * and keeps live ones. Registered by `describeReplayStoreContract`.
 */
import { expect, it } from 'vitest';
import type { ReplayStore } from './contract.js';
import { counted, freshRequest, SHORT_LIFE_MS, sleep } from './contract-support.js';

/**
 * Register the expiry tests inside the suite's `describe`.
 * @param instances the suite's two store instances (one, twice, for `separate` stores).
 * @param sweepDeletes `false` for a store whose backend expires entries itself.
 */
export function describeExpiry<S extends ReplayStore<unknown>>(
  instances: () => Promise<[S, S]>,
  sweepDeletes: boolean | undefined,
): void {
  it('forgets an entry once expiresAt has passed: the nonce may be claimed again', async () => {
    const [a, b] = await instances();
    const request = freshRequest({ expiresAt: Date.now() + SHORT_LIFE_MS });
    expect(await a.once(request, async () => 'first')).toEqual({
      status: 'performed',
      outcome: 'first',
    });
    expect(await b.once(request, async () => 'x')).toEqual({
      status: 'replayed',
      outcome: 'first',
    });
    await sleep(Math.max(0, request.expiresAt - Date.now()) + 150);
    const later = { ...request, requestDigest: 'sha256:b', expiresAt: Date.now() + 60_000 };
    const again = counted('second');
    expect(await b.once(later, again.action)).toEqual({ status: 'performed', outcome: 'second' });
    expect(again.calls.count).toBe(1);
  });

  it('refuses a request whose expiresAt has passed by its clock: nothing runs, nothing is kept', async () => {
    const [a, b] = await instances();
    // As an instance whose clock runs minutes behind would present a confirmation the others forgot.
    const late = freshRequest({ expiresAt: Date.now() - 60_000 });
    const action = counted('ran');
    expect(await a.once(late, action.action)).toEqual({ status: 'refused', reason: 'expired' });
    expect(await b.once(late, action.action)).toEqual({ status: 'refused', reason: 'expired' });
    expect(action.calls.count).toBe(0);
    // The nonce itself is not used up: a request that is still live claims it.
    const live = { ...late, expiresAt: Date.now() + 60_000 };
    expect(await a.once(live, async () => 'live')).toEqual({
      status: 'performed',
      outcome: 'live',
    });
  });

  it('sweep removes expired entries and keeps live ones', async ({ skip }) => {
    const [a, b] = await instances();
    if (typeof a.sweep !== 'function') skip('this store has no sweep: its backend expires entries');
    const expiring = freshRequest({ expiresAt: Date.now() + SHORT_LIFE_MS });
    const live = freshRequest();
    await a.once(expiring, async () => 'expiring');
    await a.once(live, async () => 'live');
    expect(typeof (await a.sweep?.())).toBe('number');
    expect(await b.once(expiring, async () => 'x')).toEqual({
      status: 'replayed',
      outcome: 'expiring',
    });
    await sleep(Math.max(0, expiring.expiresAt - Date.now()) + 150);
    // No time is past a broken clock's reading, nor before 0: such a sweep removes nothing.
    expect(await a.sweep?.(Number.NaN)).toBe(0);
    expect(await a.sweep?.(-1)).toBe(0);
    const removed = await a.sweep?.();
    if (sweepDeletes === false) expect(removed).toBe(0);
    else expect(removed).toBeGreaterThanOrEqual(1);
    expect(await b.once(live, async () => 'x')).toEqual({ status: 'replayed', outcome: 'live' });
    // Presented again as it was, its expiresAt has passed: refused, nothing runs (item 7).
    expect(await b.once(expiring, async () => 'anew')).toEqual({
      status: 'refused',
      reason: 'expired',
    });
    const renewed = { ...expiring, expiresAt: Date.now() + 60_000 };
    expect(await b.once(renewed, async () => 'anew')).toEqual({
      status: 'performed',
      outcome: 'anew',
    });
  });
}
