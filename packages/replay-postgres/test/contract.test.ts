import { PGlite } from '@electric-sql/pglite';
import { describeReplayStoreContract } from '@mrtr/replay/contract-tests';
import { pgliteDriver, pgPoolDriver } from '@mrtr/sql';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import type pg from 'pg';
import { afterAll } from 'vitest';
import { migrateReplayTable, PostgresReplayStore } from '../src/index.js';

const reachable = await postgresReachable();
const schema = `replay_contract_${process.pid}_${Date.now().toString(36)}`;
const pools = new Map<PostgresReplayStore, pg.Pool>();

afterAll(async () => {
  if (reachable) await dropSchema(schema);
});

for (const pipeline of [false, true]) {
  describeReplayStoreContract(
    `PostgresReplayStore on PostgreSQL (two ${pipeline ? 'pipelined ' : ''}pools)`,
    {
      async open() {
        const pool = await poolInSchema(schema, 10, pipeline);
        const driver = pgPoolDriver(pool);
        await migrateReplayTable(driver);
        const store = new PostgresReplayStore(driver);
        pools.set(store, pool);
        return store;
      },
      close: (store) => pools.get(store)?.end(),
      whileRunning: 'waits',
      skip: !reachable,
    },
  );
}

// PGlite is one embedded connection: two stores share it, as two servers in one process would.
let pglite: Promise<PGlite> | undefined;
describeReplayStoreContract('PostgresReplayStore on PGlite', {
  async open() {
    pglite ??= PGlite.create();
    const driver = pgliteDriver(await pglite);
    await migrateReplayTable(driver);
    return new PostgresReplayStore(driver);
  },
  close: async () => {
    const db = await pglite;
    if (db && !db.closed) await db.close();
  },
  whileRunning: 'waits',
});
