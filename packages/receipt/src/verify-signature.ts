import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import {
  isCompactShape,
  RECEIPT_ALGORITHM,
  RECEIPT_TYPE,
  type ReceiptClaims,
  receiptClaimsOf,
} from './claims.js';
import { ReceiptError } from './errors.js';
import { type ReceiptKeySource, receiptKeyResolver } from './key-source.js';

/** Default clock tolerance on `iat` and `exp`, seconds. */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;
/** Largest clock tolerance a verifier accepts, seconds: beyond this, fix the clocks. */
export const MAX_CLOCK_TOLERANCE_SECONDS = 300;

/** Options of {@link verifyReceiptSignature}: which keys, whose receipts, at what time. */
export interface VerifyReceiptSignatureOptions {
  /** The public keys ({@link ReceiptKeySource}): a JWKS, a JWKS URL, or a jose key resolver. */
  keys: ReceiptKeySource;
  /** The expected `iss`; absent: any issuer whose key is in `keys`. */
  issuer?: string;
  /** The time to verify at, milliseconds since the epoch (default `Date.now()`). */
  now?: number;
  /** Clock skew tolerated on `iat` and `exp`, seconds: an integer from 0 to 300 (default 30). */
  clockToleranceSeconds?: number;
}

/** A receipt whose signature, header, claims and times were checked. */
export interface VerifiedReceipt {
  /** Its claims. */
  claims: ReceiptClaims;
  /** The `kid` of the key it verified under. */
  kid: string;
}

const KID = /^[A-Za-z0-9_.-]{1,64}$/;

/** The time and tolerance of `options`, checked. @throws {TypeError} */
export function clockOf(options: VerifyReceiptSignatureOptions): {
  now: number;
  tolerance: number;
} {
  const now = options.now ?? Date.now();
  if (typeof now !== 'number' || !Number.isFinite(now) || now < 0)
    throw new TypeError('options.now must be a time in milliseconds since the epoch');
  const tolerance = options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!Number.isSafeInteger(tolerance) || tolerance < 0 || tolerance > MAX_CLOCK_TOLERANCE_SECONDS)
    throw new TypeError(
      `options.clockToleranceSeconds must be an integer from 0 to ${MAX_CLOCK_TOLERANCE_SECONDS}`,
    );
  return { now, tolerance };
}

/**
 * Refuse by the header alone, before any key is looked up: wrong shape,
 * algorithm or type. Headers are not yet authenticated here; that only makes
 * these refusals early, the signature check still follows for what passes.
 * @returns the `kid`.
 */
function checkHeader(receipt: unknown): string {
  if (!isCompactShape(receipt)) throw new ReceiptError('malformed');
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(receipt) as Record<string, unknown>;
  } catch {
    throw new ReceiptError('malformed');
  }
  if (header.alg !== RECEIPT_ALGORITHM) throw new ReceiptError('unsupported_algorithm');
  if (header.typ !== RECEIPT_TYPE) throw new ReceiptError('wrong_type');
  if (typeof header.kid !== 'string' || !KID.test(header.kid) || 'crit' in header)
    throw new ReceiptError('malformed');
  if (receipt.endsWith('.')) throw new ReceiptError('malformed'); // no signature at all
  return header.kid;
}

/** jose's error as one of ours, never keeping it: its claim errors carry the decoded payload. */
function refusalOf(error: unknown): ReceiptError {
  if (error instanceof ReceiptError) return error;
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return new ReceiptError('bad_signature');
  if (error instanceof errors.JWTExpired) return new ReceiptError('expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return new ReceiptError('wrong_issuer');
    if (error.claim === 'typ') return new ReceiptError('wrong_type');
    if (error.claim === 'nbf') return new ReceiptError('not_yet_valid');
    return new ReceiptError('malformed');
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return new ReceiptError('unsupported_algorithm');
  // JWSInvalid, JWTInvalid, or a key the runtime could not use: refused, fail closed.
  return new ReceiptError('malformed');
}

/**
 * Verify a receipt's authenticity and freshness, but NOT what it approves:
 * compact JWS shape, `alg` `EdDSA` only, `typ` {@link RECEIPT_TYPE}, a `kid`
 * in `keys`, the Ed25519 signature (through jose's `jwtVerify`), the claims
 * of a receipt, `iss` (when `issuer` is given), `iat` not ahead and `exp` not
 * past, each within the clock tolerance. For `mrtr receipt verify`, which
 * shows what a receipt proves; an executor uses `verifyReceipt` or
 * `verifyAndRun`, which also check the operation, the arguments and single use.
 *
 * @param receipt the compact JWS, as received (any value is refused cleanly).
 * @returns its claims and the `kid` it verified under.
 * @throws {ReceiptError} `malformed`, `unsupported_algorithm`, `wrong_type`,
 *   `unknown_key`, `ambiguous_key`, `keys_unavailable`, `bad_signature`, `wrong_issuer`,
 *   `not_yet_valid` or `expired`, checked in that order.
 * @throws {TypeError} for options that are not as documented.
 */
export async function verifyReceiptSignature(
  receipt: string,
  options: VerifyReceiptSignatureOptions,
): Promise<VerifiedReceipt> {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('options must be an object');
  const { now, tolerance } = clockOf(options);
  const { issuer } = options;
  if (issuer !== undefined && typeof issuer !== 'string')
    throw new TypeError('options.issuer must be a string');
  const resolver = receiptKeyResolver(options.keys);
  const kid = checkHeader(receipt);
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(receipt, resolver, {
      algorithms: [RECEIPT_ALGORITHM],
      typ: RECEIPT_TYPE,
      ...(issuer !== undefined ? { issuer } : {}),
      clockTolerance: tolerance,
      currentDate: new Date(now),
    }));
  } catch (error) {
    throw refusalOf(error);
  }
  const claims = receiptClaimsOf(payload);
  if (claims.iat > Math.floor(now / 1000) + tolerance) throw new ReceiptError('not_yet_valid');
  return { claims, kid };
}
