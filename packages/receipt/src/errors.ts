/**
 * Why a receipt was refused. A closed set, checked in this order; none of
 * them carries anything decoded from the receipt.
 *
 * - `malformed`: not a string, longer than {@link MAX_RECEIPT_LENGTH}, not a
 *   compact JWS (RFC 7515 §7.1) with a JSON header and payload, no `kid`, a
 *   `crit` header, or (after the signature verified) claims that are not a
 *   receipt's (a missing or ill-typed claim).
 * - `unsupported_algorithm`: `alg` other than `EdDSA` (`none`, `HS256` keyed
 *   with the public key, `ES256`, …): refused before any key is looked up.
 * - `wrong_type`: `typ` other than {@link RECEIPT_TYPE}: another kind of JWT
 *   signed by the same key (RFC 8725 §3.11).
 * - `unknown_key`: no key in the verifier's set has this `kid` (never ours, or
 *   removed after rotation), or the key found is not an Ed25519 public key,
 *   or a set given as an object holds one under it that cannot be used.
 * - `ambiguous_key`: the verifier's set holds several keys under this `kid`
 *   (a key published twice, or two keys sharing an id): none is tried.
 * - `bad_signature`: the Ed25519 signature does not verify under the key of
 *   that `kid`: altered header or payload, or signed with another key.
 * - `wrong_issuer`: authentic, but `iss` is not the expected issuer.
 * - `not_yet_valid`: `iat` is more than the clock tolerance ahead.
 * - `expired`: `exp` is more than the clock tolerance behind.
 * - `operation_mismatch`: signed for another operation (`op`).
 * - `arguments_mismatch`: signed for other arguments: the RFC 8785 digest of
 *   the arguments the executor is about to act on differs from `ad` (or they
 *   cannot be canonicalized at all).
 * - `principal_mismatch`: signed for another principal than the expected one.
 * - `insufficient_level`: confirmed at a lower level than the minimum asked.
 * - `already_used`: the confirmation this receipt carries (its ticket nonce)
 *   was already claimed in the replay store.
 * - `keys_unavailable`: the key resolver failed (a JWKS URL that cannot be
 *   fetched, times out or serves no valid set); nothing was verified.
 * - `store_unavailable`: the replay store failed
 *   (`ReplayStoreUnavailableError`); nothing was claimed and the action did not run.
 */
export type ReceiptErrorCode =
  | 'malformed'
  | 'unsupported_algorithm'
  | 'wrong_type'
  | 'unknown_key'
  | 'ambiguous_key'
  | 'bad_signature'
  | 'wrong_issuer'
  | 'not_yet_valid'
  | 'expired'
  | 'operation_mismatch'
  | 'arguments_mismatch'
  | 'content_mismatch'
  | 'principal_mismatch'
  | 'insufficient_level'
  | 'already_used'
  | 'keys_unavailable'
  | 'store_unavailable';

/** One fixed sentence per code: a message never quotes the receipt. */
const MESSAGES: Record<ReceiptErrorCode, string> = {
  malformed: 'it is not a well-formed approval receipt',
  unsupported_algorithm: 'its algorithm is not EdDSA',
  wrong_type: 'its typ header is not that of an approval receipt',
  unknown_key: 'the verification key set has no usable key under its key id',
  ambiguous_key:
    'the verification key set holds several keys under its key id, so which one signed cannot be told: publish each key id once',
  bad_signature: 'its signature does not verify',
  wrong_issuer: 'it was issued by another issuer',
  not_yet_valid: 'it was issued in the future',
  expired: 'it has expired',
  operation_mismatch: 'it approves another operation',
  arguments_mismatch: 'it approves other arguments',
  content_mismatch: 'it approves another answer to the question',
  principal_mismatch: 'it was issued for another principal',
  insufficient_level: 'it was confirmed at a lower level than this operation requires',
  already_used: 'its confirmation was already used',
  keys_unavailable: 'the verification keys could not be loaded',
  store_unavailable: 'the replay store failed; nothing was claimed',
};

/**
 * The one error `verifyReceipt`, `verifyAndRun`, `verifyReceiptSignature`
 * and `describeReceipt` throw for a receipt they refuse, discriminated by
 * {@link ReceiptErrorCode} (as jose's errors are by `code`).
 *
 * The message is fixed per code and never holds a value taken from the
 * receipt; no `cause` is attached except for `keys_unavailable` and
 * `store_unavailable`, whose cause is the resolver's or the store's own error
 * (jose's claim errors carry the decoded payload, so they are never kept).
 */
export class ReceiptError extends Error {
  override readonly name = 'ReceiptError';
  /** Why the receipt was refused. */
  readonly code: ReceiptErrorCode;

  /**
   * @param options.detail what the verifier knows that helps the operator,
   *   appended to the fixed sentence (e.g. the key ids of its set); never a
   *   value from the receipt.
   */
  constructor(code: ReceiptErrorCode, options?: { cause?: unknown; detail?: string }) {
    const { detail, ...rest } = options ?? {};
    super(`receipt refused (${code}): ${MESSAGES[code]}${detail ?? ''}`, rest);
    this.code = code;
  }
}
