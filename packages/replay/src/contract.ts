/**
 * The `ReplayStore` contract: at-most-once execution of a confirmed
 * operation, keyed by the ticket nonce. MCP 2026-07-28 (`basic/patterns/mrtr`,
 * "Server Requirements", warning on single use) bounds the replay window of
 * `requestState` but leaves single use to the server: this contract is where
 * it is kept.
 */

/**
 * The argument of {@link ReplayStore.once}: what identifies one presentation
 * of a confirmation (the nonce to claim, and what an identical re-issue must
 * match).
 */
export interface OnceRequest {
  /** The ticket nonce (the ticket's `n` field): the single-use identity. A non-empty, well-formed string of at most 512 characters without U+0000. */
  nonce: string;
  /**
   * Digest of what this presentation asks to be done under the nonce
   * (`@mrtr/gate` passes the digest of the answer's RFC 8785 text: principal,
   * operation, arguments and input key are fixed by the ticket the nonce
   * names). An identical re-issue has the same digest and gets the recorded
   * outcome back; another digest is refused as `used`. A non-empty, well-formed string of at most 512 characters without U+0000.
   */
  requestDigest: string;
  /**
   * When the entry may be forgotten, milliseconds since the epoch (the
   * ticket's `exp` plus skew): from 0 to {@link MAX_EXPIRES_AT}. A fraction
   * of a millisecond counts as the next whole one: no store forgets an entry
   * before its `expiresAt`.
   */
  expiresAt: number;
}

/** A JSON value an outcome may hold; outcomes are stored and returned as data. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The result of {@link ReplayStore.once}.
 * - `performed`: this call claimed the nonce, ran the action, and recorded its outcome.
 * - `replayed`: the nonce was already used by an identical request that completed; its recorded outcome.
 * - `refused`: the nonce is used by a different request (`used`), an identical one is still running (`in_progress`), or the request's `expiresAt` has passed by the store's clock (`expired`). Nothing ran.
 */
export type OnceResult<T> =
  | { status: 'performed'; outcome: T }
  | { status: 'replayed'; outcome: T }
  | { status: 'refused'; reason: 'used' | 'in_progress' | 'expired' };

/**
 * A store that runs an action at most once per nonce.
 *
 * `once(request, action)`:
 * 1. claims `request.nonce` atomically with its `expiresAt`: the first call
 *    to claim it wins, every later one learns it lost;
 * 2. the winner runs `action`, records its outcome (JSON) under the nonce,
 *    and gets `performed`;
 * 3. a later presentation with the same nonce and the same `requestDigest`
 *    gets `replayed` with the recorded outcome, so a client that lost the
 *    response converges instead of failing;
 * 4. a presentation with the same nonce and another `requestDigest` gets
 *    `refused` / `used`; nothing runs;
 * 5. while the winner's action is still running, a presentation either gets
 *    `refused` / `in_progress` at once (memory, Redis) or waits until the
 *    winner settles and then gets 3 or 4 (PostgreSQL, whose unique index
 *    blocks the second claim until the first transaction ends); each store
 *    says which;
 * 6. an entry whose `expiresAt` has passed and whose action has settled is
 *    forgotten: the nonce may be claimed again. The ticket that carries the
 *    nonce has expired by then, so the gate never presents it;
 * 7. a request whose `expiresAt` is at or before the store's own clock (the
 *    database's, Redis's) and that finds no unexpired entry gets `refused` /
 *    `expired`; nothing runs. The entry it would make is one the store
 *    forgets at once, or has forgotten: an instance whose clock runs behind
 *    the others' by more than the skew they allow would otherwise claim a
 *    nonce whose record was swept, and act on a used confirmation again.
 *
 * If `action` throws, the nonce is released and the same error rethrown, so
 * a failed attempt leaves nothing half-claimed and a retry may perform.
 *
 * An action must return a JSON value (`JSON.stringify` of it a string): one
 * that returns anything else (`undefined`, a `BigInt`, a cycle) gets a
 * `TypeError` after it ran, and the stores differ in what they keep, so never
 * rely on it. A store that cannot share a transaction (memory, Redis) keeps
 * the nonce used, with no outcome: a retry is refused `used`. A database store
 * rolls the claim back with the action's transaction: its writes there are
 * undone and a retry may perform again, as after a throw (effects outside the
 * transaction are not undone). `@mrtr/gate` hands stores JSON outcomes only.
 *
 * A store that cannot be reached, or fails before `action` runs, throws
 * {@link ReplayStoreUnavailableError} and `action` does not run (fail closed).
 * A request that is not a valid {@link OnceRequest} throws `TypeError` and
 * changes nothing.
 *
 * `Tx` is what the store hands the action: a transaction for a database
 * store, so claiming the nonce and the mutation commit or roll back together; nothing
 * for a store that cannot share a transaction with the caller.
 */
export interface ReplayStore<Tx = void> {
  /**
   * Run `action` at most once for `request.nonce` (see the interface).
   * @returns `performed`, `replayed` or `refused` ({@link OnceResult}).
   * @throws {TypeError} when `request` is malformed; nothing changed.
   * @throws {ReplayStoreUnavailableError} when the store failed; `action` did not run, or its effects were rolled back with the nonce's entry.
   * @throws whatever `action` throws, after releasing the nonce.
   */
  once<T extends Json>(
    request: OnceRequest,
    action: (tx: Tx) => Promise<T>,
  ): Promise<OnceResult<T>>;
  /**
   * What a settled, unexpired entry of `request.nonce` recorded, read
   * without claiming, locking or waiting: `replayed` with the outcome for an
   * identical request, `refused` / `used` for another `requestDigest`;
   * `undefined` when there is none (never claimed, an action still running,
   * or forgotten). Optional: {@link LedgerReplayStore} asks its ledger this
   * when the front store answers `in_progress`, so that a front claim left by
   * a process that died after the ledger committed still gives the recorded
   * outcome.
   * @throws {TypeError} when `request` is malformed.
   * @throws {ReplayStoreUnavailableError} when the store cannot be read.
   */
  recorded?<T extends Json>(request: OnceRequest): Promise<OnceResult<T> | undefined>;
  /**
   * Delete settled entries whose `expiresAt` is at or before `now`
   * (milliseconds since the epoch, default the store's clock). Optional:
   * stores whose backend expires entries by itself (Redis) need none. A
   * `now` that is not a time (`NaN`) or before 0 removes nothing.
   * @returns how many entries were removed.
   */
  sweep?(now?: number): number | Promise<number>;
}

/** Thrown by a store when its backend cannot be reached or fails (see `outcomeUnknown`). */
const REPLAYSTOREUNAVAILABLEERROR_BRAND = Symbol.for('@mrtr/replay/ReplayStoreUnavailableError');

/**
 * Recognised by brand: `instanceof` works across copies of this package in one process.
 *
 * `outcomeUnknown` is `true` only when the backend stopped answering while the
 * claim, the action and its outcome were being committed together (PostgreSQL
 * SQLSTATE `08007`, transaction_resolution_unknown): the action may or may not
 * have taken effect. Either way it took effect at most once, and an identical
 * retry of the request answers which: the recorded outcome if it committed, a
 * fresh run if it did not. Otherwise (`false`) the action did not run.
 */
export class ReplayStoreUnavailableError extends Error {
  override readonly name = 'ReplayStoreUnavailableError';
  readonly outcomeUnknown: boolean;
  constructor(message?: string, options?: ErrorOptions & { outcomeUnknown?: boolean }) {
    super(message, options);
    this.outcomeUnknown = options?.outcomeUnknown === true;
    Object.defineProperty(this, REPLAYSTOREUNAVAILABLEERROR_BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      typeof value === 'object' && value !== null && REPLAYSTOREUNAVAILABLEERROR_BRAND in value
    );
  }
}

/** Longest `nonce` and `requestDigest` a store accepts, in characters. */
export const MAX_ONCE_FIELD_LENGTH = 512;

/**
 * Latest `expiresAt`, milliseconds since the epoch (the year 275760): the
 * end of the ECMAScript time range (ECMA-262 §21.4.1.1), the latest time a
 * `Date` holds, so that every store (a PostgreSQL `timestamptz`, Redis's
 * `PXAT`, a map in memory) keeps any valid `expiresAt` alike.
 */
export const MAX_EXPIRES_AT = 8.64e15;

/**
 * Check that `request` is a well-formed {@link OnceRequest}; every store calls
 * it before touching its backend. Text a backend cannot keep exactly is
 * refused here, so that no store tells apart less than another: PostgreSQL
 * `text` holds no U+0000, and a lone surrogate becomes U+FFFD in UTF-8, which
 * would make two nonces one key in Redis or PostgreSQL.
 * @throws {TypeError} naming the bad field: `nonce` or `requestDigest` not a
 * non-empty, well-formed string of at most {@link MAX_ONCE_FIELD_LENGTH}
 * characters without U+0000, or
 * `expiresAt` not a number of milliseconds since the epoch from 0 to
 * {@link MAX_EXPIRES_AT}.
 */
export function assertOnceRequest(request: OnceRequest): void {
  if (typeof request !== 'object' || request === null)
    throw new TypeError('request must be an object');
  for (const field of ['nonce', 'requestDigest'] as const) {
    const value = request[field];
    if (
      typeof value !== 'string' ||
      value.length === 0 ||
      value.length > MAX_ONCE_FIELD_LENGTH ||
      !value.isWellFormed() ||
      value.includes('\u0000')
    )
      throw new TypeError(
        `request.${field} must be a non-empty, well-formed string of at most ${MAX_ONCE_FIELD_LENGTH} characters without U+0000`,
      );
  }
  const { expiresAt } = request;
  if (typeof expiresAt !== 'number' || !(expiresAt >= 0 && expiresAt <= MAX_EXPIRES_AT))
    throw new TypeError(
      `request.expiresAt must be a number of milliseconds since the epoch from 0 to ${MAX_EXPIRES_AT}`,
    );
}
