import type { RequestedSchema } from '@mrtr/wire';
import type { GateReason } from './reasons.js';

/**
 * How one round of a gated operation ended.
 * - `asked`: a question was put (`InputRequiredResult` with a new ticket).
 * - `asked_again`: the person is asked again, nothing performed (`reason`:
 *   an `AskAgainReason`, e.g. `check_failed`; after `question_changed` and
 *   `stale_target` the old ticket is spent and a new one follows).
 * - `refused`: nothing was asked or done (`reason`: a `RefusalReason`, e.g.
 *   `capability_missing`, `ticket_expired`, `nonce_used`, `not_asked`).
 * - `declined`: the person declined (or accepted without consent, or denied
 *   on the approval page); the nonce is used up.
 * - `cancelled`: the person dismissed the question; nothing is used up.
 * - `accepted`: a valid, consenting answer; written before the claim and the
 *   mutation, so a sink that cannot write stops the mutation.
 * - `completed`: the mutation was performed; `isError` tells the tool's verdict.
 * - `replayed`: an identical re-issue of a completed round got its recorded outcome.
 * - `failed`: an error ended the round (`reason`: the error's name); nothing was performed,
 *   except with `reason` `outcome_unknown`: the replay store lost its connection
 *   waiting for `COMMIT`'s answer, so the operation (and a `completed` record
 *   written in its transaction) may have taken effect; a re-send of the same
 *   confirmation then records `replayed` if it did, `completed` if not.
 */
export type GateOutcome =
  | 'asked'
  | 'asked_again'
  | 'refused'
  | 'declined'
  | 'cancelled'
  | 'accepted'
  | 'completed'
  | 'replayed'
  | 'failed';

/**
 * One audit record. Each round writes one or more (`asked_again` then
 * `asked` when the target went stale; `accepted` then `completed`), and the
 * rounds of one operation share `nonce`. Never contains the sealed ticket
 * (`requestState`), a ticket key or anything else secret: the answer is
 * form-mode content, which MCP forbids from carrying secrets
 * (`client/elicitation`).
 */
export interface GateAuditEvent {
  /** How the round ended (see {@link GateOutcome}). */
  outcome: GateOutcome;
  /** Why, for `asked_again`, `refused` and `failed`: a {@link GateReason}, or on `failed` the error's `name`. */
  reason?: GateReason | (string & {});
  /** Principal id of the authenticated caller. */
  principal: string;
  /**
   * `io.modelcontextprotocol/clientInfo` of this request's `_meta`
   * (`name`, `version`, `title`): self-reported by the client, recorded, never trusted;
   * each well-formed and cut to `MAX_RECORDED_TEXT` (256) code units, with `…`.
   */
  client?: { name: string; version: string; title?: string };
  /** The JSON-RPC method, e.g. `tools/call`. */
  method: string;
  /** The tool or prompt name, or the resource URI (cut as `client` is). */
  name: string;
  /** `method:name`, e.g. `tools/call:notes_delete` (the ticket's `op` claim; cut as `client` is). */
  operation: string;
  /**
   * The arguments in RFC 8785 canonical form (numbers normalized, keys
   * sorted): `digestJson(arguments)` of `@mrtr/digest` equals `argumentsDigest`.
   */
  arguments?: Record<string, unknown>;
  /**
   * Length of the canonical arguments in UTF-16 code units, given instead of
   * `arguments` when they are longer than 16 KiB: a record never grows with
   * what a caller chose to send.
   */
  argumentsLength?: number;
  /** `sha256:` digest of the canonical arguments, as bound into the ticket. */
  argumentsDigest: string;
  /** The ticket nonce that ties the rounds of one operation together, once a ticket was minted or opened. */
  nonce?: string;
  /** The ticket phase (default `confirm`). */
  phase: string;
  /**
   * The question text exactly as sent (`elicitation/create` `message`), on
   * `asked` and `asked_again`; on later records of a round that read an
   * answer, the question as first sent (a pure function of the sealed data).
   */
  question?: string;
  /** The form sent with the question (`requestedSchema`), on `asked` and `asked_again`. */
  requestedSchema?: RequestedSchema;
  /** The `inputRequests` key of the question. */
  key: string;
  /**
   * The action and content answered, once an answer was read: strings made
   * well-formed (a lone surrogate recorded as U+FFFD); `contentLength` (of its
   * JSON, in UTF-16 code units) instead of `content` when it is over 8 KiB.
   */
  answer?: { action: string; content?: Record<string, unknown>; contentLength?: number };
  /**
   * How the person was asked or confirmed: `form` (an `elicitation/create`
   * form), `url` (this server's approval page) or `presence` (the page, with
   * a passkey). Not named `level`: JSON-lines loggers use that name.
   */
  confirmation?: 'form' | 'url' | 'presence';
  /**
   * The signed approval receipt (a compact JWS of `@mrtr/receipt`), on
   * `completed`, when the gate issues receipts: what an executor verified.
   */
  receipt?: string;
  /** `isError` of the tool result, on `completed`, `replayed`, `declined`, `cancelled` and `refused` / `not_asked`. */
  isError?: boolean;
  /** The JSON-RPC id of the request of this round (a string id cut as `client` is). */
  requestId?: string | number;
  /** The round's span (W3C trace id and span id, lower-case hex), when tracing is on. */
  trace?: { traceId: string; spanId: string };
  /** When the gate began the round, milliseconds since the epoch. */
  receivedAt: number;
  /** When the record was written, milliseconds since the epoch. */
  at: number;
}

/** A sink as a function: gets every record after the fact of it, outside any transaction. */
export type AuditRecorder = (event: GateAuditEvent) => void | Promise<void>;

/**
 * A sink as an object. With `transactional: true`, the `completed` and
 * `declined` records are handed the replay store's transaction (`tx`, e.g.
 * the `@mrtr/replay-postgres` transaction the claim and the mutation run in)
 * and must be written in it: they then commit or roll back with the claim,
 * and a failed write rolls both back. Every other record, and every record
 * when the store hands no transaction, comes with `tx` undefined.
 */
export interface AuditWriter<Tx = unknown> {
  /** Write one record; throw (or reject) when it could not be written. */
  write(event: GateAuditEvent, tx?: Tx): void | Promise<void>;
  /** Write `completed` / `declined` inside the replay store's transaction when there is one. */
  readonly transactional?: boolean;
}

/**
 * Receives the audit records of `ConfirmationGate`: an {@link AuditRecorder}
 * function or an {@link AuditWriter}. A sink that throws before the mutation
 * makes the round fail closed: nothing is claimed or mutated.
 */
export type AuditSink<Tx = unknown> = AuditRecorder | AuditWriter<Tx>;

/**
 * Thrown by `ConfirmationGate.run` (as the `cause` of its JSON-RPC error)
 * when an audit sink failed; `cause` is the sink's own error.
 */
const AUDITSINKERROR_BRAND = Symbol.for('@mrtr/gate/AuditSinkError');

/** Recognised by brand: `instanceof` works across copies of this package in one process. */
export class AuditSinkError extends Error {
  override readonly name = 'AuditSinkError';
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    Object.defineProperty(this, AUDITSINKERROR_BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && AUDITSINKERROR_BRAND in value;
  }
}

/** Hands records to sinks in order; every sink is tried, and the first failure is thrown. */
export class AuditFanout<Tx> {
  readonly #sinks: readonly AuditSink<Tx>[];

  constructor(sinks: AuditSink<Tx> | readonly AuditSink<Tx>[] | undefined) {
    this.#sinks =
      sinks === undefined ? [] : Array.isArray(sinks) ? sinks : [sinks as AuditSink<Tx>];
  }

  /** Whether any sink writes inside the store's transaction. */
  get transactional(): boolean {
    return this.#sinks.some(isTransactional);
  }

  /** Whether there is no sink at all: then no record needs to be built. */
  get empty(): boolean {
    return this.#sinks.length === 0;
  }

  /**
   * Write `event` to the sinks `which` selects: `all`; `in_tx` (the
   * transactional sinks, with `tx`); `outside_tx` (the others).
   * @throws {AuditSinkError} after every selected sink was tried, if one failed.
   */
  async write(
    event: GateAuditEvent,
    which: 'all' | 'in_tx' | 'outside_tx',
    tx?: Tx,
  ): Promise<void> {
    let failure: unknown;
    let failed = false;
    for (const sink of this.#sinks) {
      const inTx = isTransactional(sink);
      if ((which === 'in_tx' && !inTx) || (which === 'outside_tx' && inTx)) continue;
      try {
        if (typeof sink === 'function') await sink(event);
        else await sink.write(event, which === 'in_tx' ? tx : undefined);
      } catch (error) {
        if (!failed) failure = error;
        failed = true;
      }
    }
    if (failed)
      throw new AuditSinkError(
        `audit sink failed to write the ${event.outcome} record: ${describe(failure)}`,
        { cause: failure },
      );
  }
}

function isTransactional<Tx>(sink: AuditSink<Tx>): boolean {
  return typeof sink !== 'function' && sink.transactional === true;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
