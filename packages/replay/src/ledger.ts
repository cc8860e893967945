import type { Json, OnceRequest, OnceResult, ReplayStore } from './contract.js';

/** Carries a refusal of the ledger out of the front store's claim, which it releases. */
class LedgerRefused {
  constructor(readonly result: OnceResult<never>) {}
}

/**
 * A fast shared store in front (Redis, memory) and a ledger behind it whose
 * claim commits with the mutation (`PostgresReplayStore` on the
 * application's own database): at most once even when the front store
 * forgets a record (a Redis restarted without persistence, an eviction, a
 * failover to a replica that never got the key).
 *
 * `once` claims in the front store first: concurrent presentations are
 * turned away there (`in_progress`) without touching the database. The
 * winner then claims in the ledger, in the transaction the action runs in,
 * so the record of the mutation lives with the data it changed. If the front
 * store had forgotten an earlier completion, the ledger still has it: an
 * identical re-issue gets the recorded outcome (`replayed`), any other is
 * refused (`used`), and the action does not run again. A ledger refusal
 * releases the front claim, so the front store never records an outcome
 * that did not happen.
 *
 * A front claim whose process died after the ledger committed, before the
 * front recorded the outcome, would answer `in_progress` until it expires
 * (with `RedisReplayStore`, the ticket's expiry). So when the front store
 * answers `in_progress`, the ledger is read (its `recorded`, without
 * claiming or waiting): an outcome it committed is `replayed` (or `used`
 * for another answer). A front claim whose process died before the ledger
 * committed still answers `in_progress` until it expires: nothing ran, and
 * presentations while an action runs never wait on the database.
 *
 * `Tx` is the ledger's transaction: the action always gets it.
 */
export class LedgerReplayStore<Tx> implements ReplayStore<Tx> {
  /**
   * @param front the shared store that answers first (its action gets nothing).
   * @param ledger the store whose claim commits with the mutation.
   */
  constructor(
    readonly front: ReplayStore<void> | ReplayStore<undefined>,
    readonly ledger: ReplayStore<Tx>,
  ) {}

  /**
   * See {@link ReplayStore.once}.
   * @throws {ReplayStoreUnavailableError} when either store fails before the action ran (or rolled back with it).
   * @throws what `action` throws, after both claims are released.
   */
  async once<T extends Json>(
    request: OnceRequest,
    action: (tx: Tx) => Promise<T>,
  ): Promise<OnceResult<T>> {
    let inner: OnceResult<T> | undefined;
    try {
      const outer = await (this.front as ReplayStore<void>).once(request, async () => {
        inner = await this.ledger.once(request, action);
        if (inner.status === 'refused') throw new LedgerRefused(inner as OnceResult<never>);
        return inner.outcome;
      });
      // `performed` in front: the ledger ran the action now, or replayed what it ran before.
      if (outer.status === 'performed' && inner !== undefined) return inner;
      if (outer.status === 'refused' && outer.reason === 'in_progress' && this.ledger.recorded) {
        // A front claim whose process died after the ledger committed stays `in_progress` until
        // it expires; the ledger knows the outcome. Read only: a claim still running is not waited for.
        const settled = await this.ledger.recorded<T>(request).catch(() => undefined);
        if (settled !== undefined) return settled;
      }
      return outer;
    } catch (error) {
      if (error instanceof LedgerRefused) return error.result;
      throw error;
    }
  }

  /**
   * See {@link ReplayStore.recorded}: the ledger's settled entry of the nonce
   * (the record that commits with the mutation), read without claiming;
   * `undefined` when it has none or the ledger has no `recorded`.
   * @throws {TypeError} when `request` is malformed.
   * @throws {ReplayStoreUnavailableError} when the ledger cannot be read.
   */
  async recorded<T extends Json>(request: OnceRequest): Promise<OnceResult<T> | undefined> {
    return this.ledger.recorded ? this.ledger.recorded<T>(request) : undefined;
  }

  /**
   * Sweep both stores (those that sweep) of entries whose `expiresAt` is at or before `now`.
   * @returns how many entries were removed in all.
   */
  async sweep(now?: number): Promise<number> {
    let removed = 0;
    for (const store of [this.front, this.ledger] as ReplayStore<unknown>[])
      if (store.sweep) removed += await store.sweep(now);
    return removed;
  }
}
