import type { Json } from '@mrtr/replay';
import type { Span } from '@opentelemetry/api';
import type { AuditFanout, GateAuditEvent } from './audit.js';
import type { GateReason } from './reasons.js';
import { storable } from './recorded-text.js';
import { SpanAttribute } from './trace.js';

/**
 * Largest canonical arguments a record carries in full, in UTF-16 code
 * units (about bytes for ASCII). Larger ones are recorded by digest and
 * size only: a record must not grow with what a caller chose to send.
 */
export const MAX_RECORDED_ARGUMENTS = 16 * 1024;
/** Largest answer content a record carries in full, in UTF-16 code units of its JSON. */
export const MAX_RECORDED_ANSWER = 8 * 1024;

/** Per-record fields; the rest of a record is the round's. */
export type RecordFields = Pick<GateAuditEvent, 'outcome'> &
  Partial<
    Pick<
      GateAuditEvent,
      'nonce' | 'question' | 'requestedSchema' | 'answer' | 'isError' | 'confirmation' | 'receipt'
    > & {
      reason: GateReason | (string & {});
    }
  >;

/** The fields every record of a round shares. */
export type RoundBase = Omit<GateAuditEvent, keyof RecordFields | 'at' | 'trace' | 'reason'>;

/**
 * What one round knows while it runs, and how it writes its audit records
 * and span events. One per `ConfirmationGate.run`.
 */
export class Round {
  /** The round's base fields, once the arguments are digested: records can be written from then on. */
  base: RoundBase | undefined;
  /** `arguments` as RFC 8785 text, parsed into the record on first use. */
  canonicalArguments = '';
  #argumentsParsed = false;
  /** A terminal record (`refused`, `failed`) was written: no `failed` record is added on the way out. */
  closed = false;
  /** The mutation committed: an error now must not say that nothing changed. */
  performed = false;
  /** The store returned the outcome an earlier request recorded: an error must not deny it. */
  replayed = false;
  /** What was recorded (or replayed) under the nonce is a decline, not the operation. */
  declined = false;
  /** This round claims the nonce for a decline: whatever the store kept, nothing can have run. */
  declining = false;
  /** The nonce of the round, once known. */
  nonce: string | undefined;
  /** The answer read, once known (recorded with well-formed text and bounded). */
  answer: GateAuditEvent['answer'];

  /**
   * No sink and a span that records nothing: a record would go nowhere, so
   * callers on the common path need not build its fields (nor await
   * {@link emit}). A record that closes the round (`refused`, `failed`) is
   * still emitted, for {@link closed}. Read once: neither changes while the round runs.
   */
  readonly silent: boolean;

  constructor(
    readonly span: Span,
    readonly audit: AuditFanout<unknown>,
    readonly now: () => number,
  ) {
    this.silent = audit.empty && !span.isRecording();
  }

  /** Set the nonce of the round (records, span attribute `mrtr.ticket.nonce`). */
  setNonce(nonce: string): void {
    this.nonce = nonce;
    this.span.setAttribute(SpanAttribute.nonce, nonce);
  }

  /** Remember the answer read, as a record will show it (nothing to remember when {@link silent}). */
  setAnswer(action: string, content: unknown): void {
    if (this.silent) return;
    this.answer = recordedAnswer(action, content);
    this.span.setAttribute(SpanAttribute.action, action);
  }

  /**
   * Build, annotate the span with, and write a record to every sink. With no
   * sink and a span that records nothing, no record is built.
   * @throws {AuditSinkError} when a sink failed.
   */
  async emit(fields: RecordFields): Promise<void> {
    if (fields.outcome === 'refused' || fields.outcome === 'failed') this.closed = true;
    if (this.base === undefined || this.silent) return;
    const record = this.record(fields);
    this.annotate(record);
    await this.audit.write(record, 'all');
  }

  /**
   * Write `fields` to the transactional sinks inside the store's transaction
   * `tx`, when the store hands one; returns the record so the other sinks get
   * the same one after the commit.
   */
  async inTransaction(tx: unknown, fields: RecordFields): Promise<GateAuditEvent | undefined> {
    if (tx === undefined || tx === null || !this.audit.transactional) return undefined;
    const record = this.record(fields);
    await this.audit.write(record, 'in_tx', tx);
    return record;
  }

  /** Write a record already written in the transaction to the other sinks, after the commit. */
  async afterCommit(record: GateAuditEvent): Promise<void> {
    this.annotate(record);
    await this.audit.write(record, 'outside_tx');
  }

  /** A complete record of this round. */
  record(fields: RecordFields): GateAuditEvent {
    const base = this.base as RoundBase;
    if (!this.#argumentsParsed) {
      if (this.canonicalArguments.length <= MAX_RECORDED_ARGUMENTS) {
        base.arguments = JSON.parse(this.canonicalArguments) as Record<string, unknown>;
      } else {
        base.argumentsLength = this.canonicalArguments.length;
      }
      this.#argumentsParsed = true;
    }
    // Outcome and nonce first: what a reader of the trail scans for.
    const { outcome, ...rest } = fields;
    const head = fields.nonce === undefined ? {} : { nonce: fields.nonce };
    const record = { outcome, ...head, ...base, ...rest, at: this.now() } as GateAuditEvent;
    if (this.span.isRecording()) {
      const { traceId, spanId } = this.span.spanContext();
      record.trace = { traceId, spanId };
    }
    return record;
  }

  /** What a `failed` record can say about the round so far. */
  known(): Partial<RecordFields> {
    // Set one by one, not spread from `{ nonce }`: V8 (Node 20) promotes a leading spread's copy
    // that takes more properties, and all it reaches (docs/benchmarks.md, "Garbage").
    const known: Partial<RecordFields> = {};
    if (this.nonce !== undefined) known.nonce = this.nonce;
    if (this.answer !== undefined) known.answer = this.answer;
    return known;
  }

  annotate(record: GateAuditEvent): void {
    if (!this.span.isRecording()) return;
    const attributes: Record<string, string> = { [SpanAttribute.outcome]: record.outcome };
    if (record.reason !== undefined) attributes[SpanAttribute.reason] = record.reason;
    this.span.setAttributes(attributes);
    this.span.addEvent(`mrtr.gate.${record.outcome}`, attributes);
  }
}

/**
 * The answer as a record holds it: the action, and the content with every
 * string made storable (a lone surrogate or U+0000 becomes U+FFFD, so a sink
 * that stores JSON, such as a PostgreSQL `jsonb` column, can always write it) and
 * dropped when its JSON is over {@link MAX_RECORDED_ANSWER}.
 */
function recordedAnswer(action: string, content: unknown): GateAuditEvent['answer'] {
  const answer: NonNullable<GateAuditEvent['answer']> = { action: storable(action) };
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return answer;
  const clean = wellFormed(content, 0) as Record<string, unknown>;
  const text = JSON.stringify(clean);
  if (text.length <= MAX_RECORDED_ANSWER) answer.content = clean;
  else answer.contentLength = text.length;
  return answer;
}

/** A copy of JSON data with well-formed strings, at most 32 levels deep (deeper values are dropped). */
function wellFormed(value: unknown, depth: number): Json | undefined {
  if (typeof value === 'string') return storable(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean' || value === null) return value;
  if (depth >= 32 || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) return value.map((v) => wellFormed(v, depth + 1) ?? null);
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(value)) {
    const clean = wellFormed(v, depth + 1);
    // Defined, not assigned: assigning a member named `__proto__` sets the prototype, and the
    // member would be missing from the record (a refused answer recorded as a valid-looking one).
    if (clean !== undefined)
      Object.defineProperty(out, storable(k), {
        value: clean,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}
