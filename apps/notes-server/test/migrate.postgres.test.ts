/**
 * Instances starting together on a new database: concurrent `CREATE TABLE IF
 * NOT EXISTS` race in PostgreSQL (`duplicate key value violates unique
 * constraint "pg_type_typname_nsp_index"`), so `migrate` takes an advisory
 * lock first. Eight at once on a fresh schema, a few times over: none fails,
 * and the demo workspace is seeded once.
 */
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db.js';
import { migrate } from '../src/notes.js';

const reachable = await postgresReachable();
const prefix = `notes_migrate_${process.pid}_${Date.now().toString(36)}`;
const schemas: string[] = [];

afterAll(async () => {
  if (reachable) for (const schema of schemas) await dropSchema(schema);
});

describe.skipIf(!reachable)('migrate on a new PostgreSQL database', () => {
  it('eight instances at once: none fails, the demo notes are seeded once', async () => {
    for (let round = 0; round < 5; round++) {
      const schema = `${prefix}_${round}`;
      schemas.push(schema);
      const db = await openDatabase(POSTGRES_URL, { searchPath: schema });
      try {
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, () => migrate(db, ['alice'])),
        );
        expect(results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual(
          [],
        );
        const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM notes');
        expect(rows[0]?.n).toBe('4');
      } finally {
        await db.close();
      }
    }
  });
});
