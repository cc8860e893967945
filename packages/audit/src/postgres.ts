import { canonicalize } from '@mrtr/digest';
import type { AuditWriter, GateAuditEvent, GateOutcome } from '@mrtr/gate';
import { type SqlDriver, type SqlQueryable, sqlTableName } from '@mrtr/replay-postgres';

/** Default table of the audit records. */
export const DEFAULT_AUDIT_TABLE = 'mrtr_audit';

/**
 * The statements that create the audit table and its indexes if missing
 * (the migration `migrations/001_mrtr_audit.sql` of this package, for the
 * default name). Each row is one `GateAuditEvent`; `arguments` holds the RFC
 * 8785 canonical JSON text, so `arguments_digest` can be recomputed from the
 * row alone (see the README). JSON columns are `json`, not `jsonb`: they keep
 * the JSON text as written, and accept the `\u0000` escape `jsonb` refuses.
 * @param table table name, optionally `schema.table` (default `mrtr_audit`).
 * @throws {TypeError} for a table name that is not a plain identifier.
 */
export function auditTableStatements(table: string = DEFAULT_AUDIT_TABLE): string[] {
  const t = sqlTableName(table);
  return [
    `CREATE TABLE IF NOT EXISTS ${t.sql} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  nonce text,
  outcome text NOT NULL,
  reason text,
  principal text NOT NULL,
  client json,
  method text NOT NULL,
  name text NOT NULL,
  arguments text NOT NULL,
  arguments_digest text NOT NULL,
  phase text NOT NULL,
  input_key text NOT NULL,
  question text,
  requested_schema json,
  answer_action text,
  answer_content json,
  is_error boolean,
  request_id json,
  trace_id text,
  span_id text,
  received_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare}_nonce" ON ${t.sql} (nonce)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare}_recorded_at" ON ${t.sql} (recorded_at)`,
  ];
}

/**
 * Create the audit table if it is missing (idempotent; concurrent runs are
 * serialized with an advisory lock). See {@link auditTableStatements}.
 * @param driver where to create it (`pgPoolDriver`, `pgliteDriver` of `@mrtr/replay-postgres`).
 * @param options.table table name, optionally `schema.table` (default `mrtr_audit`); the schema must exist.
 * @throws {TypeError} for a bad table name; the driver's error when a statement fails.
 */
export async function migrateAuditTable(
  driver: SqlDriver,
  options: { table?: string } = {},
): Promise<void> {
  const table = options.table ?? DEFAULT_AUDIT_TABLE;
  const statements = auditTableStatements(table);
  await driver.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`mrtr-audit-migrate:${table}`]);
    for (const statement of statements) await tx.query(statement);
  });
}

const iso = (ms: number) => new Date(ms).toISOString();
const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/**
 * An audit sink that inserts each `GateAuditEvent` of `@mrtr/gate` as one row
 * (table from {@link migrateAuditTable}). Transactional: the gate hands it
 * the transaction of `PostgresReplayStore` for the `completed` and `declined`
 * records, so the record, the nonce claim and the mutation commit together,
 * and a record that cannot be inserted rolls back the claim and the mutation.
 * Every other record (and every record with another replay store) is inserted
 * on `driver` on its own, before the gate goes on.
 *
 * With PGlite (one connection), `driver` must be the same PGlite the replay
 * store uses, which never runs a statement outside the transaction it waits for.
 *
 * @example
 * ```ts
 * const driver = pgPoolDriver(pool);
 * await migrateReplayTable(driver);
 * await migrateAuditTable(driver);
 * const gate = new ConfirmationGate({
 *   sealer,
 *   store: new PostgresReplayStore(driver),
 *   audit: new PostgresAuditSink(driver),
 * });
 * ```
 */
export class PostgresAuditSink implements AuditWriter<SqlQueryable | undefined> {
  readonly transactional = true;
  readonly #driver: SqlQueryable;
  readonly #insert: string;

  /**
   * @param driver runs the inserts made outside a transaction.
   * @param options.table table name, optionally `schema.table` (default `mrtr_audit`).
   * @throws {TypeError} for a bad table name.
   */
  constructor(driver: SqlQueryable, options: { table?: string } = {}) {
    const t = sqlTableName(options.table ?? DEFAULT_AUDIT_TABLE).sql;
    this.#driver = driver;
    this.#insert = `INSERT INTO ${t} (nonce, outcome, reason, principal, client, method, name,
      arguments, arguments_digest, phase, input_key, question, requested_schema, answer_action,
      answer_content, is_error, request_id, trace_id, span_id, received_at, recorded_at)
      VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8, $9, $10, $11, $12, $13::json, $14,
      $15::json, $16, $17::json, $18, $19, $20::timestamptz, $21::timestamptz)`;
  }

  /**
   * Insert `event`, in `tx` when given.
   * @throws {CanonicalizeError} (of `@mrtr/digest`) for arguments that are not JSON data; the driver's error when the insert fails.
   */
  async write(event: GateAuditEvent, tx?: SqlQueryable): Promise<void> {
    await (tx ?? this.#driver).query(this.#insert, [
      event.nonce ?? null,
      event.outcome,
      event.reason ?? null,
      event.principal,
      json(event.client),
      event.method,
      event.name,
      canonicalize(event.arguments),
      event.argumentsDigest,
      event.phase,
      event.key,
      event.question ?? null,
      json(event.requestedSchema),
      event.answer?.action ?? null,
      json(event.answer?.content),
      event.isError ?? null,
      json(event.requestId),
      event.trace?.traceId ?? null,
      event.trace?.spanId ?? null,
      iso(event.receivedAt),
      iso(event.at),
    ]);
  }
}

interface AuditRow {
  nonce: string | null;
  outcome: string;
  reason: string | null;
  principal: string;
  client: unknown;
  method: string;
  name: string;
  arguments: string;
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
      arguments: JSON.parse(r.arguments) as Record<string, unknown>,
      argumentsDigest: r.arguments_digest,
      phase: r.phase,
      key: r.input_key,
      receivedAt: ms(r.received_at),
      at: ms(r.recorded_at),
    };
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
    if (r.trace_id !== null && r.span_id !== null)
      event.trace = { traceId: r.trace_id, spanId: r.span_id };
    return event;
  });
}
