import { canonicalize } from '@mrtr/digest';
import type { AuditWriter, GateAuditEvent } from '@mrtr/gate';
import { type SqlDriver, type SqlQueryable, sqlTableName } from '@mrtr/sql';
import { DEFAULT_AUDIT_RETENTION_MS, retentionMs, sweepAuditTable } from './retention.js';

/** Default table of the audit records. */
export const DEFAULT_AUDIT_TABLE = 'mrtr_audit';

/**
 * The statements that create the audit table and its indexes if missing,
 * then add the columns of later versions to a table that lacks them (the
 * migrations `migrations/001_mrtr_audit.sql` and `002_receipt.sql` of this
 * package, for the default name). `confirmation` is how the person confirmed
 * (`form`, `url`, `presence`); `receipt` the signed approval receipt of a
 * `completed` row (a compact JWS of `@mrtr/receipt`), when the gate issues them. Each row is one `GateAuditEvent`; `arguments` holds the RFC
 * 8785 canonical JSON text, so `arguments_digest` can be recomputed from the
 * row alone (see the README), or is `NULL` with `arguments_length` (UTF-16
 * code units) when the gate left arguments over its `MAX_RECORDED_ARGUMENTS`
 * (16 KiB) out of the record (migration `003_arguments_length.sql`). JSON columns are `json`, not `jsonb`: they keep
 * the JSON text as written, and accept the `\u0000` escape `jsonb` refuses.
 * A `text` column cannot hold U+0000 at all: {@link PostgresAuditSink} writes
 * it there as U+FFFD.
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
    `CREATE INDEX IF NOT EXISTS ${t.index('nonce')} ON ${t.sql} (nonce)`,
    `CREATE INDEX IF NOT EXISTS ${t.index('recorded_at')} ON ${t.sql} (recorded_at)`,
    // migrations/002: added later, so ALTER (not CREATE) reaches tables made by 001.
    `ALTER TABLE ${t.sql} ADD COLUMN IF NOT EXISTS confirmation text`,
    `ALTER TABLE ${t.sql} ADD COLUMN IF NOT EXISTS receipt text`,
    // migrations/003: arguments over the gate's MAX_RECORDED_ARGUMENTS are recorded by length.
    `ALTER TABLE ${t.sql} ALTER COLUMN arguments DROP NOT NULL`,
    `ALTER TABLE ${t.sql} ADD COLUMN IF NOT EXISTS arguments_length integer`,
  ];
}

/**
 * Create the audit table if it is missing (idempotent; concurrent runs are
 * serialized with an advisory lock). See {@link auditTableStatements}.
 * @param driver where to create it (`pgPoolDriver`, `pgliteDriver` of `@mrtr/sql`).
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
 * Text for a `text` column, which cannot hold U+0000: each one becomes U+FFFD,
 * as a lone surrogate already has in the gate's records. Refusing the row
 * instead would fail every round whose question quotes such text (a name,
 * what the person typed) and tell the client to retry what can never succeed.
 */
const text = (value: string | undefined) =>
  value === undefined
    ? null
    : value.includes('\u0000')
      ? value.replaceAll('\u0000', '\ufffd')
      : value;

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
 * Rows are kept `retentionMs` (default 30 days): call {@link sweep} from a
 * timer to delete older ones (see `sweepAuditTable`).
 *
 * @example
 * ```ts
 * import { migrateAuditTable, PostgresAuditSink } from '@mrtr/audit-postgres';
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
 * import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
 * import { TicketSealer } from '@mrtr/ticket';
 * import pg from 'pg';
 *
 * const driver = pgPoolDriver(new pg.Pool({ connectionString: process.env.DATABASE_URL, ...pgPoolTimeouts() }));
 * const sealer = new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET ?? '' }] });
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
  readonly #retention: { table: string; olderThanMs: number; maxRows?: number };

  /**
   * @param driver runs the inserts made outside a transaction, and the sweeps.
   * @param options.table table name, optionally `schema.table` (default `mrtr_audit`).
   * @param options.retentionMs how long {@link sweep} keeps a row, in milliseconds (default 30 days, at most `MAX_AUDIT_RETENTION_MS`, 1,000 years).
   * @param options.maxRows at most this many rows kept by {@link sweep}, the newest (default: no cap).
   * @throws {TypeError} for a bad table name; {RangeError} for a `retentionMs` or `maxRows` that is not positive, or a `retentionMs` over 1,000 years.
   */
  constructor(
    driver: SqlQueryable,
    options: { table?: string; retentionMs?: number; maxRows?: number } = {},
  ) {
    const table = options.table ?? DEFAULT_AUDIT_TABLE;
    const t = sqlTableName(table).sql;
    const olderThanMs = retentionMs(
      'retentionMs',
      options.retentionMs ?? DEFAULT_AUDIT_RETENTION_MS,
    );
    if (
      options.maxRows !== undefined &&
      !(Number.isSafeInteger(options.maxRows) && options.maxRows > 0)
    )
      throw new RangeError(`maxRows must be a positive integer, got ${options.maxRows}`);
    this.#retention = {
      table,
      olderThanMs,
      ...(options.maxRows !== undefined ? { maxRows: options.maxRows } : {}),
    };
    this.#driver = driver;
    this.#insert = `INSERT INTO ${t} (nonce, outcome, reason, principal, client, method, name,
      arguments, arguments_digest, phase, input_key, question, requested_schema, answer_action,
      answer_content, is_error, request_id, trace_id, span_id, received_at, recorded_at,
      confirmation, receipt, arguments_length)
      VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8, $9, $10, $11, $12, $13::json, $14,
      $15::json, $16, $17::json, $18, $19, $20::timestamptz, $21::timestamptz, $22, $23, $24)`;
  }

  /**
   * Insert `event`, in `tx` when given. U+0000 in a `text` column (the
   * question, the principal, …) is written as U+FFFD; JSON columns keep it.
   * @throws {CanonicalizeError} (of `@mrtr/digest`) for arguments that are not JSON data; the driver's error when the insert fails.
   */
  async write(event: GateAuditEvent, tx?: SqlQueryable): Promise<void> {
    await (tx ?? this.#driver).query(this.#insert, [
      text(event.nonce),
      text(event.outcome),
      text(event.reason),
      text(event.principal),
      json(event.client),
      text(event.method),
      text(event.name),
      // RFC 8785 text escapes U+0000 (`\u0000`), so the canonical arguments need no mapping.
      // Arguments the gate left out of the record (over 16 KiB) are NULL, with their length.
      event.arguments === undefined ? null : canonicalize(event.arguments),
      text(event.argumentsDigest),
      text(event.phase),
      text(event.key),
      text(event.question),
      json(event.requestedSchema),
      text(event.answer?.action),
      json(event.answer?.content),
      event.isError ?? null,
      json(event.requestId),
      text(event.trace?.traceId),
      text(event.trace?.spanId),
      iso(event.receivedAt),
      iso(event.at),
      text(event.confirmation),
      text(event.receipt),
      event.argumentsLength ?? null,
    ]);
  }

  /**
   * Delete the rows past this sink's retention (`sweepAuditTable` with its
   * table, `retentionMs` and `maxRows`).
   * @param now milliseconds since the epoch (default `Date.now()`).
   * @returns how many rows were deleted.
   * @throws the driver's error when a statement fails.
   */
  sweep(now: number = Date.now()): Promise<number> {
    return sweepAuditTable(this.#driver, { ...this.#retention, now });
  }
}
