import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Database, openDatabase, readServerEnv, startSweeper } from '../src/index.js';

let db: Database;
beforeAll(async () => {
  db = await openDatabase('memory://');
  await db.query(
    'CREATE TABLE swept (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text)',
  );
});
afterAll(() => db?.close());

const size = async () =>
  Number(
    (await db.query<{ s: number }>("SELECT pg_total_relation_size('swept')::bigint AS s")).rows[0]
      ?.s,
  );
const fill = () =>
  db.query("INSERT INTO swept (body) SELECT repeat('x', 1000) FROM generate_series(1, 5000)");
const sweepAll = {
  table: 'swept',
  run: async () =>
    (
      await db.query<{ n: number }>(
        'WITH gone AS (DELETE FROM swept RETURNING 1) SELECT count(*)::int AS n FROM gone',
      )
    ).rows[0]?.n ?? 0,
};

describe('startSweeper', () => {
  it('keeps an in-memory PGlite table bounded: it vacuums a table its sweep emptied', async () => {
    expect(db.embedded && db.inMemory).toBe(true);
    const sweeper = startSweeper(db, [sweepAll], 3_600_000);
    await sweeper.runOnce(); // the run started at start
    const sizes: number[] = [];
    for (let round = 0; round < 4; round++) {
      await fill();
      await sweeper.runOnce();
      sizes.push(await size());
    }
    await sweeper.stop();
    // Without VACUUM each round adds the space of 5 000 dead rows (about 6 MB): the sizes climb.
    expect(sizes[3]).toBeLessThanOrEqual((sizes[1] as number) * 1.1);
  });

  it('runs at start and on its timer until stopped; a failing sweep is reported and retried', async () => {
    let runs = 0;
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const sweeper = startSweeper(
      db,
      [
        {
          table: 'swept',
          run: async () => {
            runs++;
            if (runs === 1) throw new Error('database away');
            return 0;
          },
        },
      ],
      20,
    );
    await vi.waitFor(() => expect(runs).toBeGreaterThanOrEqual(3));
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/sweep of swept failed: database away/),
    );
    await sweeper.stop();
    const stoppedAt = runs;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(runs).toBe(stoppedAt);
    warn.mockRestore();
  });
});

describe('readServerEnv MRTR_AUDIT_RETENTION_DAYS', () => {
  const day = 24 * 60 * 60 * 1000;
  const env = (extra: Record<string, string>) => ({
    MRTR_TOKENS: 'a:t',
    MRTR_SECRET: 's',
    ...extra,
  });
  it('is 30 days by default, or the days given (fractions allowed)', () => {
    expect(readServerEnv(env({}), 3000).auditRetentionMs).toBe(30 * day);
    expect(readServerEnv(env({ MRTR_AUDIT_RETENTION_DAYS: '400' }), 3000).auditRetentionMs).toBe(
      400 * day,
    );
    expect(readServerEnv(env({ MRTR_AUDIT_RETENTION_DAYS: '0.5' }), 3000).auditRetentionMs).toBe(
      day / 2,
    );
  });
  it.each(['0', '-3', 'forever', 'Infinity', '1e15', '365251'])('refuses %s', (value) => {
    expect(() => readServerEnv(env({ MRTR_AUDIT_RETENTION_DAYS: value }), 3000)).toThrow(
      /MRTR_AUDIT_RETENTION_DAYS must be a positive number of days/,
    );
  });
});
