import { randomBytes } from 'node:crypto';
import type { Json } from '@mrtr/replay';
import type { TicketClaimsInput, TicketSealer } from '@mrtr/ticket';
import {
  type CallToolResult,
  formElicitation,
  type InputRequiredResult,
  inputRequired,
  type RequestedSchema,
  textResult,
  urlElicitation,
} from '@mrtr/wire';
import {
  isApprovalField,
  MAX_APPROVAL_FIELD_LENGTH,
  MAX_APPROVAL_MESSAGE_LENGTH,
} from './approval.js';
import { fromChannel } from './errors.js';
import { type Asked, asked, type Flow, modeFor, policyOf, withNotice } from './flow.js';
import type { AskAgainReason } from './reasons.js';
import { ticketData } from './sealed.js';
import { sealTraceContext } from './trace.js';
import type { AskContext, Preparation } from './types.js';

/**
 * Ask: read the live target, choose the mode this request's client can show
 * under the operation's policy, mint a ticket that seals the question's
 * digest (and, in URL mode, the approval's id), record the question, and
 * answer `input_required`. Round 1, and every fresh question after a change.
 * @param again why a fresh question replaces an earlier one (audited as `asked_again` first).
 */
export async function ask<View, Tx>(
  flow: Flow<View, Tx>,
  again?: { reason: AskAgainReason; notice: string },
): Promise<CallToolResult | InputRequiredResult> {
  const prepared = await flow.spec.prepare(undefined);
  if (prepared.result) {
    await flow.round.emit({
      outcome: 'refused',
      reason: again ? 'target_unavailable' : 'not_asked',
      isError: !!prepared.result.isError,
    });
    return prepared.result;
  }
  const context = contextOf(prepared);
  const mode = modeFor(flow, policyOf(flow.spec, context));
  return askAfresh(flow, asked(flow.spec, context, mode), again);
}

/** Mint a new ticket for the live question `live` and put it. */
export async function askAfresh<View, Tx>(
  flow: Flow<View, Tx>,
  live: Asked<View>,
  again?: { reason: AskAgainReason; notice: string },
): Promise<CallToolResult | InputRequiredResult> {
  const { round, spec } = flow;
  // Checked in every mode: a ticket seals the principal, and an approval or audit record names it.
  if (!isApprovalField(flow.principal))
    return (
      await refuse(
        flow,
        'principal_unrecordable',
        `Nothing was done: a confirmation cannot be bound to the identity this call was made under (it must be text of 1 to ${MAX_APPROVAL_FIELD_LENGTH} characters without U+0000). Ask the server's operator.`,
      )
    ).refused;
  let shown = again ? withNotice(spec, live.context, again.notice) : live.question;
  if (live.mode !== 'form') {
    const checked = await forApproval(flow, live, shown);
    if ('refused' in checked) return checked.refused;
    shown = checked.shown;
  }
  if (again) await round.emit({ outcome: 'asked_again', reason: again.reason, ...round.known() });
  const claims: TicketClaimsInput<Json> = {
    sub: flow.principal,
    op: flow.operation,
    argsDigest: flow.argsDigest,
    inputKey: spec.key,
    phase: flow.phase,
    questionDigest: live.digest,
  };
  const approvalId = live.mode === 'form' ? undefined : randomBytes(16).toString('base64url');
  if (approvalId !== undefined) claims.approvalId = approvalId;
  const data = ticketData(sealTraceContext(round.span), live.context.seal);
  if (data !== undefined) claims.data = data;
  let sealed: ReturnType<TicketSealer['seal']>;
  try {
    sealed = flow.parts.sealer.seal(claims);
  } catch (error) {
    // Longer than the sealer's `maxTicketLength` (a long principal in a script of three UTF-8
    // bytes a character, or what `ask` seals): the caller's to learn, not an internal error.
    if (!(error instanceof RangeError)) throw error;
    return (
      await refuse(
        flow,
        'request_state_too_long',
        `Nothing was done: the requestState this confirmation needs (it seals the caller's identity and what the tool keeps of its target) is longer than this server allows. Ask the server's operator.`,
      )
    ).refused;
  }
  const { ticket, claims: minted } = sealed;
  round.setNonce(minted.nonce);
  let request: ReturnType<typeof formElicitation>;
  if (approvalId === undefined) {
    request = formElicitation(shown.message, shown.requestedSchema);
  } else {
    const approvals = flow.parts.approvals;
    if (!approvals)
      throw new TypeError(
        `${flow.request.name} asks for URL-mode confirmation but the gate has no approvals channel`,
      );
    const url = await fromChannel(() =>
      approvals.open({
        id: approvalId,
        nonce: minted.nonce,
        principal: flow.principal,
        operation: flow.operation,
        argumentsDigest: flow.argsDigest,
        questionDigest: live.digest,
        message: shown.message,
        ...(Object.keys(live.schema.properties).length > 0 ? { requestedSchema: live.schema } : {}),
        level: live.mode === 'presence' ? 'presence' : 'url',
        expiresAt: flow.parts.sealer.acceptedUntil(minted),
      }),
    );
    request = urlElicitation(shown.message, url);
  }
  if (!round.silent)
    await round.emit({
      outcome: 'asked',
      nonce: minted.nonce,
      question: shown.message,
      requestedSchema: live.mode === 'form' ? shown.requestedSchema : live.schema,
      confirmation: live.mode,
    });
  return inputRequired({ [spec.key]: request }, ticket);
}

/** The same question again, on the same ticket, with a notice before it (nothing consumed). */
export async function askAgain<View, Tx>(
  flow: Flow<View, Tx>,
  live: Asked<View>,
  reason: AskAgainReason,
  notice: string | undefined,
  approvalId?: string,
): Promise<InputRequiredResult> {
  const { round, spec } = flow;
  const shown = notice === undefined ? live.question : withNotice(spec, live.context, notice);
  await round.emit({
    outcome: 'asked_again',
    reason,
    ...round.known(),
    question: shown.message,
    requestedSchema: live.mode === 'form' ? shown.requestedSchema : live.schema,
    confirmation: live.mode,
  });
  const request =
    approvalId === undefined
      ? formElicitation(shown.message, shown.requestedSchema)
      : urlElicitation(
          shown.message,
          (flow.parts.approvals as { url(id: string): string }).url(approvalId),
        );
  return inputRequired({ [spec.key]: request }, flow.request.requestState as string);
}

/** The ask context of a preparation that asks. */
export function contextOf<View>(prepared: Preparation<View>): AskContext<View> {
  const p = prepared as { candidates?: string[]; view: View; seal?: AskContext<View>['seal'] };
  return p.seal === undefined
    ? { candidates: p.candidates, view: p.view }
    : { candidates: p.candidates, view: p.view, seal: p.seal };
}

/**
 * What makes a URL-mode or presence question longer than an approval keeps
 * ({@link MAX_APPROVAL_MESSAGE_LENGTH}), worded for the refusal, or `undefined`.
 */
function approvalTooLong(message: string, schema: RequestedSchema): string | undefined {
  if (message.length > MAX_APPROVAL_MESSAGE_LENGTH)
    return `asks a question of ${message.length} characters`;
  const fields = JSON.stringify(schema).length;
  if (fields > MAX_APPROVAL_MESSAGE_LENGTH) return `offers fields of ${fields} characters as JSON`;
  return undefined;
}

/**
 * What a URL-mode or presence question needs of an approval, checked before
 * anything is minted or recorded (the principal was checked before, in every
 * mode): an operation it can bind and a question it can keep (arguments a question quotes are the client's to shorten), else
 * the refusal, audited; the question to put, without the gate's notice of
 * why it asks again when only that notice made it too long.
 * @throws {TypeError} when the operation (a tool's own name) cannot be bound: the server's configuration.
 */
async function forApproval<View, Tx>(
  flow: Flow<View, Tx>,
  live: Asked<View>,
  shown: Asked<View>['question'],
): Promise<{ refused: CallToolResult } | { shown: Asked<View>['question'] }> {
  if (!isApprovalField(flow.operation))
    throw new TypeError(
      `${flow.request.name}: its operation cannot be bound by an approval (at most ${MAX_APPROVAL_FIELD_LENGTH} characters of well-formed text without U+0000): give the tool a shorter name`,
    );
  const question =
    shown !== live.question && approvalTooLong(shown.message, live.schema) ? live.question : shown;
  const tooLong = approvalTooLong(question.message, live.schema);
  if (tooLong)
    return refuse(
      flow,
      'question_too_long',
      `Nothing was done: the confirmation this call needs ${tooLong}, longer than the approval page shows (${MAX_APPROVAL_MESSAGE_LENGTH} characters). Call the tool again with arguments that make a shorter question.`,
    );
  return { shown: question };
}

/** Refuse without asking: an `isError` result saying `text`, audited `refused` with `reason`. */
async function refuse<View, Tx>(
  flow: Flow<View, Tx>,
  reason: 'principal_unrecordable' | 'question_too_long' | 'request_state_too_long',
  text: string,
): Promise<{ refused: CallToolResult }> {
  await flow.round.emit({ outcome: 'refused', reason, isError: true, ...flow.round.known() });
  return { refused: textResult(text, { isError: true }) };
}
