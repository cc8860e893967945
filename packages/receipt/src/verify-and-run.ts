import { type Json, type ReplayStore, ReplayStoreUnavailableError } from '@mrtr/replay';
import { ReceiptError } from './errors.js';
import { assertExpected, checkAction, onceRequestOf } from './expected.js';
import {
  assertClaimed,
  assertSystemClockWithStore,
  type VerifyReceiptOptions,
} from './verify-receipt.js';
import { type VerifiedReceipt, verifyReceiptSignature } from './verify-signature.js';

/** What {@link verifyAndRun} returns once the action ran. */
export interface VerifiedRun<T> {
  /** The receipt that authorized the action. */
  receipt: VerifiedReceipt;
  /** What the action returned (also recorded by the store under the confirmation's nonce). */
  outcome: T;
}

/**
 * Verify a receipt as {@link verifyReceipt} does, then run `action` at most
 * once for its confirmation: the single-use claim and the action are one
 * `store.once` (`@mrtr/replay`), so two executors handed the same receipt,
 * or the same receipt twice, act once between them. With a store that shares
 * a transaction (`@mrtr/replay-postgres`), do the mutation through `tx` and
 * the claim commits or rolls back with it.
 *
 * If `action` throws, the store releases the claim and the error is rethrown
 * as it is: the receipt can be presented again until it expires (the action
 * did not complete).
 *
 * @param receipt the compact JWS, as received (any value is refused cleanly).
 * @param options what the executor is about to do, the keys, and the store (required).
 * @param action the destructive work; it gets the verified receipt and the store's `tx`, and returns JSON data.
 * @returns the verified receipt and the action's outcome.
 * @throws {ReceiptError} any code of {@link verifyReceipt}; `already_used`
 *   when the confirmation was claimed before (the action did not run);
 *   `store_unavailable` when the store failed (the action did not run, or
 *   what it did through `tx` was rolled back with the claim).
 * @throws {TypeError} for options that are not as documented, `now` among
 *   them (with a store the time is the system clock's).
 * @throws whatever `action` throws, after the claim was released.
 */
export async function verifyAndRun<T extends Json, Tx = void>(
  receipt: string,
  options: VerifyReceiptOptions<Tx> & { store: ReplayStore<Tx> },
  action: (receipt: VerifiedReceipt, tx: Tx) => Promise<T>,
): Promise<VerifiedRun<T>> {
  assertExpected(options);
  if (typeof options.store?.once !== 'function')
    throw new TypeError('options.store must be a ReplayStore (@mrtr/replay)');
  assertSystemClockWithStore(options);
  if (typeof action !== 'function') throw new TypeError('action must be a function');
  const verified = await verifyReceiptSignature(receipt, options);
  checkAction(verified.claims, options);
  let actionFailed = false;
  let result: Awaited<ReturnType<typeof options.store.once<T>>>;
  try {
    result = await options.store.once(onceRequestOf(verified.claims), async (tx: Tx) => {
      try {
        return await action(verified, tx);
      } catch (error) {
        actionFailed = true;
        throw error;
      }
    });
  } catch (error) {
    // Only the store's own failure is ours to name; the action's errors pass through untouched.
    if (!actionFailed && error instanceof ReplayStoreUnavailableError)
      throw new ReceiptError('store_unavailable', { cause: error });
    throw error;
  }
  assertClaimed(result);
  return { receipt: verified, outcome: result.outcome };
}
