/**
 * @mrtr/audit-postgres: the audit records of `@mrtr/gate` in a PostgreSQL
 * table whose `completed` and `declined` rows are written in the same
 * transaction as the replay claim and the mutation of
 * `@mrtr/replay-postgres`, so a record that cannot be written rolls both
 * back (fail closed). Runs on an `SqlDriver` of `@mrtr/sql` (node-postgres or
 * PGlite). The table keeps rows 30 days by default (`sweepAuditTable`,
 * `PostgresAuditSink#sweep`).
 *
 * @example
 * ```ts
 * import { JsonLinesAuditSink } from '@mrtr/audit';
 * import { migrateAuditTable, PostgresAuditSink } from '@mrtr/audit-postgres';
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
 * import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
 * import { TicketSealer } from '@mrtr/ticket';
 * import pg from 'pg';
 *
 * const driver = pgPoolDriver(new pg.Pool({ connectionString: process.env.DATABASE_URL, ...pgPoolTimeouts() }));
 * await migrateReplayTable(driver);
 * await migrateAuditTable(driver); // table mrtr_audit
 * const gate = new ConfirmationGate({
 *   sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET ?? '' }] }),
 *   store: new PostgresReplayStore(driver),
 *   audit: [
 *     new JsonLinesAuditSink({ destination: process.env.MRTR_AUDIT_FILE ?? 'stdout' }),
 *     new PostgresAuditSink(driver),
 *   ],
 * });
 * ```
 * @module @mrtr/audit-postgres
 * @packageDocumentation
 */
export {
  auditTableStatements,
  DEFAULT_AUDIT_TABLE,
  migrateAuditTable,
  PostgresAuditSink,
} from './postgres.js';
export { readAuditRecords } from './read.js';
export {
  type AuditRetention,
  DEFAULT_AUDIT_RETENTION_MS,
  MAX_AUDIT_RETENTION_MS,
  sweepAuditTable,
} from './retention.js';
