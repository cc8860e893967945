import type { ApprovalDecision, PendingApproval } from '@mrtr/gate';
import type { FormValue } from '@mrtr/wire';
import type { ChallengeRequest, PasskeyStore, PendingChallenge } from './passkey-store.js';

/**
 * A decision once recorded, and when (`decidedAt`, ms since the epoch):
 * approved (with how) or denied on the page, or `withdrawn` when the client
 * declined the question on a retry, which used the ticket up
 * (`ApprovalChannel.withdraw` of `@mrtr/gate`). The gate reads a withdrawn
 * approval as `denied`.
 */
export type FinalDecision =
  | Extract<ApprovalDecision, { status: 'approved' | 'denied' }>
  | { status: 'withdrawn'; decidedAt: number };

/** An approval as the store keeps it: what {@link ApprovalStore.open} recorded and its decision, if any. */
export interface StoredApproval {
  approval: PendingApproval;
  /** `undefined` while pending. */
  decision: FinalDecision | undefined;
  /**
   * The pending passkey challenge ({@link ApprovalStore.setChallenge}), or
   * `undefined`; a recorded decision clears it.
   */
  challenge: PendingChallenge | undefined;
}

/** What {@link ApprovalStore.decide} is asked to record. */
export interface DecideRequest {
  /** The approval id (22 base64url characters). */
  id: string;
  /** The principal signed in on the page; must equal the approval's principal. */
  principal: string;
  /**
   * `approved` or `denied` (the page), or `withdrawn` (the gate, after the
   * client declined: see {@link FinalDecision}). A withdrawal is recorded
   * over a pending approval and also over an `approved` one, since the
   * decline used the ticket up and no retry can carry the approval out:
   * record it only then.
   */
  outcome: 'approved' | 'denied' | 'withdrawn';
  /**
   * How an approval was made: `url` (the button on the page) or `passkey`
   * (a WebAuthn assertion, with `credentialId`). A `presence` approval
   * accepts only `passkey`. Ignored for `denied` and `withdrawn`.
   */
  via?: 'url' | 'passkey';
  /** The passkey's credential id (base64url) when `via` is `passkey`. */
  credentialId?: string;
  /**
   * When `via` is `passkey`: the challenge the verified assertion signed. It
   * must be the approval's pending challenge, unexpired; recording the
   * decision clears it, so it is used at most once.
   */
  challenge?: string;
  /**
   * For an approval `via: 'url'`, the fields of the approval's
   * `requestedSchema` as the person filled them in; the store records it
   * only if it validates against that schema (`validateFormContent` of
   * `@mrtr/wire`). A passkey approval records the content its challenge
   * committed to instead, and must not carry `content`.
   */
  content?: Record<string, FormValue>;
}

/**
 * Why {@link ApprovalStore.decide} recorded nothing:
 * - `unknown`: no approval with this id (never opened, or expired and swept);
 * - `expired`: its `expiresAt` has passed;
 * - `principal`: the deciding principal is not the approval's;
 * - `level`: a `presence` approval asked to be approved without a passkey;
 * - `content`: an approval whose `content` does not validate against the approval's `requestedSchema`;
 * - `challenge`: a passkey approval whose challenge is not the approval's pending one, or has expired
 *   (never issued, replaced by a newer one, or already used);
 * - `decided`: a decision was already recorded (the first one wins; only a
 *   withdrawal replaces an approval, see {@link DecideRequest.outcome}).
 */
export type DecideRefusal =
  | 'unknown'
  | 'expired'
  | 'principal'
  | 'level'
  | 'content'
  | 'challenge'
  | 'decided';

/** The outcome of {@link ApprovalStore.decide}. */
export type DecideResult =
  | { status: 'recorded'; decision: FinalDecision }
  | { status: 'refused'; reason: DecideRefusal; decision?: FinalDecision };

/** The outcome of {@link ApprovalStore.setChallenge}. */
export type ChallengeResult =
  | { status: 'set'; challenge: PendingChallenge }
  | { status: 'refused'; reason: Exclude<DecideRefusal, 'level' | 'challenge'> };

/** A sign-in session of the page, as a store keeps it. */
export interface SessionRecord {
  /** The principal signed in. */
  principal: string;
  /** The session's CSRF secret (base64url, 256 random bits): decision forms carry tokens derived from it. */
  csrfSecret: string;
  /** When the session ends, milliseconds since the epoch. */
  expiresAt: number;
}

/**
 * Server-side sign-in sessions of the approval page, shared by every
 * instance. Keys are the SHA-256 digests of the session cookies (base64url),
 * never the cookies themselves, so a copy of the store signs nobody in.
 */
export interface SessionStore {
  /** Record a session under `key` (its cookie's digest). @throws {ApprovalStoreUnavailableError}. */
  createSession(key: string, session: SessionRecord): Promise<void>;
  /** The live session under `key`, or `undefined` (missing or ended). @throws {ApprovalStoreUnavailableError}. */
  readSession(key: string): Promise<SessionRecord | undefined>;
  /** Forget the session under `key` (sign-out); a missing one is no error. @throws {ApprovalStoreUnavailableError}. */
  deleteSession(key: string): Promise<void>;
}

/**
 * Where URL-mode approvals and their decisions live between round 1 and the
 * retry, shared by every server instance (the replay store's database), and
 * the page's sign-in sessions.
 *
 * Rules every implementation keeps (checked by the package's contract tests):
 * a decision is recorded at most once, atomically (the first wins; a second
 * changes nothing), only by the approval's principal, only before
 * `expiresAt`; a `presence` approval is approved only `via: 'passkey'`,
 * and a passkey approval only with the approval's pending, unexpired
 * challenge, which the decision uses up. Passkey credentials are bound to
 * one principal ({@link PasskeyStore}).
 * A store that cannot be reached throws {@link ApprovalStoreUnavailableError}
 * and records nothing.
 */
export interface ApprovalStore extends SessionStore, PasskeyStore {
  /**
   * Record a pending approval. Opening the same id again with an identical
   * approval is a no-op (a retried round 1); with anything else it throws.
   * @throws {TypeError} for a malformed approval, an `expiresAt` not in the
   *   future, or an id already opened with another approval; nothing is recorded.
   * @throws {ApprovalStoreUnavailableError} when the store cannot be reached.
   */
  open(approval: PendingApproval): Promise<void>;
  /**
   * The approval with `id` and its decision, or `undefined` when there is
   * none. An expired approval may still be returned until it is swept:
   * compare `approval.expiresAt` with the clock.
   * @throws {ApprovalStoreUnavailableError} when the store cannot be reached.
   */
  get(id: string): Promise<StoredApproval | undefined>;
  /**
   * Record a decision, once (see {@link DecideResult} and {@link DecideRefusal}).
   * `decidedAt` is the store's clock.
   * @throws {TypeError} for a malformed request; nothing is recorded.
   * @throws {ApprovalStoreUnavailableError} when the store cannot be reached; nothing is recorded.
   */
  decide(request: DecideRequest): Promise<DecideResult>;
  /**
   * Keep a fresh passkey challenge with a pending approval, replacing any
   * earlier one: `approvalChallenge` (see `challenge.ts`) of the approval,
   * `content` and `random`, expiring at `expiresAt` or the approval's expiry,
   * whichever is first. Refused, keeping nothing, when the approval is
   * unknown, another principal's, decided, expired, or `content` does not
   * validate against its `requestedSchema`.
   * @throws {TypeError} for a malformed request; nothing is kept.
   * @throws {ApprovalStoreUnavailableError} when the store cannot be reached; nothing is kept.
   */
  setChallenge(request: ChallengeRequest): Promise<ChallengeResult>;
  /**
   * Delete approvals, sessions and registration challenges whose expiry is at or before `now`
   * (milliseconds since the epoch, default the store's clock).
   * @returns how many entries were deleted (0 on stores whose backend expires entries itself).
   */
  sweep(now?: number): Promise<number>;
}

/**
 * The approval store could not be reached or failed mid-operation; nothing
 * was recorded. The gate answers JSON-RPC `-32603` (fail closed); the page
 * answers 503.
 */
export class ApprovalStoreUnavailableError extends Error {
  /** Discriminates this error without `instanceof` across package copies. */
  readonly code = 'APPROVAL_STORE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApprovalStoreUnavailableError';
  }
}
