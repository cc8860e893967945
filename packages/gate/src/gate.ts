import { digestCanonical } from '@mrtr/digest';
import type { ReplayStore } from '@mrtr/replay';
import type { TicketSealer } from '@mrtr/ticket';
import type { CallToolResult, InputRequiredResult } from '@mrtr/wire';
import {
  context,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { answer } from './answer.js';
import { type ApprovalChannel, isApprovalField } from './approval.js';
import { ask } from './ask.js';
import { AuditFanout, type AuditSink, AuditSinkError } from './audit.js';
import {
  ApprovalChannelError,
  canonicalArgumentsOf,
  errorName,
  isOutcomeUnknown,
  toMcpError,
} from './errors.js';
import type { FormFields } from './fields.js';
import {
  assertLevel,
  type Flow,
  type GateParts,
  modeFor,
  policyOf,
  principalIdOf,
} from './flow.js';
import { openTicket } from './open.js';
import { recordedText } from './recorded-text.js';
import { Round } from './round.js';
import { type GatedTool, type GatedToolDeclaration, gatedTool } from './tool.js';
import { defaultTracer, parentContext, SpanAttribute, startRoundSpan } from './trace.js';
import type { GateRequest, GateSpec, ReceiptIssuer } from './types.js';

/** Options of {@link ConfirmationGate}. */
export interface ConfirmationGateOptions<Tx> {
  /** Seals and opens tickets (`requestState`); its acceptance window sets how long replay records live. */
  sealer: TicketSealer;
  /**
   * Keeps each confirmation at most once; share one across server instances.
   * A store whose claim commits with the mutation (`@mrtr/replay-postgres`
   * on the application's database, alone or behind a faster store through
   * `LedgerReplayStore`) keeps that guarantee even if a faster store forgets.
   */
  store: ReplayStore<Tx>;
  /**
   * Where URL-mode approvals live and are decided (`@mrtr/approval-page`):
   * required by operations whose level is `url`, `presence` or `form-or-url`.
   */
  approvals?: ApprovalChannel;
  /**
   * Signs an approval receipt (`@mrtr/receipt`) for every confirmation that
   * lets an operation run, inside the claim and before `perform`, which gets
   * it (to hand to an executor that verifies it); it is in the `completed`
   * audit record. A receipt that cannot be signed stops the operation:
   * `-32603` "This request changed nothing" (cause a `ReceiptIssuerError`),
   * the claim given back, so the same confirmation can be retried.
   */
  receipts?: ReceiptIssuer;
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
  /** Clock of the audit records, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

/**
 * The MRTR confirmation flow for one destructive operation (MCP 2026-07-28
 * `basic/patterns/mrtr`; `client/elicitation` form and URL modes). Each step
 * lives in its own file, in the order a round runs them:
 *
 * 1. `ask.ts`, round 1 (no `requestState`): read the live target
 *    (`prepare`), choose the mode this request's capabilities allow under
 *    the operation's level, seal a ticket binding principal, operation,
 *    argument digest, question key, phase and the digest of the question
 *    shown (and the approval id in URL mode), answer `input_required`.
 * 2. `open.ts`: open the ticket for this principal, operation and arguments.
 * 3. `answer.ts`: `cancel` changes nothing; `decline` uses the ticket up;
 *    otherwise the live question must still be the one sealed (else it is
 *    asked afresh); a missing answer is asked again; an `accept` is
 *    validated (schema, text, candidates, `check`, consent) or, in URL
 *    mode, its decision on the approval page read.
 * 4. `perform.ts`: claim the nonce; inside the claim read the target again
 *    and `perform`; record the outcome under the nonce. An identical
 *    re-issue gets the recorded outcome; any other use of a used nonce is
 *    refused.
 *
 * Every round writes audit records (`round.ts`, `audit.ts`) and is one span
 * (`trace.ts`) whose parent is the `_meta` trace context and which links to
 * the round that minted its ticket. Reason codes: `reasons.ts`.
 *
 * Errors (JSON-RPC, thrown as `McpError`, recognised by brand): `-32021`
 * when this request declares no elicitation mode the level allows;
 * `-32602` (with `data.reason`) for arguments RFC 8785 cannot canonicalize,
 * a ticket that does not open for this principal, operation and arguments,
 * or an approval that is gone; `-32603` saying nothing was changed when the
 * replay store is unavailable or an audit sink failed before the mutation,
 * or when the approval channel's store cannot be reached (URL mode) or the
 * receipt issuer failed,
 * or saying the operation was carried out when only its final record could
 * not be written. What `prepare` or `perform` throw propagates unchanged,
 * after a `failed` record; nothing was mutated.
 *
 * @example
 * ```ts
 * import { ConfirmationGate, type GateSpec } from '@mrtr/gate';
 * import { MemoryReplayStore } from '@mrtr/replay';
 * import type { ToolDefinition } from '@mrtr/server';
 * import { TicketSealer } from '@mrtr/ticket';
 *
 * declare const spec: GateSpec<string, void>; // what to ask and what to do: see GateSpec
 * const sealer = new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET ?? '' }] });
 * const gate = new ConfirmationGate({ sealer, store: new MemoryReplayStore() });
 * const tool: ToolDefinition = {
 *   name: 'delete_thing',
 *   inputSchema: { type: 'object' },
 *   handler: (_args, context) => gate.run(context, spec), // or declare the whole tool with gate.tool()
 * };
 * ```
 */
export class ConfirmationGate<Tx = void> {
  readonly #parts: GateParts<Tx>;
  readonly #audit: AuditFanout<Tx>;
  readonly #tracer: Tracer | undefined;
  readonly #propagator: Pick<TextMapPropagator, 'extract'> | undefined;
  readonly #now: () => number;

  constructor(options: ConfirmationGateOptions<Tx>) {
    this.#parts = {
      sealer: options.sealer,
      store: options.store,
      approvals: options.approvals,
      receipts: options.receipts,
    };
    this.#audit = new AuditFanout(options.audit);
    this.#tracer = options.tracer;
    this.#propagator = options.propagator;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Declare a gated tool in one place: its arguments (a Standard Schema,
   * e.g. zod 4, giving both validation and `inputSchema`), its form by field
   * kind, what to ask from live data, and what to do inside the claim.
   * @returns a tool `@mrtr/server`'s `createMcpEndpoint({ tools })` serves as it is.
   * @throws {TypeError} when the form has no consent field.
   * @example
   * ```ts
   * import { type ConfirmationGate, confirm, withoutAsking } from '@mrtr/gate';
   * import type { SqlQueryable } from '@mrtr/sql';
   * import { textResult } from '@mrtr/wire';
   * import { z } from 'zod';
   *
   * declare const gate: ConfirmationGate<SqlQueryable>; // on a PostgresReplayStore
   * declare const db: SqlQueryable;
   * declare function findNote(q: SqlQueryable, id: string): Promise<{ id: string; title: string } | undefined>;
   * const remove = gate.tool({
   *   name: 'notes_delete',
   *   description: 'Delete a note; a person confirms.',
   *   args: z.object({ id: z.string().regex(/^[\w-]{1,64}$/) }), // an id: nothing a database can't keep
   *   form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
   *   async ask({ args, tx }) {
   *     const note = await findNote(tx ?? db, args.id);
   *     if (!note) return withoutAsking(textResult(`No note ${args.id}.`, { isError: true }));
   *     return { message: `Delete "${note.title}"? This cannot be undone.`, view: note };
   *   },
   *   async perform({ view, tx }) {
   *     await tx.query('DELETE FROM notes WHERE id = $1', [view.id]);
   *     return textResult(`Deleted "${view.title}".`);
   *   },
   * });
   * ```
   */
  tool<Args, View, F extends FormFields>(
    declaration: GatedToolDeclaration<Args, View, F, Tx>,
  ): GatedTool<Args> {
    return gatedTool(this, declaration);
  }

  /** Whether this gate can put URL-mode questions (it was given an approvals channel). */
  get approvals(): ApprovalChannel | undefined {
    return this.#parts.approvals;
  }

  /**
   * How long a ticket this gate mints can still be answered, in
   * milliseconds counted from the moment it is minted: its sealer's
   * `ttlSeconds` plus `maxSkewSeconds`, times 1000 (330 000 with the
   * `TicketSealer` defaults). A ticket minted at instant `t` opens until at
   * least `t` plus this, and at most one second longer
   * (`TicketSealer.acceptedUntil`: `exp` is whole seconds); an answer after
   * that is refused `-32602` `ticket_expired`. Whatever holds a person's
   * question open for the gate (the `@mrtr/sdk` bridge on a 2025-era
   * session) should wait no longer than this.
   */
  get ticketAcceptanceMs(): number {
    const { sealer } = this.#parts;
    return (sealer.ttlSeconds + sealer.maxSkewSeconds) * 1000;
  }

  /**
   * Run one round of the gated operation `spec` for `request`.
   * @returns an `InputRequiredResult` (ask, ask again) or a complete `CallToolResult`.
   * @throws {McpError} `-32021`, `-32602` or `-32603` as described on the class.
   * @throws {TypeError} for a spec without `consents` or `perform`, or whose
   *   fixed `level` is no level or needs the `approvals` this gate lacks (programming errors).
   */
  async run<View>(
    request: GateRequest,
    spec: GateSpec<View, Tx>,
  ): Promise<CallToolResult | InputRequiredResult> {
    assertSpec(spec);
    assertLevel(spec.level, this.#parts.approvals !== undefined, `the spec of ${request.name}`);
    const phase = spec.phase ?? 'confirm';
    const parent = parentContext(request.meta, this.#propagator);
    const span = startRoundSpan(this.#tracer ?? defaultTracer(), parent, request, phase);
    const round = new Round(span, this.#audit as AuditFanout<unknown>, this.#now);
    const receivedAt = this.#now();
    try {
      const result = await context.with(trace.setSpan(parent, span), async () => {
        const flow = this.#flow(request, spec, round, phase, receivedAt);
        // Capabilities are read from this request only; an earlier declaration never counts.
        // Before anything is read: a level that depends on the target needs at least one mode here.
        modeFor(flow, policyOf(flow.spec));
        if (request.requestState === undefined) return ask(flow);
        return answer(flow, await openTicket(flow));
      });
      if (result.resultType !== 'input_required' && result.isError === true) {
        span.setAttribute(SpanAttribute.errorType, 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return result;
    } catch (error) {
      span.setAttribute(SpanAttribute.errorType, errorName(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
      if (round.base && !round.closed) {
        if (isCapabilityError(error)) {
          await round.emit({ outcome: 'refused', reason: 'capability_missing' }).catch(() => {});
        } else {
          // Best effort: the round already failed; a sink that cannot write this either changes nothing.
          const reason =
            error instanceof AuditSinkError
              ? 'audit_sink_failed'
              : error instanceof ApprovalChannelError
                ? 'approval_unavailable'
                : isOutcomeUnknown(error)
                  ? 'outcome_unknown'
                  : errorName(error);
          await round.emit({ outcome: 'failed', reason, ...round.known() }).catch(() => {});
        }
      }
      throw toMcpError(error, round);
    } finally {
      span.end();
    }
  }

  #flow<View>(
    request: GateRequest,
    spec: GateSpec<View, Tx>,
    round: Round,
    phase: string,
    receivedAt: number,
  ): Flow<View, Tx> {
    const principal = principalIdOf(request);
    const operation = `${request.method}:${request.name}`;
    round.canonicalArguments = canonicalArgumentsOf(request);
    const argsDigest = digestCanonical(round.canonicalArguments);
    // What the records say of the request is read now: `prepare` or `perform` may change the object.
    // A silent round writes no record: nothing to read.
    if (!round.silent)
      round.base = {
        // Exactly, when a ticket can bind it; else (refused when asked) as records keep text a caller chose.
        principal: isApprovalField(principal) ? principal : recordedText(principal),
        ...clientOf(request),
        method: request.method,
        // A resource's name is the caller's URI: kept as other text a caller chose is.
        name: recordedText(request.name),
        operation: recordedText(operation),
        argumentsDigest: argsDigest,
        phase,
        key: spec.key,
        ...(request.requestId !== undefined
          ? {
              requestId:
                typeof request.requestId === 'string'
                  ? recordedText(request.requestId)
                  : request.requestId,
            }
          : {}),
        receivedAt,
      };
    if (round.span.isRecording())
      round.span.setAttribute(SpanAttribute.argumentsDigest, argsDigest);
    return { parts: this.#parts, request, spec, round, principal, operation, argsDigest, phase };
  }
}

function isCapabilityError(error: unknown): boolean {
  return (error as { code?: unknown })?.code === -32021;
}

/** A spec the gate can never run safely is a programming error, told at once rather than read as "no". */
function assertSpec<View, Tx>(spec: GateSpec<View, Tx>): void {
  if (typeof spec?.consents !== 'function')
    throw new TypeError(
      'GateSpec.consents must be a function: in form mode accept only means the form was submitted',
    );
  if (typeof spec.perform !== 'function' || typeof spec.prepare !== 'function')
    throw new TypeError('GateSpec needs prepare and perform functions');
}

/**
 * The `client` of a record: `clientInfo` (given, or read from `_meta`),
 * reduced to name, version and title, each as {@link recordedText} keeps it.
 */
function clientOf(request: GateRequest): {
  client?: { name: string; version: string; title?: string };
} {
  const info =
    request.clientInfo ??
    (request.meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/clientInfo'];
  if (info === null || typeof info !== 'object') return {};
  const { name, version, title } = info as Record<string, unknown>;
  if (typeof name !== 'string' || typeof version !== 'string') return {};
  const client = { name: recordedText(name), version: recordedText(version) };
  return { client: typeof title === 'string' ? { ...client, title: recordedText(title) } : client };
}
