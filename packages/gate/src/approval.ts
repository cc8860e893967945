/**
 * URL-mode confirmation (MCP 2026-07-28 `client/elicitation`, URL mode): the
 * person approves on a page of the server's own origin, signed in as the
 * tool call's principal, instead of answering a form the client fills in.
 * The gate mints the approval and reads its decision; an
 * {@link ApprovalChannel} (the `@mrtr/approval-page` package) keeps it
 * between the rounds and serves the page.
 */
import type { RequestedSchema } from '@mrtr/wire';

/**
 * What a "yes" must prove for a gated operation, weakest first:
 * - `form`: a client bound to this principal, tool and arguments answered a form;
 * - `url`: the principal approved on the server's own page, signed in;
 * - `presence`: as `url`, with a passkey assertion (WebAuthn, user verification) over this action.
 */
export type ConfirmationLevel = 'form' | 'url' | 'presence';

/** What a URL-mode approval is bound to: the same fields a decision must match on the retry. */
export interface ApprovalBinding {
  /** The ticket nonce (`n` claim): the approval dies with the ticket and is used at most once with it. */
  nonce: string;
  /** The principal of the tool call; only this principal may decide. */
  principal: string;
  /** `method:name`, e.g. `tools/call:delete_volume`. */
  operation: string;
  /** `sha256:` digest of the RFC 8785 canonical arguments. */
  argumentsDigest: string;
  /** `sha256:` digest of the question exactly as shown (message and schema). */
  questionDigest: string;
}

/**
 * Longest question a URL-mode or presence approval carries, UTF-16 code
 * units of `message`, and longest `requestedSchema` as JSON text: what an
 * approval store keeps and the page shows whole. A gate whose question is
 * longer answers an `isError` result without asking (refusal reason
 * `question_too_long`); a channel may refuse a longer one with a `TypeError`.
 */
export const MAX_APPROVAL_MESSAGE_LENGTH = 65_536;

/**
 * Longest `principal` and `operation` an approval binds, UTF-16 code units;
 * both must also be well-formed text without U+0000, as an approval store
 * keeps them. A gate whose principal falls outside answers a URL-mode or
 * presence question with an `isError` result without asking (refusal reason
 * `principal_unrecordable`); an operation outside (a tool's own name) is a
 * `TypeError`, the server's configuration to fix.
 */
export const MAX_APPROVAL_FIELD_LENGTH = 1024;

/** Whether `value` can be a binding field of an approval ({@link MAX_APPROVAL_FIELD_LENGTH}). */
export function isApprovalField(value: string): boolean {
  return (
    value.length > 0 &&
    value.length <= MAX_APPROVAL_FIELD_LENGTH &&
    value.isWellFormed() &&
    !value.includes('\0')
  );
}

/** A pending approval, recorded by {@link ApprovalChannel.open} at round 1. */
export interface PendingApproval extends ApprovalBinding {
  /**
   * The opaque id in the approval URL: 128 random bits as 22 base64url
   * characters, sealed in the ticket. It carries no personal data and grants
   * nothing by itself: the page still requires the principal to sign in.
   */
  id: string;
  /**
   * The question exactly as sent in the `elicitation/create` request; the page shows it as text.
   * At most {@link MAX_APPROVAL_MESSAGE_LENGTH} code units (as is `requestedSchema` as JSON).
   */
  message: string;
  /**
   * Fields the person fills in on the page before approving (a choice among
   * candidates, an option), in the flat form subset of `client/elicitation`;
   * absent or without properties: Approve and Deny only. Consent fields are
   * never here: approving is the consent.
   */
  requestedSchema?: RequestedSchema;
  /** `url`, or `presence` when only a passkey assertion over this action may approve. */
  level: Exclude<ConfirmationLevel, 'form'>;
  /** When the approval dies with its ticket, milliseconds since the epoch. */
  expiresAt: number;
}

/** The decision recorded for a pending approval, as read on the retry. */
export type ApprovalDecision =
  /** Not decided yet: the retry is answered with the same URL again. */
  | { status: 'pending' }
  /** Approved by the principal; `via` says how, `credentialId` names the passkey (base64url). */
  | {
      status: 'approved';
      via: 'url' | 'passkey';
      credentialId?: string;
      /** The fields of `requestedSchema` as the person filled them in, validated against it by the page. */
      content?: Record<string, string | number | boolean | string[]>;
      decidedAt: number;
    }
  /** Denied by the principal: the retry is a complete refusal that uses the ticket up. */
  | { status: 'denied'; decidedAt: number }
  /** No approval with this id and binding (never opened, expired, swept, or bound to something else). */
  | { status: 'unknown' };

/**
 * Where URL-mode approvals live between round 1 and the retry, shared by
 * every server instance (the replay store's database), and the page that
 * decides them. Implemented by `@mrtr/approval-page`.
 */
export interface ApprovalChannel {
  /**
   * Record `approval` for the page.
   * @returns the URL to send in the `elicitation/create` request (`mode: "url"`), on the server's own origin.
   * @throws when the approval cannot be recorded; the gate then fails closed (`-32603`, nothing asked).
   */
  open(approval: PendingApproval): Promise<string>;
  /** The URL of approval `id`, as `open` returned it (sent again while the decision is pending). */
  url(id: string): string;
  /**
   * The decision recorded for approval `id`, only if it was opened with
   * exactly `binding`; anything else reads as `unknown`.
   * @throws when the store cannot be reached; the gate then fails closed.
   */
  decision(id: string, binding: ApprovalBinding): Promise<ApprovalDecision>;
  /**
   * Close approval `id` after the client declined the question on a retry
   * (`action: "decline"`), which used the ticket up: the page then says that
   * nothing will run, instead of offering buttons whose decision no retry
   * could act on. Called only once a decline holds the ticket's nonce, so
   * no retry can carry the approval out: closes an approval opened with
   * exactly `binding` that is pending or approved (the person approved, then
   * the client declined); a denied, unknown or differently bound one is left
   * as it is. Afterwards {@link ApprovalChannel.decision} reads `denied`.
   *
   * Optional. The gate awaits it after the decline is recorded: the decline
   * stands either way. A rejection is retried in the background (after 1, 2,
   * 4, 8, 16 and 32 s), since an approval left open lets the page record a
   * decision that nothing acts on; so it must be idempotent.
   */
  withdraw?(id: string, binding: ApprovalBinding): Promise<void>;
}
