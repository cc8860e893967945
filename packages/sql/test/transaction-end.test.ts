/**
 * A statement a transaction's `fn` did not await: issued while `fn` runs, it
 * belongs to the transaction and its failure fails the transaction without
 * also ending the process as an unhandled rejection; issued after `fn`
 * settled, it runs nowhere, never in the next transaction on the connection.
 * On `pg.Pool` (one client, so that the next transaction reuses it) and on PGlite.
 */
import { PGlite } from '@electric-sql/pglite';
import { POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  pgliteDriver,
  pgPoolDriver,
  type SqlDriver,
  type SqlQueryable,
  TransactionEndedError,
} from '../src/index.js';

const reachable = await postgresReachable();
const TABLE = `sql_tx_end_${process.pid}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function contract(
  name: string,
  open: () => Promise<{ driver: SqlDriver; close(): Promise<void> }>,
  skip = false,
) {
  describe.skipIf(skip)(name, () => {
    let db: { driver: SqlDriver; close(): Promise<void> };
    beforeAll(async () => {
      db = await open();
      await db.driver.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (id int PRIMARY KEY)`);
    });
    afterAll(async () => {
      await db?.driver.query(`DROP TABLE IF EXISTS ${TABLE}`);
      await db?.close();
    });

    it('a statement issued on tx after fn settled rejects and never joins the next transaction', async () => {
      let stale: SqlQueryable | undefined;
      await db.driver.transaction(async (tx) => {
        stale = tx;
        await tx.query(`INSERT INTO ${TABLE} (id) VALUES (1)`);
      });
      const late = await db.driver.transaction(async (tx) => {
        // While another transaction holds the connection, the old tx is used again.
        const lateInsert = (stale as SqlQueryable).query(`INSERT INTO ${TABLE} (id) VALUES (9)`);
        await expect(lateInsert).rejects.toBeInstanceOf(TransactionEndedError);
        await tx.query(`INSERT INTO ${TABLE} (id) VALUES (2)`);
        return 'committed';
      });
      expect(late).toBe('committed');
      const { rows } = await db.driver.query<{ id: number }>(`SELECT id FROM ${TABLE} ORDER BY id`);
      expect(rows.map((r) => r.id)).toEqual([1, 2]);
    });

    it('a failed statement fn did not await fails the transaction, with no unhandled rejection', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        await expect(
          db.driver.transaction(async (tx) => {
            void tx.query(`INSERT INTO ${TABLE} (id) VALUES (1)`); // a duplicate key: fails
            return 'done';
          }),
        ).rejects.toThrow();
        await sleep(50);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      const { rows } = await db.driver.query<{ id: number }>(`SELECT id FROM ${TABLE} ORDER BY id`);
      expect(rows.map((r) => r.id)).toEqual([1, 2]);
    });
  });
}

contract(
  'pgPoolDriver',
  async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    return { driver: pgPoolDriver(pool), close: () => pool.end() };
  },
  !reachable,
);

contract('pgliteDriver', async () => {
  const db = await PGlite.create();
  return { driver: pgliteDriver(db), close: () => db.close() };
});
