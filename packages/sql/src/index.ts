/**
 * @mrtr/sql: the one small driver interface the PostgreSQL pieces of
 * mrtr-gate run on (`@mrtr/replay-postgres`, `@mrtr/audit-postgres`,
 * `@mrtr/approval-page`), so they can share one database and one
 * transaction: {@link SqlDriver} (`query` and `transaction`), its adapters
 * for a node-postgres `pg.Pool` ({@link pgPoolDriver}: a lost connection
 * never ends the process) and PGlite ({@link pgliteDriver}), and
 * {@link sqlTableName} for table names taken from configuration.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { pgPoolDriver, pgPoolTimeouts, sqlTableName } from '@mrtr/sql';
 *
 * // The server's own bounds, matching the driver's deadline (see pgPoolTimeouts).
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, ...pgPoolTimeouts() });
 * // Before the pool's first use: a lost connection then never ends the process.
 * const driver = pgPoolDriver(pool, { onConnectionError: (e) => console.warn(e.message) });
 * const table = sqlTableName('ops.notes').sql; // "ops"."notes"
 * await driver.transaction(async (tx) => {
 *   await tx.query(`DELETE FROM ${table} WHERE id = $1`, ['note-1']);
 * });
 * ```
 * @module @mrtr/sql
 * @packageDocumentation
 */
export {
  ConnectionLostError,
  causeChain,
  isConnectionError,
  isOutcomeUnknown,
  NoConnectionError,
} from './connection.js';
export {
  DEFAULT_PG_TIMEOUT_MS,
  type PgliteLike,
  type PgPoolClientLike,
  type PgPoolDriverOptions,
  type PgPoolLike,
  type PgPoolTimeouts,
  pgliteDriver,
  pgPoolDriver,
  pgPoolTimeouts,
  type SqlDriver,
  type SqlQueryable,
  type SqlResult,
  TransactionEndedError,
} from './driver.js';
export { type SqlTableName, sqlTableName } from './table-name.js';
