import { digestCanonical } from '@mrtr/digest';
import type { Json, OnceRequest, OnceResult } from '@mrtr/replay';
import { MAX_SKEW_SECONDS, type TicketClaims } from '@mrtr/ticket';
import { type CallToolResult, type InputRequiredResult, textResult } from '@mrtr/wire';
import type { ConfirmationLevel } from './approval.js';
import { askAfresh, contextOf } from './ask.js';
import type { GateAuditEvent } from './audit.js';
import { ReceiptIssuerError } from './errors.js';
import { type Asked, asked, type Flow, modeFor, policyOf } from './flow.js';
import { toJson } from './json.js';
import { assertStillOpen, expiredByStore } from './open.js';
import { readTicketData } from './sealed.js';
import {
  type Confirmation,
  type FormContent,
  type ReceiptIssuer,
  StaleTargetError,
} from './types.js';
import { withdrawApproval } from './withdraw.js';

/** Thrown inside the claim when the target is gone or no longer accessible: rolls the claim back. */
class TargetUnavailable {
  constructor(readonly result: CallToolResult) {}
}

/** Thrown by the action of a replay probe: the nonce was free, so nothing may run. */
class NotRecorded {}

/**
 * What the replay store already holds for this nonce, asked when the live
 * target can no longer say the same question (deleted by that very
 * confirmation, changed since): the recorded outcome for an identical
 * re-send, so a client that lost the response gets the result; a refusal
 * for another answer on a used (or in-progress) nonce; `undefined` for a
 * nonce never used, which the probe does not keep (a free nonce is released
 * at once) so the question can be put afresh.
 */
export async function replayOf<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  answer: string,
): Promise<CallToolResult | undefined> {
  let result: OnceResult<Json>;
  await assertStillOpen(flow, claims);
  try {
    result = await flow.parts.store.once(onceRequestOf(claims, answer), async () => {
      throw new NotRecorded();
    });
  } catch (error) {
    if (error instanceof NotRecorded) return undefined;
    throw error;
  }
  // Spent only because its question was put afresh (`retire`): a re-send of the answer whose
  // response, the fresh question, was lost is asked that question again, not told "already used"
  // (helper-164 M1). The ticket stays spent.
  if (result.status === 'refused' && result.reason === 'used' && (await superseded(flow, claims)))
    return undefined;
  return settleLookUp(flow, claims, result);
}

/** Whether the store holds this ticket as superseded by a fresh question (see {@link retire}). */
export async function superseded<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
): Promise<boolean> {
  const store = flow.parts.store;
  if (!store.recorded) return false;
  try {
    return (await store.recorded(onceRequestOf(claims, SUPERSEDED)))?.status === 'replayed';
  } catch {
    return false;
  }
}

/** The answer a superseded ticket is claimed under: the RFC 8785 text of no answer is this. */
const SUPERSEDED = '{"superseded":true}';

/** What the store records as the outcome of a superseded ticket (never sent: no answer matches it). */
const SUPERSEDED_OUTCOME = textResult(
  'This confirmation was replaced by a newer question; this request changed nothing.',
  { isError: true },
);

/**
 * Use up a ticket whose question was just put afresh under a new ticket (the
 * target changed, or the operation now takes another level of
 * confirmation): its nonce is claimed, so that the answer it may carry
 * cannot be presented again later, once the target reads as it did, over
 * the person's answer to the newer question; in URL mode its approval is
 * withdrawn. A ticket past its life needs nothing. Presented again, the
 * ticket is refused as used. Called once the new question exists, so that
 * a new question that cannot be put (an approval page that is down) leaves
 * this ticket as it was, as the error says.
 * @returns `undefined` when the ticket is spent (now, or by another request
 *   that retired it); the audited refusal when an answer used it first
 *   (then the new question is not sent).
 * @throws {ReplayStoreUnavailableError} (or what the store throws) when the
 *   store cannot record it: the new question is not sent, and nothing changed.
 */
export async function retire<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
): Promise<CallToolResult | undefined> {
  if (!flow.parts.sealer.stillOpens(claims)) return undefined;
  // A failure or a refusal from here is about this ticket, not the new one just minted.
  const minted = flow.round.nonce;
  flow.round.setNonce(claims.nonce);
  const result = await flow.parts.store.once(
    onceRequestOf(claims, SUPERSEDED),
    async () => SUPERSEDED_OUTCOME as unknown as Json,
  );
  if (result.status === 'refused') return settleLookUp(flow, claims, result);
  await withdrawApproval(flow, claims);
  if (minted !== undefined) flow.round.setNonce(minted);
  return undefined;
}

/** The store's verdict on a look-up that ran nothing (a replay probe, a read), audited and answered. */
function settleLookUp<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  result: OnceResult<Json>,
): Promise<CallToolResult> {
  return settle(
    flow,
    result,
    'completed',
    undefined,
    undefined,
    claims.approvalId ? 'url' : 'form',
  );
}

/** An answer text no answer has (each is an object): its digest matches no recorded request. */
const NO_ANSWER = 'null';

/**
 * The refusal a second use gets (`nonce_used`, audited as `refused`)
 * when the replay store already holds a settled use of this ticket (a
 * decline, or an outcome), read without claiming through
 * `ReplayStore.recorded`; `undefined` when it holds none, when the store has
 * no `recorded` (a store of the application's own), or when it cannot be read: the claim
 * decides once an answer comes. Asked before the same question is put again
 * with the same ticket and before a cancel is answered: a used ticket takes
 * no answer, so asking would only turn a spent confirmation into a prompt.
 */
export async function usedRefusal<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
): Promise<CallToolResult | undefined> {
  const store = flow.parts.store;
  if (!store.recorded) return undefined;
  let result: OnceResult<Json> | undefined;
  try {
    result = await store.recorded<Json>(onceRequestOf(claims, NO_ANSWER));
  } catch {
    return undefined;
  }
  if (result?.status !== 'refused') return undefined;
  return settleLookUp(flow, claims, result);
}

/**
 * Claim the ticket's nonce and, inside the claim, read the target again
 * (`prepare(tx)`), check it still gives the question the person answered,
 * and `perform`; the outcome is recorded under the nonce. A target that
 * changed is asked afresh, one that is gone refused; both roll the claim back.
 */
export async function perform<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  live: Asked<View>,
  content: FormContent,
  canonicalContent: string,
  confirmation: Confirmation,
): Promise<CallToolResult | InputRequiredResult> {
  const { round, spec } = flow;
  const { seal: sealed } = readTicketData(claims.data);
  const answer = acceptedAnswerText(
    confirmation.level === 'form' ? undefined : confirmation.approvalId,
    canonicalContent,
  );
  // Written before the claim: a sink that cannot write it stops the mutation.
  if (!round.silent)
    await round.emit({
      outcome: 'accepted',
      ...round.known(),
      confirmation: confirmation.level,
    });
  let written: GateAuditEvent | undefined;
  let receiptOf: string | undefined;
  let result: OnceResult<Json>;
  await assertStillOpen(flow, claims);
  try {
    result = await flow.parts.store.once(onceRequestOf(claims, answer), async (tx: Tx) => {
      const again = await spec.prepare(tx, sealed);
      if (again.result) throw new TargetUnavailable(again.result);
      const now = asked(spec, contextOf(again), live.mode);
      // The same canonical text is the same digest: nothing to hash.
      if (now.canonical !== live.canonical)
        throw new StaleTargetError('the target changed while the answer was on its way');
      // Without an issuer nothing is awaited: an `await undefined` is one more turn of the claim.
      const receipts = flow.parts.receipts;
      const receipt =
        receipts &&
        (await issueReceipt(receipts, flow, live, canonicalContent, confirmation, claims));
      const done = toJson(
        await spec.perform({
          content,
          view: now.context.view,
          candidates: now.context.candidates,
          claims,
          confirmation,
          tx,
          ...(receipt !== undefined ? { receipt } : {}),
        }),
      );
      // Inside the store's transaction: a failed write rolls back the claim and the mutation.
      if (!round.silent)
        written = await round.inTransaction(tx, {
          outcome: 'completed',
          ...round.known(),
          question: live.question.message,
          confirmation: confirmation.level,
          ...(receipt !== undefined ? { receipt } : {}),
          isError: isErrorOf(done),
        });
      receiptOf = receipt;
      return done;
    });
  } catch (error) {
    if (error instanceof TargetUnavailable) {
      await round.emit({ outcome: 'refused', reason: 'target_unavailable', ...round.known() });
      return error.result;
    }
    if (error instanceof StaleTargetError) {
      const prepared = await spec.prepare(undefined, sealed);
      if (prepared.result) {
        await round.emit({ outcome: 'refused', reason: 'target_unavailable', ...round.known() });
        return prepared.result;
      }
      // Asked at the level the target's new state takes, as a changed question before the claim is.
      const context = contextOf(prepared);
      const question = await askAfresh(
        flow,
        asked(spec, context, modeFor(flow, policyOf(spec, context))),
        {
          reason: 'stale_target',
          notice:
            'What you were asked about changed before it could be done; here is the question as it stands now.',
        },
      );
      // The claim was given back: spend the ticket now that a new one replaces it.
      return (await retire(flow, claims)) ?? question;
    }
    throw error;
  }
  return settle(
    flow,
    result,
    'completed',
    written,
    live.question.message,
    confirmation.level,
    receiptOf,
  );
}

/**
 * The receipt of this confirmation from the gate's issuer. Called inside the
 * claim, before `perform`: a failure is thrown as a {@link ReceiptIssuerError},
 * the claim is given back and nothing changed, so the approval stays usable.
 */
async function issueReceipt<View, Tx>(
  receipts: ReceiptIssuer,
  flow: Flow<View, Tx>,
  live: Asked<View>,
  canonicalContent: string,
  confirmation: Confirmation,
  claims: TicketClaims,
): Promise<string> {
  try {
    return await receipts.issue({
      principal: flow.principal,
      operation: flow.operation,
      argumentsDigest: flow.argsDigest,
      questionDigest: live.digest,
      contentDigest: digestCanonical(canonicalContent),
      confirmation,
      nonce: claims.nonce,
    });
  } catch (error) {
    throw new ReceiptIssuerError('the approval receipt could not be signed', { cause: error });
  }
}

/**
 * A refusal by the person (`decline`, a denial on the page, an accept
 * without consent): claim the nonce so the ticket is used up, and answer a
 * complete, non-error result.
 */
export async function decline<View, Tx>(
  flow: Flow<View, Tx>,
  claims: TicketClaims,
  live: Asked<View> | undefined,
): Promise<CallToolResult> {
  const { round, spec } = flow;
  const context = live?.context;
  const level = live?.mode ?? (claims.approvalId === undefined ? 'form' : 'url');
  const question = live?.question.message;
  let written: GateAuditEvent | undefined;
  await assertStillOpen(flow, claims);
  // A store that fails from here must not be reported as a possible run of the operation.
  round.declining = true;
  const result = await flow.parts.store.once(onceRequestOf(claims, DECLINE), async (tx: Tx) => {
    const declined = toJson(
      spec.declined?.(context) ?? textResult('Declined. Nothing was changed.'),
    );
    written = await round.inTransaction(tx, {
      outcome: 'declined',
      ...round.known(),
      ...(question !== undefined ? { question } : {}),
      confirmation: level,
      isError: isErrorOf(declined),
    });
    return declined;
  });
  return settle(flow, result, 'declined', written, question, level);
}

/** RFC 8785 text of the answer a decline binds in the replay store. */
const DECLINE = '{"action":"decline"}';

/**
 * RFC 8785 text of the answer an accept binds in the replay store:
 * `{action: "accept", approval?, content}`, the approval it came from in URL
 * mode. Written out rather than canonicalized again: the members are in
 * RFC 8785 order (`action` < `approval` < `content`), `"accept"` needs no
 * escaping, and `canonicalContent` is already canonical.
 * @param approvalId 22 base64url characters, as a ticket carries it.
 */
export function acceptedAnswerText(
  approvalId: string | undefined,
  canonicalContent: string,
): string {
  return approvalId === undefined
    ? `{"action":"accept","content":${canonicalContent}}`
    : `{"action":"accept","approval":${JSON.stringify(approvalId)},"content":${canonicalContent}}`;
}

/**
 * What the replay store keys and compares: the nonce, and the digest of the
 * answer (RFC 8785 text), so an identical re-issue gets the recorded outcome
 * and any other answer is refused. Principal, operation, arguments and input
 * key are not hashed again: the nonce names one ticket, which sealed them and
 * opened only for them. The record lives as long as the ticket can still
 * open (`TicketSealer.acceptedUntil`), never shorter, or a re-send after it
 * was forgotten would run again; and twice as long again as the clock skew
 * the sealer tolerates, since each clock may be off by that skew: the
 * instance that opens a re-send may run behind by it (the ticket opens
 * until `acceptedUntil` on its clock), and the clock that judges the
 * record's expiry (Redis `PXAT`, another instance's sweep) ahead by it.
 * Another instance may tolerate more skew than this one and open the ticket
 * for longer (its `maxSkewSeconds`, up to `MAX_SKEW_SECONDS`, during a
 * rolling change of it), its clock behind by as much: so the record is kept
 * by the most skew a sealer can be given, not this one's, three times over
 * (the skew it accepts, its clock behind true time, the clock that expires
 * the record ahead of it): `exp` + 1 s + 3 × 300 s (helper-161 H1: a
 * re-send to an instance with 30 s ran again once this one's 0 s had passed;
 * helper-164 H1: one with 300 s and a clock 65 s behind, past 30 s × 3).
 */
function onceRequestOf(claims: TicketClaims, answer: string): OnceRequest {
  return {
    nonce: claims.nonce,
    requestDigest: digestCanonical(answer),
    expiresAt: (claims.exp + 1 + 3 * MAX_SKEW_SECONDS) * 1000,
  };
}

/** After the store claimed (or refused) the nonce: its verdict, audited (a record written in the transaction goes to the other sinks now). */
async function settle<View, Tx>(
  flow: Flow<View, Tx>,
  result: OnceResult<Json>,
  performed: 'completed' | 'declined',
  written: GateAuditEvent | undefined,
  question: string | undefined,
  level: ConfirmationLevel,
  receipt?: string,
): Promise<CallToolResult> {
  const { round } = flow;
  round.declined = performed === 'declined';
  if (result.status === 'performed' && round.silent) {
    // Committed: from here on an error must not claim that nothing changed. No record to write.
    round.performed = true;
    round.closed = true;
    return result.outcome as unknown as CallToolResult;
  }
  // Added to a fresh object, not spread first: see `Round.known`.
  const about = round.known();
  about.confirmation = level;
  if (question !== undefined) about.question = question;
  const signed = receipt !== undefined ? { receipt } : {};
  switch (result.status) {
    case 'performed':
      // Committed: from here on an error must not claim that nothing changed.
      round.performed = true;
      round.closed = true;
      if (written) await round.afterCommit(written);
      else
        await round.emit({
          outcome: performed,
          ...about,
          ...signed,
          isError: isErrorOf(result.outcome),
        });
      return result.outcome as unknown as CallToolResult;
    case 'replayed':
      round.replayed = true;
      await round.emit({ outcome: 'replayed', ...about, isError: isErrorOf(result.outcome) });
      return result.outcome as unknown as CallToolResult;
    case 'refused':
      if (result.reason === 'expired') return expiredByStore(flow);
      await round.emit({ outcome: 'refused', reason: `nonce_${result.reason}`, ...about });
      return textResult(
        result.reason === 'in_progress'
          ? 'This confirmation is being carried out by another request, or by one that stopped before it finished; nothing more was done. Send it again for its result; if this answer stays, call the tool again for a new confirmation.'
          : 'This confirmation was already used; this request changed nothing. Call the tool again for a new confirmation.',
        { isError: true },
      );
  }
}

/** `isError` of a recorded `CallToolResult`. */
function isErrorOf(result: Json): boolean {
  return typeof result === 'object' && result !== null && !Array.isArray(result)
    ? result.isError === true
    : false;
}
