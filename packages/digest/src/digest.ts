import * as crypto from 'node:crypto';
import { canonicalize } from './canonicalize.js';

/**
 * Domain-separation prefix hashed before the canonical bytes: the 19 ASCII bytes
 * `mrtr-gate/digest/v1` followed by one NUL byte. A digest of tool arguments
 * therefore never equals a SHA-256 computed over the same canonical bytes for
 * another purpose (a bare hash, another application's digest), and the NUL
 * keeps the prefix from running into the JSON text. It is versioned with the
 * digest format: a new canonical form gets a new prefix.
 */
export const DIGEST_DOMAIN = 'mrtr-gate/digest/v1\u0000';

const domainBytes = Buffer.from(DIGEST_DOMAIN, 'latin1');

/**
 * Digest a JSON value: `"sha256:" + base64url(SHA-256(DIGEST_DOMAIN ‖ UTF-8(JCS(value))))`,
 * where JCS is RFC 8785 canonical JSON. Key order and whitespace never change
 * the digest; any change of a value does.
 *
 * @param value plain JSON data (see {@link canonicalize}).
 * @returns a 50-character string `sha256:<43 base64url chars>`.
 * @throws {CanonicalizeError} when the value cannot be canonicalized.
 */
export function digestJson(value: unknown): string {
  return digestCanonical(canonicalize(value));
}

/**
 * The digest of {@link digestJson} from canonical text the caller already
 * holds (the output of {@link canonicalize}), so a value needed both as
 * canonical JSON and as a digest is canonicalized once. The text is not
 * checked: pass only `canonicalize` output (which never holds a lone
 * surrogate; one in other text would be hashed as U+FFFD).
 *
 * @param canonical RFC 8785 text, hashed as UTF-8.
 * @returns a 50-character string `sha256:<43 base64url chars>`.
 */
export function digestCanonical(canonical: string): string {
  // node:crypto hashes natively; @noble/hashes' JavaScript SHA-256 took most of a small digest's time.
  // The prefix is ASCII and NUL, so UTF-8(prefix + text) is prefix ‖ UTF-8(text).
  if (oneShot) return `sha256:${oneShot('sha256', DIGEST_DOMAIN + canonical, 'base64url')}`;
  const hash = crypto.createHash('sha256').update(domainBytes).update(canonical, 'utf8');
  return `sha256:${hash.digest('base64url')}`;
}

/** `crypto.hash` (Node ≥ 20.12): a third of the cost of a `Hash` object for a small input. */
const oneShot = (
  crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }
).hash;

/**
 * Compare two digests in time independent of where they first differ: any
 * two strings, typically the `sha256:` digests {@link digestJson} returns
 * (50 characters: the prefix and 43 of base64url). Never throws.
 * @returns `true` only when both are strings of equal length and content.
 */
export function digestEquals(a: string, b: string): boolean {
  if (typeof a !== 'string' || typeof b !== 'string' || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
