import { CanonicalizeError, canonicalize, digestCanonical, digestJson } from '@mrtr/digest';
import { type Json, type ReplayStore, ReplayStoreUnavailableError } from '@mrtr/replay';
import type { TicketClaims, TicketFailureReason, TicketSealer } from '@mrtr/ticket';
import {
  type CallToolResult,
  ElicitResultSchema,
  ErrorCode,
  type InputRequiredResult,
  McpError,
  missingCapabilityError,
  type RequestedSchema,
  supportsFormElicitation,
  textResult,
  validateFormContent,
} from '@mrtr/wire';
import {
  type Context,
  context,
  type Span,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AuditFanout, type AuditSink, AuditSinkError, type GateAuditEvent } from './audit.js';
import {
  defaultTracer,
  parentContext,
  previousRoundLink,
  SpanAttribute,
  sealTraceContext,
  startRoundSpan,
} from './trace.js';
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
  /**
   * Audit sinks (optional): one record or more per round, written in the
   * order given (see `GateAuditEvent`). A sink that throws before the
   * mutation makes the round fail closed.
   */
  audit?: AuditSink<Tx> | readonly AuditSink<Tx>[];
  /** Tracer of the round spans (default: the global provider's `@mrtr/gate` tracer, a no-op without an SDK). */
  tracer?: Tracer;
  /**
   * Extracts `traceparent`, `tracestate` and `baggage` from the request
   * `_meta` (default: the global propagator, which an OpenTelemetry SDK sets
   * to W3C Trace Context and W3C Baggage).
   */
  propagator?: Pick<TextMapPropagator, 'extract'>;
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

/** What the gate seals as the ticket's `app` claim: the tool's data and the asking round's span. */
interface SealedApp {
  /** The tool's application data (`Preparation.app`). */
  a?: Json;
  /** The asking round's span context, when it was recorded (see `sealTraceContext`). */
  t?: string;
}

/** Per-record fields; the rest of a record is the round's. */
type RecordFields = Pick<GateAuditEvent, 'outcome'> &
  Partial<
    Pick<GateAuditEvent, 'reason' | 'nonce' | 'question' | 'requestedSchema' | 'answer' | 'isError'>
  >;

/** What one round knows while it runs. */
interface Round {
  span: Span;
  parent: Context;
  phase: string;
  receivedAt: number;
  /** The request, once its arguments are digested: records can be written from then on. */
  request?: GateRequest;
  /** `request.arguments` as RFC 8785 text. */
  canonicalArguments?: string;
  argumentsDigest?: string;
  /** The record fields every record of the round shares. */
  base?: Omit<GateAuditEvent, keyof RecordFields | 'at' | 'trace'>;
  /** `base.arguments` holds the parsed canonical arguments (done once a record is built). */
  argumentsParsed?: boolean;
  /** A terminal record (`refused`, `failed`) was written: no `failed` record is added on the way out. */
  closed: boolean;
  /** The mutation committed: an error now must not say that nothing changed. */
  performed: boolean;
  /** The nonce of the round, once known (for the `failed` record). */
  nonce?: string;
  answer?: GateAuditEvent['answer'];
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
 * set, `check` (ask again on failure) → consent → `accepted` audit record →
 * claim the nonce in the replay store and `perform` (re-authorize, re-read,
 * mutate) → `completed` record in the store's transaction for transactional
 * sinks → outcome recorded under the nonce → `completed` record for the other
 * sinks. An identical re-issue gets the recorded outcome; any other use of a
 * used nonce is refused.
 *
 * Audit: every round writes its records (see `GateAuditEvent`) to every sink.
 * Tracing: every round is one span (`tools/call <name>`, kind SERVER) whose
 * parent is the trace context of the request `_meta` (`traceparent`,
 * `tracestate`, `baggage`); a round that presents a ticket links to the span
 * of the round that minted it (its context travels sealed in the ticket), and
 * every span carries the ticket nonce as `mrtr.ticket.nonce`.
 *
 * Errors (JSON-RPC, thrown as {@link McpError}): `-32021` without form
 * elicitation; `-32602` for arguments RFC 8785 cannot canonicalize, and for
 * a ticket that fails to open or does not belong to this principal,
 * operation or arguments. The refusal's audit reason is `ticket_<reason>`
 * with the `@mrtr/ticket` failure reason (`ticket_principal`, `ticket_mac`
 * for a ticket altered or presented with another operation or other
 * arguments, which the AEAD cannot tell apart, `ticket_expired`, …) or
 * `ticket_operation` for another input key or phase. `-32603` with a message
 * that says nothing was changed when the replay store is unavailable
 * (`ReplayStoreUnavailableError`; after a lost PostgreSQL `COMMIT` an
 * identical retry tells what happened) or an audit sink failed before the
 * mutation (`cause`: {@link AuditSinkError}); `-32603` saying the operation
 * was carried out when only its final audit record could not be written
 * outside the store's transaction (an identical retry gets the recorded
 * outcome). Whatever else `prepare` or `perform` throws propagates
 * unchanged, after a `failed` record; nothing was mutated.
 */
export class ConfirmationGate<Tx = void> {
  readonly #sealer: TicketSealer;
  readonly #store: ReplayStore<Tx>;
  readonly #audit: AuditFanout<Tx>;
  readonly #tracer: Tracer | undefined;
  readonly #propagator: Pick<TextMapPropagator, 'extract'> | undefined;
  readonly #now: () => number;

  constructor(options: ConfirmationGateOptions<Tx>) {
    this.#sealer = options.sealer;
    this.#store = options.store;
    this.#audit = new AuditFanout(options.audit);
    this.#tracer = options.tracer;
    this.#propagator = options.propagator;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Run one round of the gated operation `spec` for `request`.
   * @returns an `InputRequiredResult` (ask, ask again) or a complete `CallToolResult`.
   * @throws {McpError} `-32021`, `-32602` or `-32603` as described on the class.
   */
  async run<App extends Json | undefined = undefined>(
    request: GateRequest,
    spec: GateSpec<App, Tx>,
  ): Promise<CallToolResult | InputRequiredResult> {
    const phase = spec.phase ?? 'confirm';
    const parent = parentContext(request.meta, this.#propagator);
    const span = startRoundSpan(this.#tracer ?? defaultTracer(), parent, request, phase);
    const round: Round = {
      span,
      parent,
      phase,
      receivedAt: this.#now(),
      closed: false,
      performed: false,
    };
    try {
      const result = await context.with(trace.setSpan(parent, span), () =>
        this.#round(request, spec, round),
      );
      if (result.resultType !== 'input_required' && result.isError === true) {
        span.setAttribute(SpanAttribute.errorType, 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return result;
    } catch (error) {
      span.setAttribute(SpanAttribute.errorType, errorName(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
      if (round.request && !round.closed) {
        // Best effort: the round already failed; a sink that cannot write this either changes nothing.
        const reason = error instanceof AuditSinkError ? 'audit_sink_failed' : errorName(error);
        await this.#emit(round, { outcome: 'failed', reason, ...this.#known(round) }).catch(
          () => {},
        );
      }
      throw toMcpError(error, round.performed);
    } finally {
      span.end();
    }
  }

  async #round<App extends Json | undefined>(
    request: GateRequest,
    spec: GateSpec<App, Tx>,
    round: Round,
  ): Promise<CallToolResult | InputRequiredResult> {
    const principal =
      typeof request.principal === 'string' ? request.principal : request.principal.id;
    const operation = `${request.method}:${request.name}`;
    round.canonicalArguments = canonicalArgumentsOf(request);
    const argumentsDigest = digestCanonical(round.canonicalArguments);
    round.argumentsDigest = argumentsDigest;
    round.request = request;
    // What the records say of the request is read now: `prepare` or `perform` may change the object.
    round.base = {
      principal,
      ...clientOf(request),
      method: request.method,
      name: request.name,
      operation,
      arguments: {}, // parsed from the canonical text when the first record is built
      argumentsDigest,
      phase: round.phase,
      key: spec.key,
      ...(request.requestId !== undefined ? { requestId: request.requestId } : {}),
      receivedAt: round.receivedAt,
    };
    if (round.span.isRecording())
      round.span.setAttribute(SpanAttribute.argumentsDigest, argumentsDigest);

    // Capabilities are read from this request only; an earlier declaration never counts.
    if (!supportsFormElicitation(request.capabilities)) {
      await this.#emit(round, { outcome: 'refused', reason: 'capability_missing' });
      throw new McpError(
        ErrorCode.MissingRequiredClientCapability,
        `${request.name} needs a person to confirm it through form elicitation; declare elicitation.form in _meta clientCapabilities`,
        missingCapabilityError(FORM_ELICITATION_REQUIRED).data,
      );
    }

    if (request.requestState === undefined) return this.#ask(principal, spec, operation, round);

    // The ticket opens only for this principal, operation and argument digest (see @mrtr/ticket).
    const opened = this.#sealer.open<SealedApp>(request.requestState, {
      sub: principal,
      op: operation,
      ad: argumentsDigest,
    });
    const unwrapped = opened.ok ? unwrapApp(opened.claims.app) : undefined;
    if (!opened.ok || !unwrapped) {
      const reason = opened.ok ? 'malformed' : opened.reason;
      await this.#emit(round, { outcome: 'refused', reason: `ticket_${reason}` });
      throw new McpError(
        ErrorCode.InvalidParams,
        `requestState rejected (${reason})${REFUSAL_DETAIL[reason] ?? ''}`,
      );
    }
    const { app: _wrapped, ...rest } = opened.claims;
    const claims = { ...rest } as TicketClaims<App>;
    if (unwrapped.a !== undefined) claims.app = unwrapped.a as App;
    const nonce = claims.n;
    round.nonce = nonce;
    round.span.setAttribute(SpanAttribute.nonce, nonce);
    const link = unwrapped.t === undefined ? undefined : previousRoundLink(unwrapped.t);
    if (link) round.span.addLink(link);
    // What the sealer cannot know: which question and phase of this tool the ticket was for.
    if (claims.key !== spec.key || claims.ph !== round.phase) {
      await this.#emit(round, { outcome: 'refused', reason: 'ticket_operation', nonce });
      throw new McpError(
        ErrorCode.InvalidParams,
        'requestState rejected (operation): it was issued for another request',
      );
    }

    const sealed: SealedContext<App> = { candidates: claims.cand, app: claims.app as App };
    const again = async (notice: string, reason: string) => {
      const q = spec.question(sealed, notice);
      await this.#emit(round, {
        outcome: 'asked_again',
        reason,
        nonce,
        question: q.message,
        requestedSchema: q.requestedSchema,
        ...(round.answer ? { answer: round.answer } : {}),
      });
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
    round.answer = answered;
    round.span.setAttribute(SpanAttribute.action, answer.action);
    const requestDigest = digestJson({
      sub: claims.sub,
      op: claims.op,
      ad: claims.ad,
      key: claims.key,
      answer: answered,
    });
    const claim = { nonce, requestDigest, expiresAt: (claims.exp + 60) * 1000 };
    const question = spec.question(sealed);
    const answeredTo = { nonce, answer: answered, question: question.message };

    if (answer.action === 'cancel') {
      const result = spec.cancelled?.(sealed) ?? textResult('Cancelled. Nothing was changed.');
      await this.#emit(round, { outcome: 'cancelled', ...answeredTo, isError: !!result.isError });
      return result;
    }

    const refusal = async () => {
      let record: GateAuditEvent | undefined;
      const result = await this.#store.once(claim, async (tx: Tx) => {
        const declined = toJson(
          spec.declined?.(sealed) ?? textResult('Declined. Nothing was changed.'),
        );
        record = await this.#inTransaction(round, tx, {
          outcome: 'declined',
          ...answeredTo,
          isError: isErrorOf(declined),
        });
        return declined;
      });
      return this.#settle(round, result, 'declined', record, answeredTo);
    };
    if (answer.action === 'decline') return refusal();

    const valid = validateFormContent(question.requestedSchema, answer.content);
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
    // A spec without `consents` (plain JavaScript, an `as` cast) never consents: fail safe.
    if (typeof spec.consents !== 'function' || spec.consents(content, sealed) !== true)
      return refusal();

    // Written before the claim: a sink that cannot write it stops the mutation.
    await this.#emit(round, { outcome: 'accepted', ...answeredTo });
    let record: GateAuditEvent | undefined;
    let result: Awaited<ReturnType<ReplayStore<Tx>['once']>>;
    try {
      result = await this.#store.once(claim, async (tx: Tx) => {
        const input: PerformInput<App, Tx> = { content, claims, sealed, tx };
        const performed = toJson(await spec.perform(input));
        // Inside the store's transaction: a failed write rolls back the claim and the mutation.
        record = await this.#inTransaction(round, tx, {
          outcome: 'completed',
          ...answeredTo,
          isError: isErrorOf(performed),
        });
        return performed;
      });
    } catch (error) {
      if (error instanceof StaleTargetError) {
        await this.#emit(round, { outcome: 'asked_again', reason: 'stale_target', ...answeredTo });
        return this.#ask(principal, spec, operation, round);
      }
      throw error;
    }
    return this.#settle(round, result, 'completed', record, answeredTo);
  }

  /**
   * Write `fields` to the transactional sinks inside the store's transaction
   * `tx`, when the store hands one; returns the record so the other sinks get
   * the same one after the commit.
   */
  async #inTransaction(
    round: Round,
    tx: Tx,
    fields: RecordFields,
  ): Promise<GateAuditEvent | undefined> {
    if (tx === undefined || tx === null || !this.#audit.transactional) return undefined;
    const record = this.#record(round, fields);
    await this.#audit.write(record, 'in_tx', tx);
    return record;
  }

  /** The end of a claim: the store's verdict, audited (the rest of a record written in the transaction). */
  async #settle(
    round: Round,
    result: Awaited<ReturnType<ReplayStore<Tx>['once']>>,
    performed: 'completed' | 'declined',
    written: GateAuditEvent | undefined,
    answeredTo: Pick<GateAuditEvent, 'nonce' | 'answer' | 'question'>,
  ): Promise<CallToolResult> {
    switch (result.status) {
      case 'performed': {
        // Committed: from here on an error must not claim that nothing changed.
        round.performed = true;
        round.closed = true;
        if (written) {
          this.#annotate(round, written);
          await this.#audit.write(written, 'outside_tx');
        } else {
          await this.#emit(round, {
            outcome: performed,
            ...answeredTo,
            isError: isErrorOf(result.outcome),
          });
        }
        return result.outcome as unknown as CallToolResult;
      }
      case 'replayed': {
        const outcome = result.outcome as unknown as CallToolResult;
        await this.#emit(round, {
          outcome: 'replayed',
          ...answeredTo,
          isError: isErrorOf(result.outcome),
        });
        return outcome;
      }
      case 'refused':
        await this.#emit(round, {
          outcome: 'refused',
          reason: `nonce_${result.reason}`,
          ...answeredTo,
        });
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
    round: Round,
  ): Promise<CallToolResult | InputRequiredResult> {
    const prepared = await spec.prepare();
    if (prepared.result) {
      await this.#emit(round, {
        outcome: 'refused',
        reason: 'not_asked',
        isError: !!prepared.result.isError,
      });
      return prepared.result;
    }
    const sealed: SealedContext<App> = { candidates: prepared.candidates, app: prepared.app };
    const q = spec.question(sealed);
    const claims: Omit<TicketClaims<SealedApp>, 'n' | 'iat' | 'exp'> = {
      sub: principal,
      op: operation,
      ad: round.argumentsDigest as string,
      key: spec.key,
      ph: round.phase,
    };
    if (prepared.candidates) claims.cand = prepared.candidates;
    const app: SealedApp = {};
    if (prepared.app !== undefined) app.a = prepared.app;
    const traced = sealTraceContext(round.span);
    if (traced !== undefined) app.t = traced;
    if (app.a !== undefined || app.t !== undefined) claims.app = app;
    const { ticket, claims: minted } = this.#sealer.seal(claims);
    round.nonce = minted.n;
    round.span.setAttribute(SpanAttribute.nonce, minted.n);
    await this.#emit(round, {
      outcome: 'asked',
      nonce: minted.n,
      question: q.message,
      requestedSchema: q.requestedSchema,
    });
    return this.#inputRequired(spec.key, q, ticket);
  }

  /** A complete record of this round. */
  #record(round: Round, fields: RecordFields): GateAuditEvent {
    // Outcome and nonce first: what a reader of the trail scans for.
    const { outcome, ...rest } = fields;
    const head = fields.nonce === undefined ? {} : { nonce: fields.nonce };
    const base = this.#base(round);
    const record = { outcome, ...head, ...base, ...rest, at: this.#now() };
    if (round.span.isRecording()) {
      const { traceId, spanId } = round.span.spanContext();
      (record as GateAuditEvent).trace = { traceId, spanId };
    }
    return record as GateAuditEvent;
  }

  /** The fields every record of the round shares, with the arguments parsed on first use. */
  #base(round: Round): NonNullable<Round['base']> {
    const base = round.base as NonNullable<Round['base']>;
    if (!round.argumentsParsed) {
      base.arguments = JSON.parse(round.canonicalArguments as string) as Record<string, unknown>;
      round.argumentsParsed = true;
    }
    return base;
  }

  /**
   * Build, annotate the span with, and write a record to every sink. With no
   * sink and a span that records nothing, no record is built: an unaudited,
   * untraced gate pays nothing for either.
   */
  async #emit(round: Round, fields: RecordFields): Promise<void> {
    if (fields.outcome === 'refused' || fields.outcome === 'failed') round.closed = true;
    if (this.#audit.empty && !round.span.isRecording()) return;
    const record = this.#record(round, fields);
    this.#annotate(round, record);
    await this.#audit.write(record, 'all');
  }

  #annotate(round: Round, record: GateAuditEvent): void {
    if (!round.span.isRecording()) return;
    const attributes: Record<string, string> = { [SpanAttribute.outcome]: record.outcome };
    if (record.reason !== undefined) attributes[SpanAttribute.reason] = record.reason;
    round.span.setAttributes(attributes);
    round.span.addEvent(`mrtr.gate.${record.outcome}`, attributes);
  }

  /** What a `failed` record can say about the round so far. */
  #known(round: Round): Partial<RecordFields> {
    return {
      ...(round.nonce !== undefined ? { nonce: round.nonce } : {}),
      ...(round.answer !== undefined ? { answer: round.answer } : {}),
    };
  }

  #inputRequired(
    key: string,
    q: { message: string; requestedSchema: RequestedSchema },
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
 * The RFC 8785 text of the arguments, whose digest the ticket binds. Arguments JSON cannot carry exactly
 * (a lone surrogate from a `\ud800` escape, nesting past the canonicalizer's
 * limit) are the caller's error: -32602, before anything else happens.
 */
function canonicalArgumentsOf(request: GateRequest): string {
  try {
    return canonicalize(request.arguments);
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

/** `isError` of a recorded `CallToolResult`. */
function isErrorOf(result: Json): boolean {
  return typeof result === 'object' && result !== null && !Array.isArray(result)
    ? result.isError === true
    : false;
}

/** The `client` of a record: `clientInfo` (given, or read from `_meta`), reduced to name, version and title. */
function clientOf(request: GateRequest): Pick<GateAuditEvent, 'client'> {
  const info =
    request.clientInfo ??
    (request.meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/clientInfo'];
  if (info === null || typeof info !== 'object') return {};
  const { name, version, title } = info as Record<string, unknown>;
  if (typeof name !== 'string' || typeof version !== 'string') return {};
  return { client: typeof title === 'string' ? { name, version, title } : { name, version } };
}

/** The ticket's `app` claim as the gate sealed it, or `undefined` when it is not that shape. */
function unwrapApp(app: unknown): SealedApp | undefined {
  if (app === undefined) return {};
  if (app === null || typeof app !== 'object' || Array.isArray(app)) return undefined;
  const { a, t, ...other } = app as Record<string, unknown>;
  if (Object.keys(other).length > 0 || (t !== undefined && typeof t !== 'string')) return undefined;
  const sealed: SealedApp = {};
  if (a !== undefined) sealed.a = a as Json;
  if (t !== undefined) sealed.t = t as string;
  return sealed;
}

/**
 * The JSON-RPC error a failure becomes. A replay store that cannot be
 * reached, or an audit sink that failed, gets `-32603` with a message the
 * caller can act on instead of the server's generic internal error.
 */
function toMcpError(error: unknown, performed: boolean): unknown {
  if (error instanceof McpError) return error;
  if (isNamed(error, 'ReplayStoreUnavailableError') || error instanceof ReplayStoreUnavailableError)
    return withCause(
      new McpError(
        ErrorCode.InternalError,
        'Nothing was changed: the store that keeps each confirmation single-use is unavailable. Retry the same confirmation later; it still runs at most once.',
      ),
      error,
    );
  if (error instanceof AuditSinkError)
    return withCause(
      new McpError(
        ErrorCode.InternalError,
        performed
          ? 'The operation was carried out, but its audit record could not be written. Retrying the same confirmation returns its result without repeating it.'
          : 'Nothing was changed: the audit trail could not be written. Retry the same request later.',
      ),
      error,
    );
  return error;
}

/** `error` with `cause` set (ES2022 `Error.cause`), for logs; never sent on the wire. */
function withCause(error: McpError, cause: unknown): McpError {
  Object.defineProperty(error, 'cause', { value: cause, enumerable: false, configurable: true });
  return error;
}

function isNamed(error: unknown, name: string): boolean {
  return error instanceof Error && error.name === name;
}
