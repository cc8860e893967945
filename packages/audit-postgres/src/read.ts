import type { GateAuditEvent, GateOutcome } from '@mrtr/gate';
import { type SqlQueryable, sqlTableName } from '@mrtr/sql';
import { DEFAULT_AUDIT_TABLE } from './postgres.js';

interface AuditRow {
  nonce: string | null;
  outcome: string;
  reason: string | null;
  principal: string;
  client: unknown;
  method: string;
  name: string;
  arguments: string | null;
  arguments_digest: string;
  phase: string;
  input_key: string;
  question: string | null;
  requested_schema: unknown;
  answer_action: string | null;
  answer_content: unknown;
  is_error: boolean | null;
  request_id: unknown;
  trace_id: string | null;
  span_id: string | null;
  received_at: string | Date;
  recorded_at: string | Date;
  confirmation: string | null;
  receipt: string | null;
  arguments_length: number | null;
}

const ms = (value: string | Date) => new Date(value).getTime();

/**
 * Read audit rows back as `GateAuditEvent`s, oldest first.
 * @param q where to read (a driver or a transaction).
 * @param options.nonce only the records of one operation.
 * @param options.table table name (default `mrtr_audit`).
 * @returns the records in insertion order (`id`).
 * @throws {TypeError} for a bad table name; the driver's error when the query fails.
 */
export async function readAuditRecords(
  q: SqlQueryable,
  options: { nonce?: string; table?: string } = {},
): Promise<GateAuditEvent[]> {
  const t = sqlTableName(options.table ?? DEFAULT_AUDIT_TABLE).sql;
  const where = options.nonce === undefined ? '' : ' WHERE nonce = $1';
  const params = options.nonce === undefined ? [] : [options.nonce];
  const { rows } = await q.query<AuditRow>(`SELECT * FROM ${t}${where} ORDER BY id`, params);
  return rows.map((r) => {
    const event: GateAuditEvent = {
      outcome: r.outcome as GateOutcome,
      principal: r.principal,
      method: r.method,
      name: r.name,
      operation: `${r.method}:${r.name}`,
      argumentsDigest: r.arguments_digest,
      phase: r.phase,
      key: r.input_key,
      receivedAt: ms(r.received_at),
      at: ms(r.recorded_at),
    };
    if (r.arguments !== null) event.arguments = JSON.parse(r.arguments) as Record<string, unknown>;
    if (r.arguments_length !== null) event.argumentsLength = r.arguments_length;
    if (r.reason !== null) event.reason = r.reason;
    if (r.client !== null) event.client = r.client as GateAuditEvent['client'];
    if (r.nonce !== null) event.nonce = r.nonce;
    if (r.question !== null) event.question = r.question;
    if (r.requested_schema !== null)
      event.requestedSchema = r.requested_schema as GateAuditEvent['requestedSchema'];
    if (r.answer_action !== null) {
      event.answer = { action: r.answer_action };
      if (r.answer_content !== null)
        event.answer.content = r.answer_content as Record<string, unknown>;
    }
    if (r.is_error !== null) event.isError = r.is_error;
    if (r.request_id !== null) event.requestId = r.request_id as string | number;
    if (r.confirmation !== null)
      event.confirmation = r.confirmation as NonNullable<GateAuditEvent['confirmation']>;
    if (r.receipt !== null) event.receipt = r.receipt;
    if (r.trace_id !== null && r.span_id !== null)
      event.trace = { traceId: r.trace_id, spanId: r.span_id };
    return event;
  });
}
