/**
 * The shape checks and the decision rule every store applies the same way,
 * before it touches its backend: bad input is refused with a clear error
 * and changes nothing.
 */
import {
  type ApprovalBinding,
  MAX_APPROVAL_FIELD_LENGTH,
  MAX_APPROVAL_MESSAGE_LENGTH,
  type PendingApproval,
} from '@mrtr/gate';
import { RequestedSchemaSchema, validateFormContent } from '@mrtr/wire';
import type {
  DecideRefusal,
  DecideRequest,
  DecideResult,
  FinalDecision,
  SessionRecord,
  StoredApproval,
} from './store.js';

/** An approval id: 128 random bits as 22 base64url characters. */
export const APPROVAL_ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * Longest question text a store keeps, UTF-16 code units (the page shows all of it), and longest
 * `requestedSchema` and answer as JSON: the gate's bound, which it checks before it opens one.
 */
export const MAX_MESSAGE_LENGTH = MAX_APPROVAL_MESSAGE_LENGTH;
/** Longest binding field (nonce, principal, operation, digests), characters: the gate's bound. */
const MAX_FIELD_LENGTH = MAX_APPROVAL_FIELD_LENGTH;

const BINDING_FIELDS = [
  'nonce',
  'principal',
  'operation',
  'argumentsDigest',
  'questionDigest',
] as const satisfies readonly (keyof ApprovalBinding)[];

/** With the `u` flag a surrogate class matches only unpaired surrogates. */
const LONE_SURROGATE = /\p{Cs}/u;

/** A non-empty, well-formed (no lone surrogate), NUL-free string of at most `max` characters. */
export function isField(value: unknown, max = MAX_FIELD_LENGTH): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= max &&
    !LONE_SURROGATE.test(value) &&
    !value.includes('\0')
  );
}

/**
 * Check a {@link PendingApproval} before it is stored.
 * @throws {TypeError} naming the first bad field; `expiresAt` must be an
 *   integer number of milliseconds after `now`.
 */
export function assertPendingApproval(
  value: unknown,
  now: number,
): asserts value is PendingApproval {
  if (value === null || typeof value !== 'object')
    throw new TypeError('approval must be an object');
  const a = value as Record<string, unknown>;
  if (typeof a.id !== 'string' || !APPROVAL_ID.test(a.id))
    throw new TypeError('approval.id must be 22 base64url characters');
  for (const field of BINDING_FIELDS)
    if (!isField(a[field]))
      throw new TypeError(
        `approval.${field} must be a well-formed string of 1 to ${MAX_FIELD_LENGTH} characters without NUL`,
      );
  // The question may hold anything a person typed (it is stored as JSON text and shown escaped).
  if (typeof a.message !== 'string' || a.message.length > MAX_MESSAGE_LENGTH)
    throw new TypeError(
      `approval.message must be a string of at most ${MAX_MESSAGE_LENGTH} characters`,
    );
  if (a.requestedSchema !== undefined) {
    const parsed = RequestedSchemaSchema.safeParse(a.requestedSchema);
    if (!parsed.success || JSON.stringify(a.requestedSchema).length > MAX_MESSAGE_LENGTH)
      throw new TypeError(
        'approval.requestedSchema must be a flat form schema (client/elicitation) of at most 64 Ki characters as JSON',
      );
  }
  if (a.level !== 'url' && a.level !== 'presence')
    throw new TypeError('approval.level must be "url" or "presence"');
  if (!Number.isSafeInteger(a.expiresAt) || (a.expiresAt as number) <= now)
    throw new TypeError('approval.expiresAt must be a future time in milliseconds since the epoch');
}

/** Only the contract's fields, in a fixed order: what a store serializes and compares. */
export function pendingApproval(a: PendingApproval): PendingApproval {
  const copy: PendingApproval = {
    id: a.id,
    nonce: a.nonce,
    principal: a.principal,
    operation: a.operation,
    argumentsDigest: a.argumentsDigest,
    questionDigest: a.questionDigest,
    message: a.message,
    level: a.level,
    expiresAt: a.expiresAt,
  };
  if (a.requestedSchema !== undefined) copy.requestedSchema = structuredClone(a.requestedSchema);
  return copy;
}

/** Whether two approvals are the same in every field. */
export function sameApproval(a: PendingApproval, b: PendingApproval): boolean {
  return JSON.stringify(pendingApproval(a)) === JSON.stringify(pendingApproval(b));
}

/** Whether `approval` was opened with exactly `binding` (every {@link ApprovalBinding} field equal). */
export function matchesBinding(approval: PendingApproval, binding: ApprovalBinding): boolean {
  if (binding === null || typeof binding !== 'object') return false;
  return BINDING_FIELDS.every((field) => approval[field] === binding[field]);
}

/** @throws {TypeError} for a malformed {@link DecideRequest}. */
export function assertDecideRequest(value: unknown): asserts value is DecideRequest {
  if (value === null || typeof value !== 'object') throw new TypeError('request must be an object');
  const r = value as Record<string, unknown>;
  if (typeof r.id !== 'string' || !APPROVAL_ID.test(r.id))
    throw new TypeError('request.id must be 22 base64url characters');
  if (!isField(r.principal)) throw new TypeError('request.principal must be a well-formed string');
  if (r.outcome !== 'approved' && r.outcome !== 'denied' && r.outcome !== 'withdrawn')
    throw new TypeError('request.outcome must be "approved", "denied" or "withdrawn"');
  if (r.outcome === 'approved') {
    if (r.via !== 'url' && r.via !== 'passkey')
      throw new TypeError('request.via must be "url" or "passkey" for an approval');
    if (r.via === 'passkey' && !isField(r.credentialId, 1400))
      throw new TypeError('request.credentialId is required for a passkey approval');
    if (r.via === 'passkey' && (typeof r.challenge !== 'string' || !CHALLENGE.test(r.challenge)))
      throw new TypeError(
        'request.challenge (43 base64url characters) is required for a passkey approval',
      );
    if (r.via === 'passkey' && r.content !== undefined)
      throw new TypeError(
        'a passkey approval records the content its challenge committed to: omit request.content',
      );
  }
  if (r.content !== undefined && !isContent(r.content))
    throw new TypeError(
      'request.content must be an object of strings, finite numbers, booleans and string arrays (at most 64 Ki characters as JSON)',
    );
}

/** A WebAuthn challenge of this package: 32 bytes as 43 base64url characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** A plain object of form values (`FormValue` of `@mrtr/wire`), bounded in size. */
export function isContent(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const ok = (v: unknown) =>
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v)) ||
    (Array.isArray(v) && v.every((item) => typeof item === 'string'));
  return Object.values(value).every(ok) && JSON.stringify(value).length <= MAX_MESSAGE_LENGTH;
}

/**
 * The decision rule: given what is stored (or `undefined`), the request and
 * the clock, either the refusal or the decision to record. Stores run it
 * before their atomic "record if still pending" step.
 */
export function judge(
  stored: StoredApproval | undefined,
  request: DecideRequest,
  now: number,
): { refused: DecideRefusal; decision?: FinalDecision } | { record: FinalDecision } {
  if (!stored) return { refused: 'unknown' };
  const { approval, decision } = stored;
  // Another principal learns nothing about the approval, not even its decision.
  if (approval.principal !== request.principal) return { refused: 'principal' };
  if (decision) {
    // The client's decline used the ticket up: an approval no retry carried out never will be.
    if (
      request.outcome === 'withdrawn' &&
      decision.status === 'approved' &&
      approval.expiresAt > now
    )
      return { record: { status: 'withdrawn', decidedAt: now } };
    return { refused: 'decided', decision };
  }
  if (approval.expiresAt <= now) return { refused: 'expired' };
  if (request.outcome !== 'approved')
    return { record: { status: request.outcome, decidedAt: now } };
  if (approval.level === 'presence' && request.via !== 'passkey') return { refused: 'level' };
  const pending = stored.challenge;
  if (
    request.via === 'passkey' &&
    (!pending || pending.challenge !== request.challenge || pending.expiresAt <= now)
  )
    return { refused: 'challenge' };
  const content = (request.via === 'passkey' ? pending?.content : request.content) ?? {};
  const schema = approval.requestedSchema ?? { type: 'object' as const, properties: {} };
  if (!validateFormContent(schema, content).ok) return { refused: 'content' };
  const record: FinalDecision = { status: 'approved', via: request.via ?? 'url', decidedAt: now };
  if (request.via === 'passkey') record.credentialId = request.credentialId;
  if (Object.keys(content).length > 0) record.content = structuredClone(content);
  return { record };
}

/** The {@link DecideResult} of a refusing {@link judge} verdict (copies the decision). */
export function refusal(verdict: {
  refused: DecideRefusal;
  decision?: FinalDecision;
}): DecideResult {
  return verdict.decision
    ? { status: 'refused', reason: verdict.refused, decision: { ...verdict.decision } }
    : { status: 'refused', reason: verdict.refused };
}

/** A session key: the base64url SHA-256 of a session cookie (43 characters). */
export const SESSION_KEY = /^[A-Za-z0-9_-]{43}$/;

/** @throws {TypeError} for a malformed session key or record. */
export function assertSession(key: unknown, session?: unknown): void {
  if (typeof key !== 'string' || !SESSION_KEY.test(key))
    throw new TypeError('session key must be 43 base64url characters (a SHA-256 digest)');
  if (session === undefined) return;
  const s = session as Partial<SessionRecord> | null;
  if (
    !s ||
    !isField(s.principal) ||
    typeof s.csrfSecret !== 'string' ||
    !SESSION_KEY.test(s.csrfSecret)
  )
    throw new TypeError('session must have a principal and a 43-character base64url csrfSecret');
  if (!Number.isSafeInteger(s.expiresAt))
    throw new TypeError('session.expiresAt must be an integer');
}
