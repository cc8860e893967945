import { CanonicalizeError, digestEquals, digestJson } from '@mrtr/digest';
import type { OnceRequest } from '@mrtr/replay';
import { RECEIPT_LEVELS, type ReceiptClaims, type ReceiptLevel } from './claims.js';
import { ReceiptError } from './errors.js';
import { MAX_CLOCK_TOLERANCE_SECONDS } from './verify-signature.js';

/** What the executor is about to do; a receipt must approve exactly this. */
export interface ExpectedAction {
  /** The operation, `<method>:<name>` as the gate spells it, e.g. `tools/call:delete_service`. */
  operation: string;
  /**
   * The arguments the executor will act on (plain JSON data). Their RFC 8785
   * digest is recomputed here, exactly as the gate computed it
   * (`digestCanonical(canonicalize(arguments))`), and must equal the receipt's `ad`.
   */
  arguments: unknown;
  /**
   * The accepted answer's `content` the executor acts on (plain JSON data,
   * default `{}`): its digest must equal the receipt's `cd` (absent `cd`
   * stands for `{}`). An executor that reads a choice from the answer (a
   * flag such as "also destroy volumes") passes the content here and takes
   * the choice from it, so a changed choice is refused like changed arguments.
   */
  content?: unknown;
  /** The principal the executor acts for; absent: any (the receipt's `sub` is returned either way). */
  principal?: string;
  /** The weakest confirmation level accepted (default `form`, i.e. any). */
  minLevel?: ReceiptLevel;
}

/**
 * Prefix of the replay-store nonce a receipt claims: `mrtr-receipt/v1:` and
 * the ticket nonce. The prefix keeps the executor's claim apart from the
 * gate's claim of the same ticket nonce when both share one store.
 */
export const RECEIPT_NONCE_PREFIX = 'mrtr-receipt/v1:';

/** What an absent `cd` stands for: the digest of the empty answer `{}`. */
export const EMPTY_CONTENT = digestJson({});

/** Whether `value`'s RFC 8785 digest is `digest`; a value JSON cannot carry exactly was never confirmed by anyone. */
function digestMatches(value: unknown, digest: string): boolean {
  try {
    return digestEquals(digestJson(value), digest);
  } catch (error) {
    if (error instanceof CanonicalizeError) return false;
    throw error;
  }
}

/** Check the expectation itself before any receipt is looked at. @throws {TypeError} */
export function assertExpected(expected: ExpectedAction): void {
  if (typeof expected !== 'object' || expected === null)
    throw new TypeError('options must be an object');
  if (typeof expected.operation !== 'string' || expected.operation.length === 0)
    throw new TypeError('options.operation must be a non-empty string such as tools/call:<name>');
  if (!('arguments' in expected))
    throw new TypeError('options.arguments must be the arguments the executor acts on');
  if (expected.principal !== undefined && typeof expected.principal !== 'string')
    throw new TypeError('options.principal must be a string');
  if (expected.minLevel !== undefined && !RECEIPT_LEVELS.includes(expected.minLevel))
    throw new TypeError("options.minLevel must be 'form', 'url' or 'passkey'");
}

/**
 * Refuse a receipt for anything but the expected action.
 * @throws {ReceiptError} `operation_mismatch`, `arguments_mismatch`,
 *   `content_mismatch`, `principal_mismatch` or `insufficient_level`, in that order.
 */
export function checkAction(claims: ReceiptClaims, expected: ExpectedAction): void {
  const mismatch = actionMismatch(claims, expected);
  if (mismatch !== undefined) throw new ReceiptError(mismatch);
}

/**
 * The first part of `expected` that a receipt's claims do not approve, in
 * the order `verifyReceipt` checks them: the operation, the RFC 8785
 * digest of the arguments against `ad`, the answer's content against `cd`,
 * the principal, the level. For a person reading a receipt whose claims were
 * already verified (`mrtr receipt verify`): an executor calls `verifyReceipt`
 * or `verifyAndRun`, which also check the signature.
 *
 * @param claims the claims of a receipt whose signature was verified
 *   (`verifyReceiptSignature`).
 * @param expected the action; `content` absent stands for the empty answer `{}`.
 * @param options `content: 'when-given'` leaves the answer unchecked when
 *   `expected.content` is absent (for someone who does not hold the answer);
 *   the default, `'always'`, checks it against `{}` then.
 * @returns `undefined` when the receipt approves exactly `expected`, else the
 *   `ReceiptErrorCode` of the first mismatch.
 * @throws {TypeError} for an `expected` that is not as documented (no
 *   operation or arguments, an unknown `minLevel`) or another `content` option.
 */
export function actionMismatch(
  claims: ReceiptClaims,
  expected: ExpectedAction,
  options: { content?: 'always' | 'when-given' } = {},
):
  | 'operation_mismatch'
  | 'arguments_mismatch'
  | 'content_mismatch'
  | 'principal_mismatch'
  | 'insufficient_level'
  | undefined {
  assertExpected(expected);
  const content = options?.content ?? 'always';
  if (content !== 'always' && content !== 'when-given')
    throw new TypeError("options.content must be 'always' or 'when-given'");
  if (claims.op !== expected.operation) return 'operation_mismatch';
  if (!digestMatches(expected.arguments, claims.ad)) return 'arguments_mismatch';
  const checksContent = expected.content !== undefined || content === 'always';
  if (checksContent && !digestMatches(expected.content ?? {}, claims.cd ?? EMPTY_CONTENT))
    return 'content_mismatch';
  if (expected.principal !== undefined && claims.sub !== expected.principal)
    return 'principal_mismatch';
  const min = RECEIPT_LEVELS.indexOf(expected.minLevel ?? 'form');
  if (RECEIPT_LEVELS.indexOf(claims.lvl) < min) return 'insufficient_level';
  return undefined;
}

/**
 * The replay-store request that makes a confirmation usable once: keyed by its
 * ticket nonce (so a second receipt minted for the same confirmation is
 * refused too), `requestDigest` the receipt's `jti`, kept until no verifier
 * could accept the receipt any more (`exp` plus the largest tolerance), and
 * twice as long again: with each clock within the tolerance of true time, a
 * verifier may run behind by it while the clock that expires the record
 * (Redis `PXAT`, another instance's sweep) runs ahead by it.
 */
export function onceRequestOf(claims: ReceiptClaims): OnceRequest {
  return {
    nonce: `${RECEIPT_NONCE_PREFIX}${claims.n}`,
    requestDigest: claims.jti,
    expiresAt: (claims.exp + 3 * MAX_CLOCK_TOLERANCE_SECONDS) * 1000,
  };
}
