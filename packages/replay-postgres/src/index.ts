/**
 * @mrtr/replay-postgres: the `ReplayStore` contract of `@mrtr/replay` on
 * PostgreSQL, with the claim inside the transaction that performs the
 * mutation, so the claim, the mutation and the recorded outcome commit or
 * roll back together. Runs on a node-postgres `pg.Pool` or on PGlite through
 * the driver interface of `@mrtr/sql`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
 * import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
 *
 * declare const nonce: string, requestDigest: string, expiresAt: number; // from the ticket
 * declare const id: string; // the note to delete
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, ...pgPoolTimeouts() });
 * // Before the pool's first use: a lost connection then never ends the process.
 * const driver = pgPoolDriver(pool, { onConnectionError: (e) => console.warn(e.message) });
 * // or pgliteDriver(new PGlite())
 * await migrateReplayTable(driver); // creates mrtr_replay if missing
 * const store = new PostgresReplayStore(driver);
 *
 * const r = await store.once({ nonce, requestDigest, expiresAt }, async (tx) => {
 *   await tx.query('DELETE FROM notes WHERE id = $1', [id]); // same transaction as the claim
 *   return { deleted: id };
 * });
 * // r.status: 'performed' | 'replayed' | 'refused'
 *
 * // Or claim inside a transaction you already hold:
 * await driver.transaction((tx) => store.withClaim(tx, { nonce, requestDigest, expiresAt }, async () => ({ ok: true })));
 *
 * setInterval(() => store.sweep().catch(console.error), 60_000).unref(); // delete expired rows
 * ```
 * @module @mrtr/replay-postgres
 * @packageDocumentation
 */
export {
  DEFAULT_REPLAY_TABLE,
  migrateReplayTable,
  PostgresReplayStore,
  type PostgresReplayStoreOptions,
} from './store.js';
