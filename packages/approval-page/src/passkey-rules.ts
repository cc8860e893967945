/**
 * The shape checks and rules of the passkey records, applied the same way
 * by every store before it touches its backend: bad input is refused with a
 * clear error and changes nothing.
 */
import { isIP } from 'node:net';
import { validateFormContent } from '@mrtr/wire';
import { approvalChallenge, RANDOM } from './challenge.js';
import type {
  ChallengeRequest,
  PasskeyCredential,
  PasskeyTransport,
  PendingChallenge,
  RegistrationChallenge,
} from './passkey-store.js';
import { APPROVAL_ID, isContent, isField, SESSION_KEY } from './rules.js';
import type { ChallengeResult, StoredApproval } from './store.js';

/** A credential id: 1 to 1023 bytes (WebAuthn §4 "Credential ID") as base64url, at most 1364 characters. */
export const CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,1364}$/;
/** Longest COSE public key kept, base64url characters (an ML-DSA-44 key is about 1,770). */
const MAX_PUBLIC_KEY = 4096;
/** Most credentials a principal may register. */
export const MAX_CREDENTIALS = 100;
/** Largest signature counter (an unsigned 32-bit value, WebAuthn §6.1.1). */
const MAX_COUNTER = 0xffff_ffff;

const TRANSPORTS: ReadonlySet<string> = new Set<PasskeyTransport>([
  'ble',
  'cable',
  'hybrid',
  'internal',
  'nfc',
  'smart-card',
  'usb',
]);

const isCounter = (n: unknown): n is number =>
  Number.isSafeInteger(n) && (n as number) >= 0 && (n as number) <= MAX_COUNTER;

/** @throws {TypeError} unless `id` is a base64url credential id. */
export function assertCredentialId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !CREDENTIAL_ID.test(id))
    throw new TypeError('credential id must be 1 to 1364 base64url characters');
}

/** @throws {TypeError} unless `principal` is a well-formed principal. */
export function assertPrincipal(principal: unknown): asserts principal is string {
  if (!isField(principal)) throw new TypeError('principal must be a well-formed string');
}

/** @throws {TypeError} unless `from` and `to` are signature counters. */
export function assertCounters(from: unknown, to: unknown): void {
  if (!isCounter(from) || !isCounter(to))
    throw new TypeError('counters must be integers from 0 to 2^32 - 1');
}

/** Check a {@link PasskeyCredential} before it is stored. @throws {TypeError} naming the first bad field. */
export function assertCredential(value: unknown): asserts value is PasskeyCredential {
  if (value === null || typeof value !== 'object')
    throw new TypeError('credential must be an object');
  const c = value as Record<string, unknown>;
  assertCredentialId(c.id);
  assertPrincipal(c.principal);
  if (
    typeof c.publicKey !== 'string' ||
    c.publicKey.length > MAX_PUBLIC_KEY ||
    !/^[A-Za-z0-9_-]+$/.test(c.publicKey)
  )
    throw new TypeError(`credential.publicKey must be 1 to ${MAX_PUBLIC_KEY} base64url characters`);
  if (!isCounter(c.counter))
    throw new TypeError('credential.counter must be an integer from 0 to 2^32 - 1');
  if (
    !Array.isArray(c.transports) ||
    c.transports.length > TRANSPORTS.size ||
    !c.transports.every((t) => TRANSPORTS.has(t))
  )
    throw new TypeError(`credential.transports must be a list of ${[...TRANSPORTS].join(', ')}`);
  if (!Number.isSafeInteger(c.createdAt))
    throw new TypeError('credential.createdAt must be an integer');
}

/** Only the contract's fields, in a fixed order: what a store serializes. */
export function credentialRecord(c: PasskeyCredential): PasskeyCredential {
  return {
    id: c.id,
    principal: c.principal,
    publicKey: c.publicKey,
    counter: c.counter,
    transports: [...c.transports],
    createdAt: c.createdAt,
  };
}

/** @throws {TypeError} for a malformed {@link ChallengeRequest}. */
export function assertChallengeRequest(value: unknown): asserts value is ChallengeRequest {
  if (value === null || typeof value !== 'object') throw new TypeError('request must be an object');
  const r = value as Record<string, unknown>;
  if (typeof r.id !== 'string' || !APPROVAL_ID.test(r.id))
    throw new TypeError('request.id must be 22 base64url characters');
  assertPrincipal(r.principal);
  if (typeof r.random !== 'string' || !RANDOM.test(r.random))
    throw new TypeError('request.random must be 43 base64url characters');
  if (!isContent(r.content))
    throw new TypeError('request.content must be an object of form values (`{}` for none)');
  if (!Number.isSafeInteger(r.expiresAt))
    throw new TypeError('request.expiresAt must be an integer');
}

/**
 * The challenge rule: given what is stored, the request and the clock,
 * either the refusal or the {@link PendingChallenge} to keep (derived here,
 * from the stored approval, so a store never keeps a challenge that does
 * not commit to its approval).
 */
export function judgeChallenge(
  stored: StoredApproval | undefined,
  request: ChallengeRequest,
  now: number,
):
  | { refused: Extract<ChallengeResult, { status: 'refused' }>['reason'] }
  | { keep: PendingChallenge } {
  if (!stored) return { refused: 'unknown' };
  const { approval } = stored;
  if (approval.principal !== request.principal) return { refused: 'principal' };
  if (stored.decision) return { refused: 'decided' };
  if (approval.expiresAt <= now || request.expiresAt <= now) return { refused: 'expired' };
  const schema = approval.requestedSchema ?? { type: 'object' as const, properties: {} };
  if (!validateFormContent(schema, request.content).ok) return { refused: 'content' };
  const content = structuredClone(request.content);
  const challenge = approvalChallenge({ ...approval, content, random: request.random });
  const expiresAt = Math.min(request.expiresAt, approval.expiresAt);
  return { keep: { random: request.random, challenge, content, expiresAt } };
}

/** @throws {TypeError} for a malformed registration key or challenge. */
export function assertRegistration(key: unknown, challenge?: unknown): void {
  if (typeof key !== 'string' || !SESSION_KEY.test(key))
    throw new TypeError('registration key must be 43 base64url characters');
  if (challenge === undefined) return;
  const c = challenge as Partial<RegistrationChallenge> | null;
  if (!c || typeof c.challenge !== 'string' || !/^[A-Za-z0-9_-]{16,128}$/.test(c.challenge))
    throw new TypeError('registration challenge must be 16 to 128 base64url characters');
  assertPrincipal(c.principal);
  if (!Number.isSafeInteger(c.expiresAt))
    throw new TypeError('registration challenge expiresAt must be an integer');
}

/**
 * Whether a ceremony's `clientDataJSON` (base64url) says it ran in a
 * top-level page: `crossOrigin` absent or `false` and no `topOrigin`
 * (WebAuthn §5.8.1, "CollectedClientData"). The page refuses framing
 * (`frame-ancestors 'none'`), so a ceremony in a frame was never its own.
 */
export function topLevelCeremony(clientDataJSON: string): boolean {
  try {
    const data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as unknown;
    if (data === null || typeof data !== 'object') return false;
    const { crossOrigin, topOrigin } = data as { crossOrigin?: unknown; topOrigin?: unknown };
    return (crossOrigin === undefined || crossOrigin === false) && topOrigin === undefined;
  } catch {
    return false;
  }
}

/**
 * Why passkeys cannot work on this page, or `null`: one served at an IP
 * address, since WebAuthn takes only a domain as relying party id (a
 * browser refuses there with a bare "invalid domain" error).
 * @param rpId the relying party id: the origin's host name (an IPv6 one in brackets).
 */
export function passkeyProblem(rpId: string): string | null {
  if (isIP(rpId.replace(/^\[(.*)\]$/, '$1')) === 0) return null;
  return `Passkeys cannot work on this page: it is served at an IP address (${rpId}), and browsers take passkeys only under a domain name. Ask the operator of this server to serve the approval page under a name such as localhost or a domain.`;
}
