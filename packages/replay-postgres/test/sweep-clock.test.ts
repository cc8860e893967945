/**
 * Every instance sweeps one replay table: one whose clock runs ahead must
 * not delete the records of confirmations still valid on the others. A sweep
 * without a time goes by the process's clock but never past the database's
 * `now()`; an explicit time, or a store given its own clock, is obeyed.
 */
import { randomUUID } from 'node:crypto';
import { pgPoolDriver } from '@mrtr/sql';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrateReplayTable, PostgresReplayStore } from '../src/index.js';

const reachable = await postgresReachable();
const schema = `replay_clock_${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(!reachable)('PostgresReplayStore.sweep and a clock that runs ahead', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = await poolInSchema(schema);
    await migrateReplayTable(pgPoolDriver(pool));
  });
  afterAll(async () => {
    await pool?.end();
    await dropSchema(schema);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A completed confirmation whose record lives for another minute. */
  async function completed(store: PostgresReplayStore) {
    const request = {
      nonce: randomUUID(),
      requestDigest: 'sha256:answer',
      expiresAt: Date.now() + 60_000,
    };
    expect(await store.once(request, async () => 'deleted')).toEqual({
      status: 'performed',
      outcome: 'deleted',
    });
    return request;
  }

  it('a process seven minutes ahead sweeps nothing still live by the database clock; the re-send is still replayed', async () => {
    const store = new PostgresReplayStore(pgPoolDriver(pool));
    const request = await completed(store);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 420_000);
    // Another instance, started on this clock (a store reads `Date.now` as it is at construction).
    const aheadInstance = new PostgresReplayStore(pgPoolDriver(pool));
    expect(await aheadInstance.sweep()).toBe(0);
    vi.useRealTimers();
    expect(await store.once(request, async () => 'again')).toEqual({
      status: 'replayed',
      outcome: 'deleted',
    });
  });

  it('an explicit time is obeyed, and so is a clock the store was given', async () => {
    const store = new PostgresReplayStore(pgPoolDriver(pool));
    await completed(store);
    expect(await store.sweep(Date.now() + 120_000)).toBeGreaterThanOrEqual(1);
    const ahead = new PostgresReplayStore(pgPoolDriver(pool), { now: () => Date.now() + 120_000 });
    await completed(ahead);
    expect(await ahead.sweep()).toBeGreaterThanOrEqual(1);
  });
});
