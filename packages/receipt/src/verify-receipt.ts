import { type OnceResult, type ReplayStore, ReplayStoreUnavailableError } from '@mrtr/replay';
import { ReceiptError } from './errors.js';
import { assertExpected, checkAction, type ExpectedAction, onceRequestOf } from './expected.js';
import {
  type VerifiedReceipt,
  type VerifyReceiptSignatureOptions,
  verifyReceiptSignature,
} from './verify-signature.js';

/** Options of {@link verifyReceipt}: what the executor is about to do, and how to check the receipt. */
export interface VerifyReceiptOptions<Tx = unknown>
  extends ExpectedAction,
    VerifyReceiptSignatureOptions {
  /**
   * A replay store to make the receipt single use: its confirmation is
   * claimed here, once. Absent: nothing is claimed, and the same receipt
   * verifies again until it expires. With a store, `now` must be left out.
   */
  store?: ReplayStore<Tx>;
}

/**
 * Refuse `now` beside `store`. The claim is kept until the receipt's `exp`
 * plus the tolerances by the store's clock; a verifier that checks at a
 * `now` of its choosing (fixed, or behind) would accept the receipt again
 * once the store has forgotten the claim. With a store, the time is the
 * system clock's, which the claim's lifetime assumes is within
 * `MAX_CLOCK_TOLERANCE_SECONDS` of the store's.
 * @throws {TypeError}
 */
export function assertSystemClockWithStore(options: { store?: unknown; now?: unknown }): void {
  if (options.store !== undefined && options.now !== undefined)
    throw new TypeError(
      'options.now cannot be given with options.store: single use is kept by the clocks, so it is checked at the system time (now is for verifying without a store, e.g. in an audit)',
    );
}

/**
 * Verify that a receipt approves exactly the action the executor is about to
 * take, and (with `store`) claim it so it is never accepted again.
 *
 * Checks, in order: everything {@link verifyReceiptSignature} checks (shape,
 * `alg`, `typ`, `kid`, signature, claims, issuer, time), then the operation,
 * the RFC 8785 digest of `arguments` against `ad`, the principal, the level,
 * and last the single-use claim. Nothing is claimed for a receipt refused
 * before that. Claiming here and then acting leaves a window in which a
 * crash loses the approval (never repeats the action); to make the claim and
 * the action one, use {@link verifyAndRun}.
 *
 * @param receipt the compact JWS, as received (any value is refused cleanly).
 * @returns its claims and the `kid` it verified under.
 * @throws {ReceiptError} with the first failing check's code
 *   ({@link ReceiptErrorCode}); `already_used` when its confirmation was
 *   already claimed; `store_unavailable` when the store failed (nothing claimed).
 * @throws {TypeError} for options that are not as documented, `now` given
 *   together with `store` among them.
 */
export async function verifyReceipt<Tx = unknown>(
  receipt: string,
  options: VerifyReceiptOptions<Tx>,
): Promise<VerifiedReceipt> {
  assertExpected(options);
  assertSystemClockWithStore(options);
  const verified = await verifyReceiptSignature(receipt, options);
  checkAction(verified.claims, options);
  if (options.store === undefined) return verified;
  let result: Awaited<ReturnType<ReplayStore<Tx>['once']>>;
  try {
    result = await options.store.once(onceRequestOf(verified.claims), async () => null);
  } catch (error) {
    if (error instanceof ReplayStoreUnavailableError)
      throw new ReceiptError('store_unavailable', { cause: error });
    throw error;
  }
  assertClaimed(result);
  return verified;
}

/**
 * The claim of a receipt's confirmation won, or its refusal as a `ReceiptError`:
 * `expired` when past its expiry by the store's clock (this verifier's runs
 * behind it), else `already_used`.
 * @throws {ReceiptError}
 */
export function assertClaimed<T>(
  result: OnceResult<T>,
): asserts result is { status: 'performed'; outcome: T } {
  if (result.status === 'performed') return;
  throw new ReceiptError(
    result.status === 'refused' && result.reason === 'expired' ? 'expired' : 'already_used',
  );
}
