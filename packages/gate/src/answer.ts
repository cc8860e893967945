import { digestEquals } from '@mrtr/digest';
import type { TicketClaims } from '@mrtr/ticket';
import {
  type CallToolResult,
  clip,
  ErrorCode,
  type InputRequiredResult,
  ownMember,
  textResult,
  validateFormContent,
} from '@mrtr/wire';
import type { ApprovalChannel, ApprovalDecision } from './approval.js';
import { askAfresh, askAgain, contextOf } from './ask.js';
import { canonicalOrUndefined, fromChannel, refusal } from './errors.js';
import { preview } from './fields.js';
import { type Asked, allows, asked, type Flow, modeFor, policyOf } from './flow.js';
import {
  acceptedAnswerText,
  decline,
  perform,
  replayOf,
  retire,
  superseded,
  usedRefusal,
} from './perform.js';
import type { AskAgainReason } from './reasons.js';
import { readTicketData } from './sealed.js';
import type { FormContent } from './types.js';
import { bindingOf, withdrawApproval } from './withdraw.js';

type Action = 'accept' | 'decline' | 'cancel';

/**
 * A retry whose ticket opened: read the answer under the question's key and
 * act on it. `cancel` changes nothing; `decline` uses the ticket up, whatever
 * else the answer carries; anything else is judged against the live question,
 * which must still be the one the ticket sealed (else it is asked afresh):
 * a missing or malformed answer is asked again; an `accept` is validated
 * (form mode) or its decision read (URL mode) before the claim.
 */
export async function answer<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
): Promise<CallToolResult | InputRequiredResult> {
  const { round, spec } = flow;
  const raw = ownMember(flow.request.inputResponses, spec.key);
  const action = actionOf(raw);
  if (action !== undefined)
    round.setAnswer(action, action === 'accept' ? ownMember(raw, 'content') : undefined);

  if (action === 'cancel') {
    // A cancel claims nothing. Where the store can be read without a claim, a ticket an earlier
    // request used is told as used, not as a confirmation the person may still give.
    const used = await usedRefusal(flow, claims);
    if (used) return used;
    const result =
      spec.cancelled?.(undefined) ?? textResult('Cancelled. This request changed nothing.');
    await round.emit({ outcome: 'cancelled', ...round.known(), isError: !!result.isError });
    return result;
  }
  const prepared = await spec.prepare(undefined, readTicketData(claims.data).seal);
  const context = prepared.result ? undefined : contextOf(prepared);
  const policy = policyOf(spec, context);
  const mode =
    claims.approvalId === undefined ? 'form' : policy === 'presence' ? 'presence' : 'url';
  const live = context && asked(spec, context, mode);
  const same = live !== undefined && digestEquals(live.digest, claims.questionDigest as string);
  // A decline stays a decline whatever changed; the record names the question when it is still the one shown.
  if (action === 'decline') {
    const declined = await decline(flow, claims, same ? live : undefined);
    // Only once a decline holds the nonce: an accept that used it may have run the approval.
    if (flow.round.declined && (flow.round.performed || flow.round.replayed))
      await withdrawApproval(flow, claims);
    return declined;
  }
  if (!context || !live || !allows(policy, mode) || !same) {
    // The target may be gone or changed because this very confirmation was carried out.
    if (action === 'accept') {
      const replayed = await alreadyDone(flow, claims, raw);
      if (replayed) return replayed;
    }
    // Used by an earlier request (an answer without its content, or none): said so, rather than
    // "removed since you were asked" or a fresh question after a decline. Spent only because its
    // question was put afresh, and the question still differs: that fresh question, whose response
    // may have been lost, is put again (helper-164 M1); the ticket stays spent.
    const refresh = context !== undefined && live !== undefined && (await superseded(flow, claims));
    const used = refresh ? undefined : await usedRefusal(flow, claims);
    if (used) return used;
  }
  if (!context || !live) {
    await round.emit({ outcome: 'refused', reason: 'target_unavailable', ...round.known() });
    return prepared.result as CallToolResult;
  }
  if (!allows(policy, mode) || !same) {
    const fresh = asked(spec, context, modeFor(flow, policy));
    const question = await askAfresh(flow, fresh, {
      reason: 'question_changed',
      // The same words under a level the operation no longer takes (a policy that now asks for more).
      notice: same
        ? 'This action now needs another kind of confirmation than the one given; here is the question again.'
        : 'What you were asked about has changed since; here is the question as it stands now.',
    });
    // The new question replaces this ticket: a "yes" it carries must not outlive an answer to that.
    return (await retire(flow, claims)) ?? question;
  }
  // The same question again needs this request to declare its mode too.
  modeFor(flow, mode);
  if (action === undefined)
    return askAgainUnlessUsed(
      flow,
      claims,
      live,
      'no_answer',
      'No valid answer was received; please answer the question.',
      claims.approvalId,
    );
  if (claims.approvalId !== undefined) return approved(flow, claims, live, claims.approvalId);
  return accepted(flow, claims, live, ownMember(raw, 'content'));
}

/**
 * {@link askAgain} with this ticket, unless the replay store says it was
 * used already ({@link usedRefusal}): then that refusal.
 */
async function askAgainUnlessUsed<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  live: Asked<View>,
  reason: AskAgainReason,
  notice: string | undefined,
  approvalId?: string,
): Promise<CallToolResult | InputRequiredResult> {
  return (await usedRefusal(flow, claims)) ?? askAgain(flow, live, reason, notice, approvalId);
}

/** A form `accept`: schema, text, candidates, rules, consent; then the claim. */
async function accepted<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  live: Asked<View>,
  content: unknown,
): Promise<CallToolResult | InputRequiredResult> {
  const { spec } = flow;
  const invalid = (detail: string) =>
    askAgainUnlessUsed(
      flow,
      claims,
      live,
      'invalid_content',
      `The answer was not valid: ${detail}.`,
    );
  const valid = validateFormContent(live.schema, content);
  if (!valid.ok) return invalid(issuesText(valid.issues));
  const canonical = canonicalOrUndefined(valid.value);
  if (canonical === undefined) return invalid('it holds text that is not valid Unicode');
  const values = valid.value as FormContent;
  const chosen = candidateError(spec.candidateField, values, live.context.candidates);
  if (chosen) return askAgainUnlessUsed(flow, claims, live, 'not_a_candidate', chosen);
  const notice = spec.check?.(values, live.context);
  // Cut: a check that quotes the answer would otherwise send back, and record, whatever was typed.
  if (notice !== undefined)
    return askAgainUnlessUsed(
      flow,
      claims,
      live,
      'check_failed',
      clip(notice, MAX_CHECK_NOTICE - 1),
    );
  if (spec.consents(values, live.context) !== true) return decline(flow, claims, live);
  return perform(flow, claims, live, values, canonical, { level: 'form' });
}

/** A URL-mode `accept` (the person agreed to open the page): the page's decision says what happens. */
async function approved<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  live: Asked<View>,
  approvalId: string,
): Promise<CallToolResult | InputRequiredResult> {
  const approvals = flow.parts.approvals;
  if (!approvals)
    throw new TypeError('a URL-mode ticket reached a gate without an approvals channel');
  const decision = await decisionOf(approvals, flow, claims, approvalId);
  const pending = () =>
    askAgainUnlessUsed(
      flow,
      claims,
      live,
      'approval_pending',
      'Nothing was decided on the approval page yet: open the link, sign in, and approve or deny; then answer again.',
      approvalId,
    );
  switch (decision.status) {
    case 'pending':
      return pending();
    case 'denied':
      return decline(flow, claims, live);
    case 'unknown':
      await flow.round.emit({
        outcome: 'refused',
        reason: 'approval_unknown',
        ...flow.round.known(),
      });
      throw refusal(
        ErrorCode.InvalidParams,
        'approval_unknown',
        'The approval this confirmation names is gone or belongs to another request; call the tool again.',
      );
  }
  // Only an approval runs: a status this gate does not know (a newer or older channel's) refuses.
  if ((decision as { status: string }).status !== 'approved') return decline(flow, claims, live);
  // A presence policy takes a passkey approval only.
  if (live.mode === 'presence' && decision.via !== 'passkey') return pending();
  const content = decision.content ?? {};
  const valid = validateFormContent(live.schema, content);
  const values = (valid.ok ? valid.value : {}) as FormContent;
  // Content JSON cannot carry exactly (the page should never keep any) does not fit either.
  const canonical = valid.ok ? canonicalOrUndefined(values) : undefined;
  if (
    canonical === undefined ||
    candidateError(flow.spec.candidateField, values, live.context.candidates)
  )
    return askAfresh(flow, live, {
      reason: 'invalid_content',
      notice: 'The approval did not fit the question; please approve again.',
    });
  flow.round.setAnswer('accept', values);
  return perform(flow, claims, live, values, canonical, {
    level: live.mode === 'presence' ? 'presence' : 'url',
    approvalId,
    ...(decision.credentialId !== undefined ? { credentialId: decision.credentialId } : {}),
  });
}

/** The recorded outcome of this very accept, if it was carried out already (see `replayOf`). */
async function alreadyDone<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  raw: unknown,
): Promise<CallToolResult | undefined> {
  let content: unknown = ownMember(raw, 'content');
  if (claims.approvalId !== undefined) {
    const approvals = flow.parts.approvals;
    if (!approvals) return undefined;
    const decision = await decisionOf(approvals, flow, claims, claims.approvalId);
    if (decision.status !== 'approved') return undefined;
    content = decision.content ?? {};
  }
  const canonical = content === undefined ? undefined : canonicalOrUndefined(content);
  if (canonical === undefined) return undefined;
  return replayOf(flow, claims, acceptedAnswerText(claims.approvalId, canonical));
}

/**
 * The decision `approvals` holds for `approvalId`, read under the ticket's binding.
 * @throws {ApprovalChannelError} when the channel's store cannot be reached.
 */
function decisionOf<View, Tx>(
  approvals: ApprovalChannel,
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  approvalId: string,
): Promise<ApprovalDecision> {
  return fromChannel(() => approvals.decision(approvalId, bindingOf(flow, claims)));
}

/** Why the chosen candidate is not acceptable, or `undefined` when it is (or no field chooses). */
function candidateError(
  field: string | undefined,
  content: FormContent,
  candidates: string[] | undefined,
): string | undefined {
  if (field === undefined) return undefined;
  const chosen = content[field];
  if (typeof chosen === 'string' && (candidates ?? []).includes(chosen)) return undefined;
  return `${field} must be one of the offered choices.`;
}

/** Most issues a notice names; the rest are counted. */
const MAX_ISSUES_SHOWN = 5;
/** Longest field name a notice shows, in user-perceived characters. */
const MAX_FIELD_NAME = 40;
/** Most UTF-16 code units of a `check` notice sent and recorded, its `…` included (`GateSpec.check`). */
const MAX_CHECK_NOTICE = 1000;
/** What `validateFormContent` says of a member the form does not have. */
const NOT_A_FIELD = 'is not a field of this form';

/**
 * The issues of an invalid answer as the notice says them, in the server's
 * question. A member the form does not have is named by the client alone, so
 * such members are only counted, never named: a name can carry anything
 * (line breaks, bidi controls, invisible tag characters a model reads). The
 * form's own fields are named as {@link preview} shows stored text, and only
 * the first five issues.
 */
function issuesText(issues: readonly { field: string; reason: string }[]): string {
  const foreign = issues.filter((i) => i.reason === NOT_A_FIELD).length;
  const own = issues.filter((i) => i.reason !== NOT_A_FIELD);
  const named = own
    .slice(0, MAX_ISSUES_SHOWN)
    .map((i) => (i.field ? `${preview(i.field, MAX_FIELD_NAME)} ${i.reason}` : i.reason));
  const more = own.length - named.length;
  if (more > 0) named.push(`and ${more} more`);
  if (foreign > 0)
    named.push(
      foreign === 1
        ? 'it has a field this form does not have'
        : `it has ${foreign} fields this form does not have`,
    );
  return named.join('; ');
}

/** The action of an answer, read on its own so that a decline or cancel stays one whatever else it carries. */
function actionOf(raw: unknown): Action | undefined {
  if (Array.isArray(raw)) return undefined;
  const action = ownMember(raw, 'action');
  return action === 'accept' || action === 'decline' || action === 'cancel' ? action : undefined;
}
