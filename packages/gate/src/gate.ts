import { CanonicalizeError, digestJson } from '@mrtr/digest';
import type { Json, ReplayStore } from '@mrtr/replay';
import type { TicketClaims, TicketFailureReason, TicketSealer } from '@mrtr/ticket';
import {
  type CallToolResult,
  ElicitResultSchema,
  ErrorCode,
  type InputRequiredResult,
  McpError,
  missingCapabilityError,
  supportsFormElicitation,
  textResult,
  validateFormContent,
} from '@mrtr/wire';
import type { AuditSink, GateAuditEvent } from './audit.js';
import {
  type GateRequest,
  type GateSpec,
  type PerformInput,
  type SealedContext,
  StaleTargetError,
} from './types.js';

/** Options of {@link ConfirmationGate}. */
export interface ConfirmationGateOptions<Tx> {
  /** Seals and opens tickets (`requestState`). */
  sealer: TicketSealer;
  /** Keeps each confirmation at most once; share one across server instances. */
  store: ReplayStore<Tx>;
  /** Receives one audit event per round (optional). */
  audit?: AuditSink;
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

/** What a refusal tells the caller beyond the reason code; never anything from inside the ticket. */
const REFUSAL_DETAIL: Partial<Record<TicketFailureReason, string>> = {
  principal: ': it was issued for another caller',
  mac: ': it was altered, or issued for another operation or other arguments',
  expired: ': the confirmation expired; call the tool again',
};

/** The `_meta`-declared capability a gated request needs. */
export const FORM_ELICITATION_REQUIRED = { elicitation: { form: {} } } as const;

/**
 * The MRTR confirmation flow for one destructive operation
 * (MCP 2026-07-28 `basic/patterns/mrtr`; `client/elicitation` form mode).
 *
 * Round 1 (no `requestState`): check this request's capabilities, `prepare`,
 * seal a ticket binding principal, operation, argument digest, input key,
 * candidates and phase, and answer `input_required`.
 *
 * Round 2, in order: open the ticket → principal → operation and argument
 * digest → read the answer for the key (missing or malformed: ask again,
 * nothing consumed) → `decline`: use up the nonce, complete refusal →
 * `cancel`: nothing consumed, complete result → `accept`: schema, candidate
 * set, `check` (ask again on failure) → consent → claim the nonce in the
 * replay store and `perform` (re-authorize, re-read, mutate) → outcome
 * recorded under the nonce. An identical re-issue gets the recorded outcome;
 * any other use of a used nonce is refused.
 *
 * Errors (JSON-RPC, thrown as {@link McpError}): `-32021` without form
 * elicitation; `-32602` for arguments RFC 8785 cannot canonicalize, and for
 * a ticket that fails to open or does not belong to this principal,
 * operation or arguments. The refusal's audit reason is `ticket_<reason>`
 * with the `@mrtr/ticket` failure reason (`ticket_principal`, `ticket_mac`
 * for a ticket altered or presented with another operation or other
 * arguments, which the AEAD cannot tell apart, `ticket_expired`, …) or
 * `ticket_operation` for another input key or phase. A replay store or sink
 * that fails propagates its error: nothing was mutated.
 */
export class ConfirmationGate<Tx = void> {
  readonly #sealer: TicketSealer;
  readonly #store: ReplayStore<Tx>;
  readonly #audit: AuditSink | undefined;
  readonly #now: () => number;

  constructor(options: ConfirmationGateOptions<Tx>) {
    this.#sealer = options.sealer;
    this.#store = options.store;
    this.#audit = options.audit;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Run one round of the gated operation `spec` for `request`.
   * @returns an `InputRequiredResult` (ask, ask again) or a complete `CallToolResult`.
   * @throws {McpError} `-32021` or `-32602` as described on the class.
   */
  async run<App extends Json | undefined = undefined>(
    request: GateRequest,
    spec: GateSpec<App, Tx>,
  ): Promise<CallToolResult | InputRequiredResult> {
    const principal =
      typeof request.principal === 'string' ? request.principal : request.principal.id;
    const operation = `${request.method}:${request.name}`;
    const argumentsDigest = argumentsDigestOf(request);
    const base = { principal, operation, argumentsDigest };
    const emit = async (event: Omit<GateAuditEvent, keyof typeof base | 'at'>) => {
      if (this.#audit) await this.#audit({ ...base, ...event, at: this.#now() });
    };

    // Capabilities are read from this request only; an earlier declaration never counts.
    if (!supportsFormElicitation(request.capabilities)) {
      throw new McpError(
        ErrorCode.MissingRequiredClientCapability,
        `${request.name} needs a person to confirm it through form elicitation; declare elicitation.form in _meta clientCapabilities`,
        missingCapabilityError(FORM_ELICITATION_REQUIRED).data,
      );
    }

    if (request.requestState === undefined) {
      return this.#ask(principal, spec, operation, argumentsDigest, emit, 'asked');
    }

    // The ticket opens only for this principal, operation and argument digest (see @mrtr/ticket).
    const opened = this.#sealer.open<App>(request.requestState, {
      sub: principal,
      op: operation,
      ad: argumentsDigest,
    });
    if (!opened.ok) {
      await emit({ outcome: 'refused', reason: `ticket_${opened.reason}` });
      throw new McpError(
        ErrorCode.InvalidParams,
        `requestState rejected (${opened.reason})${REFUSAL_DETAIL[opened.reason] ?? ''}`,
      );
    }
    const claims = opened.claims;
    const nonce = claims.n;
    // What the sealer cannot know: which question and phase of this tool the ticket was for.
    if (claims.key !== spec.key || claims.ph !== (spec.phase ?? 'confirm')) {
      await emit({ outcome: 'refused', reason: 'ticket_operation', nonce });
      throw new McpError(
        ErrorCode.InvalidParams,
        'requestState rejected (operation): it was issued for another request',
      );
    }

    const sealed: SealedContext<App> = { candidates: claims.cand, app: claims.app as App };
    const again = async (notice: string, reason: string) => {
      const q = spec.question(sealed, notice);
      await emit({ outcome: 'asked_again', reason, nonce, question: q.message });
      return this.#inputRequired(spec.key, q, request.requestState as string);
    };

    const parsed = ElicitResultSchema.safeParse(request.inputResponses?.[spec.key]);
    if (!parsed.success) {
      // Missing or malformed answer: never read as consent; ask again, nothing consumed.
      return again('No valid answer was received; please answer the question.', 'no_answer');
    }
    const answer = parsed.data;
    const answered = {
      action: answer.action,
      ...(answer.content ? { content: answer.content } : {}),
    };
    const requestDigest = digestJson({
      sub: claims.sub,
      op: claims.op,
      ad: claims.ad,
      key: claims.key,
      answer: answered,
    });
    const claim = { nonce, requestDigest, expiresAt: (claims.exp + 60) * 1000 };

    if (answer.action === 'cancel') {
      await emit({ outcome: 'cancelled', nonce, answer: answered });
      return spec.cancelled?.(sealed) ?? textResult('Cancelled. Nothing was changed.');
    }

    const refusal = async () => {
      const result = await this.#store.once(claim, async () =>
        toJson(spec.declined?.(sealed) ?? textResult('Declined. Nothing was changed.')),
      );
      return this.#settle(result, emit, nonce, answered, 'declined');
    };
    if (answer.action === 'decline') return refusal();

    const q = spec.question(sealed);
    const valid = validateFormContent(q.requestedSchema, answer.content);
    if (!valid.ok) {
      const detail = valid.issues
        .map((i: { field: string; reason: string }) =>
          i.field ? `${i.field} ${i.reason}` : i.reason,
        )
        .join('; ');
      return again(`The answer was not valid: ${detail}.`, 'invalid_content');
    }
    const content = valid.value;
    if (spec.candidateField !== undefined) {
      const chosen = content[spec.candidateField];
      if (typeof chosen !== 'string' || !(claims.cand ?? []).includes(chosen)) {
        return again(
          `${spec.candidateField} must be one of the offered choices.`,
          'not_a_candidate',
        );
      }
    }
    const notice = spec.check?.(content, sealed);
    if (notice !== undefined) return again(notice, 'check_failed');
    if (spec.consents && !spec.consents(content, sealed)) return refusal();

    let result: Awaited<ReturnType<ReplayStore<Tx>['once']>>;
    try {
      result = await this.#store.once(claim, async (tx: Tx) => {
        const input: PerformInput<App, Tx> = { content, claims, sealed, tx };
        return toJson(await spec.perform(input));
      });
    } catch (error) {
      if (error instanceof StaleTargetError) {
        await emit({ outcome: 'asked_again', reason: 'stale_target', nonce, answer: answered });
        return this.#ask(principal, spec, operation, argumentsDigest, emit, 'asked');
      }
      await emit({ outcome: 'failed', reason: errorName(error), nonce, answer: answered });
      throw error;
    }
    return this.#settle(result, emit, nonce, answered, 'completed');
  }

  async #settle(
    result: Awaited<ReturnType<ReplayStore<Tx>['once']>>,
    emit: (
      e: Omit<GateAuditEvent, 'principal' | 'operation' | 'argumentsDigest' | 'at'>,
    ) => Promise<void>,
    nonce: string,
    answer: { action: string; content?: Record<string, unknown> },
    performed: 'completed' | 'declined',
  ): Promise<CallToolResult> {
    switch (result.status) {
      case 'performed':
        await emit({ outcome: performed, nonce, answer });
        return result.outcome as unknown as CallToolResult;
      case 'replayed':
        await emit({ outcome: 'replayed', nonce, answer });
        return result.outcome as unknown as CallToolResult;
      case 'refused':
        await emit({ outcome: 'refused', reason: `nonce_${result.reason}`, nonce, answer });
        return textResult(
          result.reason === 'in_progress'
            ? 'This confirmation is being carried out by another request; nothing more was done.'
            : 'This confirmation was already used. Nothing was changed; call the tool again for a new confirmation.',
          { isError: true },
        );
    }
  }

  async #ask<App extends Json | undefined>(
    principal: string,
    spec: GateSpec<App, Tx>,
    operation: string,
    argumentsDigest: string,
    emit: (
      e: Omit<GateAuditEvent, 'principal' | 'operation' | 'argumentsDigest' | 'at'>,
    ) => Promise<void>,
    outcome: 'asked',
  ): Promise<CallToolResult | InputRequiredResult> {
    const prepared = await spec.prepare();
    if (prepared.result) return prepared.result;
    const sealed: SealedContext<App> = { candidates: prepared.candidates, app: prepared.app };
    const q = spec.question(sealed);
    const claims: Omit<TicketClaims<App>, 'n' | 'iat' | 'exp'> = {
      sub: principal,
      op: operation,
      ad: argumentsDigest,
      key: spec.key,
      ph: spec.phase ?? 'confirm',
    };
    if (prepared.candidates) claims.cand = prepared.candidates;
    if (prepared.app !== undefined) claims.app = prepared.app;
    const { ticket, claims: minted } = this.#sealer.seal(claims);
    await emit({ outcome, nonce: minted.n, question: q.message });
    return this.#inputRequired(spec.key, q, ticket);
  }

  #inputRequired(
    key: string,
    q: { message: string; requestedSchema: import('@mrtr/wire').RequestedSchema },
    requestState: string,
  ): InputRequiredResult {
    return {
      resultType: 'input_required',
      inputRequests: {
        [key]: {
          method: 'elicitation/create',
          params: { mode: 'form', message: q.message, requestedSchema: q.requestedSchema },
        },
      },
      requestState,
    };
  }
}

/**
 * The RFC 8785 digest the ticket binds. Arguments JSON cannot carry exactly
 * (a lone surrogate from a `\ud800` escape, nesting past the canonicalizer's
 * limit) are the caller's error: -32602, before anything else happens.
 */
function argumentsDigestOf(request: GateRequest): string {
  try {
    return digestJson(request.arguments);
  } catch (error) {
    if (error instanceof CanonicalizeError) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `arguments cannot be confirmed: ${error.code.replace(/_/g, ' ')} at ${error.path || '/'}`,
      );
    }
    throw error;
  }
}

function toJson(result: CallToolResult): Json {
  return JSON.parse(JSON.stringify(result)) as Json;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown_error';
}
