/**
 * The service-deleter sweeps what grows with it while it runs: expired rows of its
 * replay table `mrtr_replay` and rows of `mrtr_audit` older than
 * `auditRetentionMs` (on PGlite, vacuumed after); `close()` stops the sweeper.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';

const day = 24 * 60 * 60 * 1000;
let db: Database;
beforeAll(async () => {
  db = await openDatabase('memory://');
});
afterAll(() => db?.close());

/** Rows written straight into the tables, as if left by earlier runs: one past its time, one not. */
async function plant(tag: string) {
  const now = Date.now();
  for (const [nonce, at] of [
    [`${tag}-aged`, now - 3 * day],
    [`${tag}-fresh`, now - day / 2],
  ] as const) {
    await db.query(
      `INSERT INTO mrtr_audit (nonce, outcome, principal, method, name, arguments, arguments_digest,
         phase, input_key, received_at, recorded_at)
       VALUES ($1, 'asked', 'alice', 'tools/call', 'x', '{}', 'sha256:x', 'confirm', 'k', $2, $2)`,
      [nonce, new Date(at).toISOString()],
    );
  }
  await db.query(
    `INSERT INTO mrtr_replay (nonce, request_digest, expires_at, outcome) VALUES
       ($1, 'sha256:a', now() - interval '1 minute', '{}'), ($2, 'sha256:a', now() + interval '1 hour', '{}')`,
    [`${tag}-expired`, `${tag}-live`],
  );
}

const left = async (tag: string) => ({
  audit: (
    await db.query<{ nonce: string }>(
      'SELECT nonce FROM mrtr_audit WHERE nonce LIKE $1 ORDER BY nonce',
      [`${tag}-%`],
    )
  ).rows.map((r) => r.nonce),
  replay: (
    await db.query<{ nonce: string }>(
      'SELECT nonce FROM mrtr_replay WHERE nonce LIKE $1 ORDER BY nonce',
      [`${tag}-%`],
    )
  ).rows.map((r) => r.nonce),
});

describe('service-deleter retention', () => {
  it('sweeps aged audit rows and expired replay rows on its timer, keeps the rest; close() stops it', async () => {
    const server = await startServiceDeleter({
      db,
      tokens: new Map([['tok', 'alice']]),
      secret: randomSecret(),
      auditTable: true,
      auditRetentionMs: day,
      sweepIntervalMs: 25,
    });
    await plant('running');
    await vi.waitFor(
      async () =>
        expect(await left('running')).toEqual({
          audit: ['running-fresh'],
          replay: ['running-live'],
        }),
      { timeout: 20_000, interval: 50 },
    );
    await server.close();

    await plant('closed');
    await new Promise((resolve) => setTimeout(resolve, 500)); // twenty intervals
    expect(await left('closed')).toEqual({
      audit: ['closed-aged', 'closed-fresh'],
      replay: ['closed-expired', 'closed-live'],
    });
  });
});
