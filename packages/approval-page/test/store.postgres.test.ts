import { PGlite } from '@electric-sql/pglite';
import { pgliteDriver, pgPoolDriver } from '@mrtr/sql';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import type pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  ApprovalStoreUnavailableError,
  migrateApprovalTables,
  PostgresApprovalStore,
} from '../src/index.js';
import { approval, describeApprovalStoreContract } from './store-contract.js';

const reachable = await postgresReachable();
const schema = `approval_contract_${process.pid}_${Date.now().toString(36)}`;
const pools = new Map<PostgresApprovalStore, pg.Pool>();

afterAll(async () => {
  if (reachable) await dropSchema(schema);
});

describeApprovalStoreContract('PostgresApprovalStore on PostgreSQL (one pool per instance)', {
  async open() {
    const pool = await poolInSchema(schema, 8);
    const driver = pgPoolDriver(pool);
    await migrateApprovalTables(driver);
    const store = new PostgresApprovalStore(driver);
    pools.set(store, pool);
    return store;
  },
  close: (store) => pools.get(store)?.end(),
  shared: true,
  sweeps: true,
  skip: !reachable,
});

// PGlite is one embedded connection: two stores share it, as two servers in one process would.
let pglite: Promise<PGlite> | undefined;
describeApprovalStoreContract('PostgresApprovalStore on PGlite', {
  async open() {
    pglite ??= PGlite.create();
    const driver = pgliteDriver(await pglite);
    await migrateApprovalTables(driver, { table: 'approvals', sessionTable: 'approval_sessions' });
    return new PostgresApprovalStore(driver, {
      table: 'approvals',
      sessionTable: 'approval_sessions',
    });
  },
  close: async () => {
    const db = await pglite;
    if (db && !db.closed) await db.close();
  },
  shared: true,
  sweeps: true,
});

describe('PostgresApprovalStore configuration and failures', () => {
  it('refuses a table name that is not a plain identifier', () => {
    const driver = {
      query: async () => ({ rows: [] }),
      transaction: async () => undefined as never,
    };
    expect(() => new PostgresApprovalStore(driver, { table: 'x; DROP TABLE y' })).toThrow(
      TypeError,
    );
    expect(() => new PostgresApprovalStore(driver, { sessionTable: '"quoted"' })).toThrow(
      TypeError,
    );
  });

  it('fails closed with ApprovalStoreUnavailableError when the driver fails', async () => {
    const driver = {
      query: async () => {
        throw new Error('connection refused');
      },
      transaction: async () => {
        throw new Error('connection refused');
      },
    };
    const store = new PostgresApprovalStore(driver);
    await expect(store.open(approval())).rejects.toBeInstanceOf(ApprovalStoreUnavailableError);
    await expect(store.get(approval().id)).rejects.toBeInstanceOf(ApprovalStoreUnavailableError);
    await expect(
      store.decide({ id: approval().id, principal: 'alice', outcome: 'denied' }),
    ).rejects.toBeInstanceOf(ApprovalStoreUnavailableError);
  });
});

describe.skipIf(!reachable)('PostgresApprovalStore.sweep and a clock that runs ahead', () => {
  it('an instance seven minutes ahead sweeps no approval still live by the database clock; an explicit time is obeyed', async () => {
    const pool = await poolInSchema(schema, 2);
    try {
      const driver = pgPoolDriver(pool);
      await migrateApprovalTables(driver);
      const store = new PostgresApprovalStore(driver);
      const a = approval({ expiresAt: Date.now() + 60_000 });
      await store.open(a);
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        vi.setSystemTime(Date.now() + 420_000);
        // Another instance, started on that clock (a store reads `Date.now` at construction).
        const ahead = new PostgresApprovalStore(driver);
        await ahead.sweep();
      } finally {
        vi.useRealTimers();
      }
      expect((await store.get(a.id))?.approval.id).toBe(a.id);
      // Asked to sweep as of a later time, it does.
      await store.sweep(Date.now() + 120_000);
      expect(await store.get(a.id)).toBeUndefined();
    } finally {
      await pool.end();
    }
  });
});
