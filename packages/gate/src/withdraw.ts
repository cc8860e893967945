import type { TicketClaims } from '@mrtr/ticket';
import type { ApprovalBinding } from './approval.js';
import type { Flow } from './flow.js';

/** When a withdrawal that failed is tried again, ms after each failure (about a minute in all). */
const REWITHDRAW_AFTER_MS = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000] as const;

/**
 * After a client's decline of a URL-mode question, or once its ticket is
 * spent because a newer question replaced it: close its approval, so the
 * page no longer offers a decision nothing would act on. The decline is
 * recorded already; a channel that cannot close it changes nothing of that.
 * A failed withdrawal is tried again in the background after each of
 * {@link REWITHDRAW_AFTER_MS}: until it lands, the page would record an
 * approval and tell the person the request runs, while no retry can run it.
 * The timers do not keep the process alive.
 */
export async function withdrawApproval<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
): Promise<void> {
  const approvals = flow.parts.approvals;
  if (claims.approvalId === undefined || !approvals?.withdraw) return;
  const id = claims.approvalId;
  const binding = bindingOf(flow, claims);
  const attempt = (retry: number) =>
    approvals.withdraw?.(id, binding).catch(() => {
      const wait = REWITHDRAW_AFTER_MS[retry];
      if (wait !== undefined) setTimeout(() => void attempt(retry + 1), wait).unref();
    });
  await attempt(0);
}

/** What a URL-mode approval of this ticket was opened with (see {@link ApprovalBinding}). */
export function bindingOf<View, Tx>(flow: Flow<View, Tx>, claims: TicketClaims): ApprovalBinding {
  return {
    nonce: claims.nonce,
    principal: flow.principal,
    operation: flow.operation,
    argumentsDigest: flow.argsDigest,
    questionDigest: claims.questionDigest as string,
  };
}
