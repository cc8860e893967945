/**
 * @mrtr/audit: where the audit records of `@mrtr/gate` go. A JSON-lines
 * trail on stdout or a file (through pino), and a PostgreSQL table whose
 * `completed` and `declined` rows are written in the same transaction as the
 * replay claim and the mutation of `@mrtr/replay-postgres`. Both fail closed:
 * a record that cannot be written stops the round before any mutation.
 * Neither blocks the event loop: a destination that takes nothing fails the
 * rounds that write to it (after `timeoutMs`), never the server. The table
 * keeps rows 30 days by default (`sweepAuditTable`, `PostgresAuditSink#sweep`).
 *
 * @example
 * ```ts
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { JsonLinesAuditSink, migrateAuditTable, PostgresAuditSink } from '@mrtr/audit';
 * import { migrateReplayTable, PostgresReplayStore, pgPoolDriver } from '@mrtr/replay-postgres';
 * import { TicketSealer } from '@mrtr/ticket';
 * import pg from 'pg';
 *
 * const driver = pgPoolDriver(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * await migrateReplayTable(driver);
 * await migrateAuditTable(driver); // table mrtr_audit
 * const gate = new ConfirmationGate({
 *   sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET! }] }),
 *   store: new PostgresReplayStore(driver),
 *   audit: [
 *     new JsonLinesAuditSink({ destination: process.env.MRTR_AUDIT_FILE ?? 'stdout' }),
 *     new PostgresAuditSink(driver),
 *   ],
 * });
 * ```
 * @packageDocumentation
 */
export {
  AUDIT_LINE_MESSAGE,
  AuditDestinationBusyError,
  JsonLinesAuditSink,
  type JsonLinesAuditSinkOptions,
  type LineDestination,
} from './json-lines.js';
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
  sweepAuditTable,
} from './retention.js';
