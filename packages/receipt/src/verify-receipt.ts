import { type ReplayStore, ReplayStoreUnavailableError } from '@mrtr/replay';
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
   * verifies again until it expires.
   */
  store?: ReplayStore<Tx>;
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
 * @throws {TypeError} for options that are not as documented.
 */
export async function verifyReceipt<Tx = unknown>(
  receipt: string,
  options: VerifyReceiptOptions<Tx>,
): Promise<VerifiedReceipt> {
  assertExpected(options);
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
  if (result.status !== 'performed') throw new ReceiptError('already_used');
  return verified;
}
