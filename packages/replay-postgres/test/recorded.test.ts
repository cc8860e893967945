/**
 * `recorded` reads what a committed claim recorded, without claiming or
 * waiting: what `LedgerReplayStore` asks its ledger when the front store
 * still holds the claim of a process that died after the ledger committed.
 */
import { randomUUID } from 'node:crypto';
import { LedgerReplayStore, MemoryReplayStore } from '@mrtr/replay';
import { pgPoolDriver } from '@mrtr/sql';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateReplayTable, PostgresReplayStore } from '../src/index.js';

const reachable = await postgresReachable();
const schema = `replay_recorded_${process.pid}_${Date.now().toString(36)}`;

const request = () => ({
  nonce: randomUUID(),
  requestDigest: 'sha256:answer',
  expiresAt: Date.now() + 60_000,
});

describe.skipIf(!reachable)('PostgresReplayStore.recorded', () => {
  let pool: pg.Pool;
  let store: PostgresReplayStore;
  beforeAll(async () => {
    pool = await poolInSchema(schema, 4);
    await migrateReplayTable(pgPoolDriver(pool));
    store = new PostgresReplayStore(pgPoolDriver(pool));
  });
  afterAll(async () => {
    await pool?.end();
    await dropSchema(schema);
  });

  it('a committed claim: replayed for the same answer, used for another; nothing for an unknown nonce', async () => {
    const r = request();
    expect(await store.recorded(r)).toBeUndefined();
    await store.once(r, async () => ({ deleted: 'svc_1' }));
    expect(await store.recorded(r)).toEqual({ status: 'replayed', outcome: { deleted: 'svc_1' } });
    expect(await store.recorded({ ...r, requestDigest: 'sha256:other' })).toEqual({
      status: 'refused',
      reason: 'used',
    });
  });

  it('a claim still open is neither waited for nor seen', async () => {
    const r = request();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const claimed = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const first = store.once(r, async () => {
      entered();
      await held;
      return 'done';
    });
    await claimed;
    expect(await store.recorded(r)).toBeUndefined();
    release();
    expect(await first).toEqual({ status: 'performed', outcome: 'done' });
    expect(await store.recorded(r)).toEqual({ status: 'replayed', outcome: 'done' });
  });

  it('in front of it, a front claim left by a process that died after the commit replays the outcome', async () => {
    const r = request();
    await store.once(r, async () => ({ deleted: 'svc_2' }));
    const front = new MemoryReplayStore();
    void front.once(r, () => new Promise<never>(() => {})); // the dead process's claim
    let ran = false;
    const composed = new LedgerReplayStore(front, store);
    expect(
      await composed.once(r, async () => {
        ran = true;
        return { deleted: 'again' };
      }),
    ).toEqual({ status: 'replayed', outcome: { deleted: 'svc_2' } });
    expect(ran).toBe(false);
  });
});
