import { MemoryReplayStore, type ReplayStore, ReplayStoreUnavailableError } from '@mrtr/replay';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  RECEIPT_NONCE_PREFIX,
  type ReceiptError,
  verifyAndRun,
  verifyReceipt,
} from '../src/index.js';
import {
  ARGS_A,
  ARGS_B,
  expectRefused,
  inputFor,
  NOW,
  newKey,
  OPERATION,
  signerWith,
} from './helpers.js';

const signer = await signerWith([await newKey('r1')]);
// With a store the verifier checks at the system time (`now` is refused): the tests set it.
const base = { operation: OPERATION, arguments: ARGS_A, keys: signer.jwks() };
const storeOnClock = () => new MemoryReplayStore({ now: () => NOW });
beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A store whose backend is down: fails before the action, as the contract says. */
const downStore: ReplayStore = {
  async once() {
    throw new ReplayStoreUnavailableError('connection refused');
  },
};

describe('single use through a replay store', () => {
  it('verifyReceipt with a store accepts a receipt once, then already_used', async () => {
    const store = storeOnClock();
    const { receipt } = await signer.sign(inputFor());
    await expect(verifyReceipt(receipt, { ...base, store })).resolves.toBeDefined();
    await expectRefused(verifyReceipt(receipt, { ...base, store }), 'already_used');
    // Without a store nothing is claimed: verification alone is repeatable.
    await expect(verifyReceipt(receipt, base)).resolves.toBeDefined();
  });

  it('stays used through the last second any verifier accepts, even on a store whose clock runs ahead', async () => {
    const { receipt, claims } = await signer.sign(inputFor());
    // The latest a verifier accepts it: with the largest tolerance, the last millisecond before exp + 300 s.
    const last = (claims.exp + 300) * 1000 - 1;
    // The store's clock, ahead of the verifier's by twice as much: each within 300 s of true time.
    const ahead = 600_000;
    const store = new MemoryReplayStore({ now: () => last + ahead });
    const late = { ...base, store, clockToleranceSeconds: 300 };
    await expect(verifyReceipt(receipt, late)).resolves.toBeDefined();
    vi.setSystemTime(last);
    await expectRefused(verifyReceipt(receipt, late), 'already_used');
  });

  it("refuses a time of the caller's choosing beside a store: a verifier behind the store's clock would use a receipt again", async () => {
    const { receipt } = await signer.sign(inputFor());
    // The store's clock 20 minutes ahead of the time asked for: the claim would expire at once.
    const store = new MemoryReplayStore({ now: () => NOW + 20 * 60_000 });
    let runs = 0;
    const action = async () => ++runs;
    for (let use = 0; use < 3; use++) {
      await expect(verifyAndRun(receipt, { ...base, store, now: NOW }, action)).rejects.toThrow(
        /options\.now cannot be given with options\.store/,
      );
      await expect(verifyReceipt(receipt, { ...base, store, now: NOW })).rejects.toBeInstanceOf(
        TypeError,
      );
    }
    expect(runs).toBe(0);
    expect(store.size).toBe(0);
    // Without a store, `now` verifies at another time (an audit).
    await expect(verifyReceipt(receipt, { ...base, now: NOW })).resolves.toBeDefined();
  });

  it("a verifier behind the store's clock past the claim's expiry: expired, the action never runs", async () => {
    const { receipt } = await signer.sign(inputFor());
    // The store 20 minutes ahead: the claim (exp + 900 s) would be forgotten at once.
    const store = new MemoryReplayStore({ now: () => NOW + 20 * 60_000 });
    let runs = 0;
    await expectRefused(
      verifyAndRun(receipt, { ...base, store }, async () => ++runs),
      'expired',
    );
    await expectRefused(verifyReceipt(receipt, { ...base, store }), 'expired');
    expect(runs).toBe(0);
  });

  it('a second receipt minted for the same confirmation (ticket nonce) is refused too', async () => {
    const store = storeOnClock();
    const first = await signer.sign(inputFor());
    const second = await signer.sign(inputFor());
    expect(second.claims.jti).not.toBe(first.claims.jti);
    await verifyReceipt(first.receipt, { ...base, store });
    await expectRefused(verifyReceipt(second.receipt, { ...base, store }), 'already_used');
    const other = await signer.sign(inputFor({ n: 'a-different-confirmation' }));
    await expect(verifyReceipt(other.receipt, { ...base, store })).resolves.toBeDefined();
  });

  it('claims under a prefix, apart from the gate claiming the same ticket nonce in a shared store', async () => {
    const store = storeOnClock();
    const { receipt, claims } = await signer.sign(inputFor());
    await store.once(
      { nonce: claims.n, requestDigest: 'gate', expiresAt: NOW + 600_000 },
      async () => 'deleted',
    );
    await expect(verifyReceipt(receipt, { ...base, store })).resolves.toBeDefined();
    const again = await store.once(
      { nonce: `${RECEIPT_NONCE_PREFIX}${claims.n}`, requestDigest: 'x', expiresAt: NOW + 600_000 },
      async () => null,
    );
    expect(again).toEqual({ status: 'refused', reason: 'used' });
  });

  it('a refused receipt claims nothing: the right one still works after a mismatch', async () => {
    const store = storeOnClock();
    const { receipt } = await signer.sign(inputFor());
    await expectRefused(
      verifyReceipt(receipt, { ...base, arguments: ARGS_B, store }),
      'arguments_mismatch',
    );
    expect(store.size).toBe(0);
    await expect(verifyReceipt(receipt, { ...base, store })).resolves.toBeDefined();
  });

  it('a store that cannot be reached: store_unavailable, with the store error as cause', async () => {
    const { receipt } = await signer.sign(inputFor());
    const error = await expectRefused(
      verifyReceipt(receipt, { ...base, store: downStore }),
      'store_unavailable',
    );
    expect(error.cause).toBeInstanceOf(ReplayStoreUnavailableError);
  });
});

describe('verifyAndRun', () => {
  it('runs the action once with the verified receipt; the second presentation is already_used', async () => {
    const store = storeOnClock();
    const { receipt, claims } = await signer.sign(inputFor());
    const deleted: string[] = [];
    const action = async (verified: { claims: { sub: string } }) => {
      deleted.push(ARGS_A.serviceId);
      return { deleted: ARGS_A.serviceId, by: verified.claims.sub };
    };
    const run = await verifyAndRun(receipt, { ...base, store }, action);
    expect(run).toEqual({
      receipt: { claims, kid: 'r1' },
      outcome: { deleted: 'svc_a1', by: 'user_5f2a' },
    });
    await expectRefused(verifyAndRun(receipt, { ...base, store }, action), 'already_used');
    expect(deleted).toEqual(['svc_a1']);
  });

  it('the same receipt presented concurrently by two executors acts once', async () => {
    const store = storeOnClock();
    const { receipt } = await signer.sign(inputFor());
    let runs = 0;
    const action = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return runs;
    };
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => verifyAndRun(receipt, { ...base, store }, action)),
    );
    expect(runs).toBe(1);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect(((r as PromiseRejectedResult).reason as ReceiptError).code).toBe('already_used');
  });

  it('a receipt for svc A presented to delete svc B: refused, the action never runs', async () => {
    const store = storeOnClock();
    const { receipt } = await signer.sign(inputFor());
    let ran = false;
    await expectRefused(
      verifyAndRun(receipt, { ...base, arguments: ARGS_B, store }, async () => {
        ran = true;
        return null;
      }),
      'arguments_mismatch',
    );
    expect(ran).toBe(false);
    expect(store.size).toBe(0);
  });

  it('an action that throws releases the claim and its error passes through unchanged', async () => {
    const store = storeOnClock();
    const { receipt } = await signer.sign(inputFor());
    const failure = new ReplayStoreUnavailableError('the action used another store that failed');
    await expect(
      verifyAndRun(receipt, { ...base, store }, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    await expect(
      verifyAndRun(receipt, { ...base, store }, async () => 'done'),
    ).resolves.toMatchObject({
      outcome: 'done',
    });
  });

  it('a store that cannot be reached: store_unavailable and the action does not run', async () => {
    const { receipt } = await signer.sign(inputFor());
    let ran = false;
    await expectRefused(
      verifyAndRun(receipt, { ...base, store: downStore }, async () => {
        ran = true;
        return null;
      }),
      'store_unavailable',
    );
    expect(ran).toBe(false);
  });

  it('hands the store transaction to the action', async () => {
    const seen: unknown[] = [];
    const txStore: ReplayStore<{ tx: number }> = {
      async once(_claim, action) {
        return { status: 'performed', outcome: await action({ tx: 7 }) };
      },
    };
    const { receipt } = await signer.sign(inputFor());
    await verifyAndRun(receipt, { ...base, store: txStore }, async (_r, tx) => {
      seen.push(tx);
      return null;
    });
    expect(seen).toEqual([{ tx: 7 }]);
  });

  it('requires a store and an action', async () => {
    const { receipt } = await signer.sign(inputFor());
    await expect(verifyAndRun(receipt, base as never, async () => null)).rejects.toBeInstanceOf(
      TypeError,
    );
    await expect(
      verifyAndRun(receipt, { ...base, store: storeOnClock() }, undefined as never),
    ).rejects.toBeInstanceOf(TypeError);
  });
});
