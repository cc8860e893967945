import { ReceiptError } from './errors.js';

/**
 * The `typ` header of every receipt (RFC 7515 §4.1.9, explicit typing as
 * RFC 8725 §3.11 recommends): a verifier refuses a JWT of another kind signed
 * by the same key, and a receipt can never pass for another kind of JWT.
 */
export const RECEIPT_TYPE = 'mrtr-receipt+jwt';

/** The only JWS algorithm (`alg`) a receipt is signed or verified with: EdDSA over Ed25519 (RFC 8037). */
export const RECEIPT_ALGORITHM = 'EdDSA';

/** Longest receipt string a verifier decodes, characters (8 KiB); longer ones are `malformed` at once. */
export const MAX_RECEIPT_LENGTH = 8192;

/** Three base64url segments; the signature may be empty here so that `alg: none` can be named as such. */
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Whether `value` has the shape of a compact JWS (RFC 7515 §7.1) of at most
 * {@link MAX_RECEIPT_LENGTH} characters: three unpadded base64url segments,
 * nothing around them, each in its canonical spelling (RFC 4648 §3.5: the
 * unused low bits of the last character are zero). Decoders are lenient
 * (padding, whitespace, those bits); a receipt has one spelling, so that
 * anything keyed on the receipt string sees one receipt.
 */
export function isCompactShape(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= MAX_RECEIPT_LENGTH &&
    COMPACT.test(value) &&
    value
      .split('.')
      .every((segment) => Buffer.from(segment, 'base64url').toString('base64url') === segment)
  );
}

/** Longest receipt lifetime (`exp - iat`), seconds (one day): a signer refuses a longer `ttlSeconds`, a verifier a longer-lived receipt. */
export const MAX_RECEIPT_TTL_SECONDS = 86_400;

/**
 * How the principal confirmed, weakest first (the levels of DESIGN "What a
 * yes proves"):
 * - `form`: a client bound to the principal answered an `elicitation/create`
 *   form; not proof that a person did;
 * - `url`: a person signed in as the principal approved on the server's own
 *   page (URL-mode elicitation);
 * - `passkey`: as `url`, with a WebAuthn assertion (user presence and
 *   verification) over this action by one of the principal's credentials.
 */
export type ReceiptLevel = 'form' | 'url' | 'passkey';

/** The levels in order, weakest first; `minLevel` compares positions in it. */
export const RECEIPT_LEVELS: readonly ReceiptLevel[] = ['form', 'url', 'passkey'];

/**
 * What the signer is asked to attest: the claims of a receipt that the caller
 * supplies (the signer adds `iss`, `iat`, `exp` and `jti`). Strings must be
 * non-empty and well-formed Unicode (no lone surrogates).
 */
export interface ReceiptInput {
  /** The principal who confirmed (JWT `sub`), at most 256 characters. */
  sub: string;
  /** The operation approved, `<method>:<name>` as the gate spells it, e.g. `tools/call:delete_service`; at most 512 characters. */
  op: string;
  /** Argument digest: `digestJson(arguments)` of `@mrtr/digest` (`sha256:` + 43 base64url characters). */
  ad: string;
  /**
   * Digest of the question shown to the principal, same form as `ad`: the
   * gate's is `digestJson({ mode, message, requestedSchema })`, `mode` the
   * confirmation level (README, "The question digest").
   */
  qd: string;
  /** How it was confirmed. */
  lvl: ReceiptLevel;
  /** The WebAuthn credential id (base64url) that made the assertion: required for `passkey`, absent otherwise. */
  cred?: string;
  /**
   * Content digest: `digestJson(content)` of the accepted elicitation
   * response's `content` (the form's answer, e.g. a "also destroy volumes"
   * flag; `{}` for an approval on the page), same form as `ad`. Absent: the
   * answer was `{}`.
   */
  cd?: string;
  /** The confirmation's ticket nonce (the ticket's `nonce`), at most 256 characters: what single use claims. */
  n: string;
}

/** The claims of a receipt as signed: {@link ReceiptInput} plus the registered JWT claims (RFC 7519 §4.1). */
export interface ReceiptClaims extends ReceiptInput {
  /** Issuer: who signed (the server's identifier). */
  iss: string;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expires at, seconds since the epoch; after it (plus tolerance) the receipt is refused. */
  exp: number;
  /** Unique id of this receipt: 16 random bytes as 22 base64url characters. */
  jti: string;
}

const DIGEST = /^sha256:[A-Za-z0-9_-]{43}$/;
const B64URL = /^[A-Za-z0-9_-]+$/;
/** Longest passkey credential id, base64url characters: WebAuthn allows 1023 bytes. */
const MAX_CREDENTIAL_ID = 1364;

type Check = (value: unknown) => boolean;
const text =
  (max: number): Check =>
  (value) =>
    typeof value === 'string' && value.length > 0 && value.length <= max && value.isWellFormed();
const digest: Check = (value) => typeof value === 'string' && DIGEST.test(value);
/** The confirmation's nonce: a replay store's key, which may not hold U+0000. */
const nonce: Check = (value) => text(256)(value) && !(value as string).includes('\u0000');
/** Latest time a `Date` holds, seconds since the epoch: a later `iat` or `exp` names no date. */
const MAX_DATE_SECONDS = 8_640_000_000_000;
const seconds: Check = (value) =>
  Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_DATE_SECONDS;

/** Each claim a caller supplies, with its rule in words for a `TypeError`. */
const INPUT_RULES: [keyof ReceiptInput, Check, string][] = [
  ['sub', text(256), 'a non-empty string of at most 256 characters'],
  ['op', text(512), 'a non-empty string of at most 512 characters'],
  ['ad', digest, 'a digest of @mrtr/digest (sha256: and 43 base64url characters)'],
  ['qd', digest, 'a digest of @mrtr/digest (sha256: and 43 base64url characters)'],
  ['lvl', (v) => RECEIPT_LEVELS.includes(v as ReceiptLevel), "'form', 'url' or 'passkey'"],
  ['n', nonce, 'a non-empty string of at most 256 characters without U+0000'],
];

function credentialOk(lvl: unknown, cred: unknown): boolean {
  if (lvl !== 'passkey') return cred === undefined;
  return typeof cred === 'string' && cred.length <= MAX_CREDENTIAL_ID && B64URL.test(cred);
}

/**
 * Check what a caller asks the signer to attest.
 * @throws {TypeError} naming the first bad claim; nothing is signed.
 */
export function assertReceiptInput(input: ReceiptInput): void {
  if (typeof input !== 'object' || input === null)
    throw new TypeError('receipt input must be an object');
  for (const [name, ok, rule] of INPUT_RULES)
    if (!ok(input[name])) throw new TypeError(`receipt claim ${name} must be ${rule}`);
  if (input.cd !== undefined && !digest(input.cd))
    throw new TypeError(
      'receipt claim cd must be a digest of @mrtr/digest (sha256: and 43 base64url characters), or absent',
    );
  if (!credentialOk(input.lvl, input.cred))
    throw new TypeError(
      'receipt claim cred must be the base64url credential id for lvl passkey, and absent otherwise',
    );
}

/**
 * The receipt claims of an authentic payload, only those, or `malformed`:
 * the signer would never have signed a payload that fails this, so one that
 * does comes from a signer that is buggy or not ours.
 * @throws {ReceiptError} `malformed`.
 */
export function receiptClaimsOf(payload: Record<string, unknown>): ReceiptClaims {
  const p = payload as Partial<Record<keyof ReceiptClaims, unknown>>;
  const shaped =
    INPUT_RULES.every(([name, ok]) => ok(p[name])) &&
    credentialOk(p.lvl, p.cred) &&
    (p.cd === undefined || digest(p.cd)) &&
    text(256)(p.iss) &&
    text(256)(p.jti) &&
    seconds(p.iat) &&
    seconds(p.exp) &&
    (p.exp as number) > (p.iat as number) &&
    (p.exp as number) - (p.iat as number) <= MAX_RECEIPT_TTL_SECONDS;
  if (!shaped) throw new ReceiptError('malformed');
  const claims: ReceiptClaims = {
    iss: p.iss as string,
    sub: p.sub as string,
    iat: p.iat as number,
    exp: p.exp as number,
    jti: p.jti as string,
    op: p.op as string,
    ad: p.ad as string,
    qd: p.qd as string,
    lvl: p.lvl as ReceiptLevel,
    n: p.n as string,
  };
  if (p.cred !== undefined) claims.cred = p.cred as string;
  if (p.cd !== undefined) claims.cd = p.cd as string;
  return claims;
}
