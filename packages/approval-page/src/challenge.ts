/**
 * WebAuthn challenges that commit to one action (W3C Web Authentication
 * Level 3, §13.4.3 "Cryptographic Challenges"): a passkey assertion over an
 * approval's challenge signs this approval's ticket nonce, principal,
 * operation, argument digest, question digest and the person's answers,
 * plus a fresh server random, and nothing else can be approved with it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { canonicalize } from '@mrtr/digest';
import type { ApprovalBinding } from '@mrtr/gate';
import type { FormValue } from '@mrtr/wire';

/**
 * Domain-separation prefix of {@link approvalChallenge}: the ASCII bytes
 * `mrtr-approval-page/webauthn-challenge/v1` and one NUL. No other digest of
 * this project (`mrtr-gate/digest/v1`, CSRF tokens) hashes the same bytes.
 */
export const CHALLENGE_DOMAIN = 'mrtr-approval-page/webauthn-challenge/v1\u0000';

/** A server random: 256 bits as 43 base64url characters. */
export const RANDOM = /^[A-Za-z0-9_-]{43}$/;

/** A fresh server random for one challenge: 32 bytes from the CSPRNG, base64url (43 characters). */
export function newRandom(): string {
  return randomBytes(32).toString('base64url');
}

/** What an approval challenge commits to. */
export interface ChallengeInput extends ApprovalBinding {
  /** The approval id (22 base64url characters). */
  id: string;
  /** The answers to the approval's `requestedSchema` that the approval will record (`{}` for none). */
  content: Record<string, FormValue>;
  /** A fresh server random: 43 base64url characters (32 bytes); used at most once. */
  random: string;
}

/**
 * The WebAuthn challenge of an approval:
 * `base64url(SHA-256(CHALLENGE_DOMAIN ‖ UTF-8(JCS(input))))`, where JCS is
 * RFC 8785 canonical JSON of `{v: 1, id, nonce, principal, operation,
 * argumentsDigest, questionDigest, content, random}`. Any change of any
 * field gives another challenge; the same input always gives the same one,
 * so the server re-derives it from the stored approval when it verifies.
 * @returns 43 base64url characters (32 bytes), what `generateAuthenticationOptions` sends as `challenge`.
 * @throws {TypeError} when `random` is not 43 base64url characters.
 * @throws {CanonicalizeError} (of `@mrtr/digest`) for content that is not JSON data.
 */
export function approvalChallenge(input: ChallengeInput): string {
  if (typeof input.random !== 'string' || !RANDOM.test(input.random))
    throw new TypeError('random must be 43 base64url characters (32 bytes)');
  const canonical = canonicalize({
    v: 1,
    id: input.id,
    nonce: input.nonce,
    principal: input.principal,
    operation: input.operation,
    argumentsDigest: input.argumentsDigest,
    questionDigest: input.questionDigest,
    content: input.content,
    random: input.random,
  });
  return createHash('sha256')
    .update(CHALLENGE_DOMAIN)
    .update(canonical, 'utf8')
    .digest('base64url');
}

/**
 * The WebAuthn user handle (`user.id`) of a principal: the first 32 bytes of
 * SHA-256 over `mrtr-approval-page/webauthn-user/v1 ‖ NUL ‖ principal`.
 * Stable, so an authenticator keeps one discoverable credential per
 * principal and server, and carries no personal data (WebAuthn §14.6.1).
 */
export function userHandle(principal: string): Uint8Array<ArrayBuffer> {
  const digest = createHash('sha256')
    .update('mrtr-approval-page/webauthn-user/v1\u0000')
    .update(principal, 'utf8')
    .digest();
  return new Uint8Array(digest);
}

/**
 * The key a registration challenge is kept under: SHA-256 of the sign-in
 * session's CSRF secret under its own prefix (base64url, 43 characters). It
 * names one session without revealing its secret, so a registration can
 * only be finished in the session that began it.
 */
export function registrationKey(csrfSecret: string): string {
  return createHash('sha256')
    .update('mrtr-approval-page/webauthn-registration/v1\u0000')
    .update(csrfSecret, 'utf8')
    .digest('base64url');
}
