/**
 * The example kit's PostgreSQL sessions carry server-side bounds a little
 * beyond the driver's deadline: a backend whose client gave up (the driver
 * closes its socket) ends on the server's side as well, instead of keeping
 * its transaction and locks until a lock wait ends or for good.
 */
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db.js';

const postgres = await postgresReachable();
const schema = `notes_bounds_${process.pid}_${Date.now().toString(36)}`;

afterAll(async () => {
  if (postgres) await dropSchema(schema);
});

describe.skipIf(!postgres)('openDatabase on PostgreSQL', () => {
  it.each([
    [700, '1700ms', '1min'],
    [20_000, '21s', '2min'],
    [undefined, '11s', '1min'],
    // Beyond what PostgreSQL takes (2^31 − 1 ms): capped, the server still starts.
    [400_000_000, '400001s', '2147483647ms'],
  ])('timeoutMs %s: statement_timeout %s, idle_in_transaction_session_timeout %s', async (timeoutMs, statement, idle) => {
    const db = await openDatabase(POSTGRES_URL, { searchPath: schema, timeoutMs });
    try {
      const show = async (name: string) =>
        (await db.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name];
      expect(await show('statement_timeout')).toBe(statement);
      expect(await show('idle_in_transaction_session_timeout')).toBe(idle);
    } finally {
      await db.close();
    }
  });
});
