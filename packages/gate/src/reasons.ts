import type { TicketFailureReason } from '@mrtr/ticket';

/**
 * Why a round refused: nothing was asked or done. The audit record's
 * `reason`, the span's `mrtr.gate.reason`, and `data.reason` of the JSON-RPC
 * error where the refusal is one.
 * - `capability_missing`: this request's `_meta` declares no elicitation mode the operation can use (`-32021`);
 * - `ticket_<reason>`: `requestState` did not open for this principal, operation and arguments (`-32602`;
 *   `ticket_mac` covers altered tickets and tickets of other operations or arguments alike);
 * - `ticket_operation`: the ticket was minted for another question or phase of this tool (`-32602`);
 * - `nonce_used`: the ticket was already used for another answer (an `isError` result);
 * - `nonce_in_progress`: an identical confirmation is being carried out right now (an `isError` result);
 * - `not_asked`: the tool answered at once without a question (nothing matched, no access);
 * - `target_unavailable`: on a retry, the tool answered without a question: the target is gone or no longer accessible;
 * - `approval_unknown`: the approval the ticket names is gone (expired or swept) or bound to something else (`-32602`);
 * - `question_too_long`: a URL-mode or presence question longer than the approval page keeps
 *   (`MAX_APPROVAL_MESSAGE_LENGTH`), e.g. one that quotes long arguments (an `isError` result);
 * - `principal_unrecordable`: a question for a principal a ticket or an approval cannot bind: not
 *   text, empty, over `MAX_APPROVAL_FIELD_LENGTH`, or holding U+0000 or a lone surrogate (an `isError` result);
 * - `request_state_too_long`: the ticket would be longer than the sealer's `maxTicketLength`
 *   (a long principal, or a large `seal`) (an `isError` result).
 */
export type RefusalReason =
  | 'capability_missing'
  | `ticket_${TicketFailureReason}`
  | 'ticket_operation'
  | 'nonce_used'
  | 'nonce_in_progress'
  | 'not_asked'
  | 'target_unavailable'
  | 'approval_unknown'
  | 'question_too_long'
  | 'principal_unrecordable'
  | 'request_state_too_long';

/**
 * Why the person is asked again, nothing performed:
 * - `no_answer`: no valid answer under the question's key;
 * - `invalid_content`: the content does not fit the requested schema, or is text Unicode cannot carry;
 * - `not_a_candidate`: the chosen id is not one of those offered;
 * - `check_failed`: a rule the schema cannot say failed (a typed name differs);
 * - `question_changed`: the live target no longer gives the question the ticket sealed, or the operation no
 *   longer takes the level the ticket was asked at: the ticket is spent (presented again it is refused as
 *   used, and its URL-mode approval withdrawn), and the question is asked afresh under a new ticket;
 * - `stale_target`: the target changed inside the claim: the claim was rolled back, the ticket spent as for
 *   `question_changed`, and a fresh question follows;
 * - `approval_pending`: the approval page has no decision yet: the same URL again.
 *
 * Every reason but those two keeps the ticket usable for a corrected answer.
 */
export type AskAgainReason =
  | 'no_answer'
  | 'invalid_content'
  | 'not_a_candidate'
  | 'check_failed'
  | 'question_changed'
  | 'stale_target'
  | 'approval_pending';

/**
 * Every reason code a gate writes: refusals, asks again, and on a `failed`
 * record `audit_sink_failed` or `approval_unavailable` (the approval
 * channel failed; other `failed` records carry the error's `name`).
 */
export type GateReason =
  | RefusalReason
  | AskAgainReason
  | 'audit_sink_failed'
  | 'approval_unavailable';

/** What a ticket refusal tells the caller beyond its reason; never anything from inside the ticket. */
export const TICKET_REFUSAL_DETAIL: Partial<Record<TicketFailureReason, string>> = {
  principal: ': it was issued for another caller',
  // The same key id with another secret fails as an altered ticket does: name it, for the
  // usual mistake of two instances behind one address started with different secrets.
  mac: ': it was altered, issued for another operation or other arguments, or sealed by a server with another secret under the same key id (every instance behind one address must hold the same ticket keys)',
  expired: ': the confirmation expired; call the tool again',
  kid: ': it was sealed under a key this server does not hold (one retired, or a newer one not yet given to every instance); call the tool again',
  not_yet_valid:
    ': it was issued later than now by this server’s clock (the clocks of two instances further apart than the skew they allow); call the tool again',
};
