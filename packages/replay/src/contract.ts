/**
 * The `ReplayStore` contract: at-most-once execution of a confirmed
 * operation, keyed by the ticket nonce. MCP 2026-07-28 (`basic/patterns/mrtr`,
 * "Server Requirements", warning on single use) leaves this to the server.
 */

/** What identifies one presentation of a confirmation. */
export interface ClaimRequest {
  /** The ticket nonce (`n` claim): the single-use identity. */
  nonce: string;
  /**
   * Digest of everything the answer bound: principal, operation, argument
   * digest, input key and the response. An identical re-issue has the same
   * digest and gets the recorded outcome back.
   */
  requestDigest: string;
  /** When the entry may be forgotten, milliseconds since the epoch (the ticket's `exp` plus skew). */
  expiresAt: number;
}

/** A JSON value an outcome may hold; outcomes are stored and returned as data. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The result of {@link ReplayStore.once}.
 * - `performed`: this call claimed the nonce, ran the action, and recorded its outcome.
 * - `replayed`: the nonce was already used by an identical request that completed; its recorded outcome.
 * - `refused`: the nonce is used by a different request (`used`), or an identical one is still running (`in_progress`). Nothing ran.
 */
export type OnceResult<T> =
  | { status: 'performed'; outcome: T }
  | { status: 'replayed'; outcome: T }
  | { status: 'refused'; reason: 'used' | 'in_progress' };

/**
 * A store that runs an action at most once per nonce.
 *
 * `once(claim, action)` claims `claim.nonce` atomically (the first claim
 * wins, every later one learns it lost), runs `action`, and records the
 * outcome under the nonce. If `action` throws, the claim is released and the
 * error rethrown, so a failed attempt leaves nothing half-claimed. A store
 * that cannot be reached throws (fails closed) and `action` does not run.
 *
 * `Tx` is what the store hands the action: a transaction for a database
 * store, so the claim and the mutation commit or roll back together; nothing
 * for a store that cannot share a transaction with the caller.
 */
export interface ReplayStore<Tx = void> {
  once<T extends Json>(claim: ClaimRequest, action: (tx: Tx) => Promise<T>): Promise<OnceResult<T>>;
}

/** Thrown by a store when its backend cannot be reached or fails; the operation did not run. */
export class ReplayStoreUnavailableError extends Error {
  override readonly name = 'ReplayStoreUnavailableError';
}
