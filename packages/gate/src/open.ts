import type { TicketClaims } from '@mrtr/ticket';
import { ErrorCode } from '@mrtr/wire';
import { refusal } from './errors.js';
import type { Flow } from './flow.js';
import { TICKET_REFUSAL_DETAIL } from './reasons.js';
import { readTicketData } from './sealed.js';
import { previousRoundLink } from './trace.js';

/**
 * Open the ticket presented as `requestState`: it opens only for this
 * principal, operation and argument digest (see `@mrtr/ticket`), and must
 * have been minted for this question key and phase of the tool.
 * @returns the verified claims; the round's nonce is set and its span linked to the asking round.
 * @throws {McpError} `-32602` with `data.reason` `ticket_<reason>` or `ticket_operation`, after a `refused` record.
 */
export async function openTicket<View, Tx>(flow: Flow<View, Tx>): Promise<TicketClaims> {
  const { round } = flow;
  const opened = flow.parts.sealer.open(flow.request.requestState, {
    sub: flow.principal,
    op: flow.operation,
    argsDigest: flow.argsDigest,
  });
  if (!opened.ok) {
    const reason = `ticket_${opened.reason}` as const;
    await round.emit({ outcome: 'refused', reason });
    let detail = TICKET_REFUSAL_DETAIL[opened.reason] ?? '';
    // Key ids are no secret (each ticket shows its own); the ring tells the operator what rotation kept.
    const kids = flow.parts.sealer.kids;
    if (opened.reason === 'kid' && kids)
      detail += ` (this server opens key ids ${kids.join(', ')})`;
    throw refusal(
      ErrorCode.InvalidParams,
      reason,
      `requestState rejected (${opened.reason})${detail}`,
    );
  }
  const claims = opened.claims;
  round.setNonce(claims.nonce);
  const { trace } = readTicketData(claims.data);
  const link = trace === undefined ? undefined : previousRoundLink(trace);
  // Span.addLink is @opentelemetry/api ≥ 1.9; the no-op span of an older API (no SDK) lacks it.
  if (link) round.span.addLink?.(link);
  // What the sealer cannot know: which question and phase of this tool the ticket was for.
  if (
    claims.inputKey !== flow.spec.key ||
    claims.phase !== flow.phase ||
    claims.questionDigest === undefined
  ) {
    await round.emit({ outcome: 'refused', reason: 'ticket_operation', nonce: claims.nonce });
    throw refusal(
      ErrorCode.InvalidParams,
      'ticket_operation',
      'requestState rejected (operation): it was issued for another request',
    );
  }
  return claims;
}

/**
 * Right before the claim: the ticket must still open. The record the claim
 * writes lives only so long past the ticket's end (`acceptedUntil` plus the
 * skew); work since the ticket was opened (the target read again, an
 * approval, a database that waited) must not carry a re-send past it, or a
 * store that forgot the used nonce would take the claim afresh.
 * @throws {McpError} `-32602` `ticket_expired`, after a `refused` record.
 */
export async function assertStillOpen<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
): Promise<void> {
  if (flow.parts.sealer.stillOpens(claims)) return;
  await refuseExpired(flow, 'expired');
}

/**
 * The replay store refused the claim as `expired`: by its clock (the
 * database's, Redis's) the ticket's record would already be gone, though
 * this server's clock still opened the ticket, so its clock runs behind.
 * The same refusal as an expired ticket: a new confirmation is needed.
 * @throws {McpError} `-32602` `ticket_expired`, after a `refused` record.
 */
export function expiredByStore<View, Tx>(flow: Flow<View, Tx>): Promise<never> {
  return refuseExpired(
    flow,
    "expired by the replay store's clock, which this server's runs behind",
  );
}

/** The `-32602` `ticket_expired` refusal, `why` in its message, after its `refused` record. */
async function refuseExpired<View, Tx>(flow: Flow<View, Tx>, why: string): Promise<never> {
  await flow.round.emit({ outcome: 'refused', reason: 'ticket_expired', ...flow.round.known() });
  throw refusal(
    ErrorCode.InvalidParams,
    'ticket_expired',
    `requestState rejected (${why})${TICKET_REFUSAL_DETAIL.expired ?? ''}`,
  );
}
