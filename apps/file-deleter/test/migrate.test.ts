/**
 * Instances starting together on a new database: concurrent `CREATE TABLE IF
 * NOT EXISTS` race in PostgreSQL (`duplicate key value violates unique
 * constraint "pg_type_typname_nsp_index"`), so `migrateDeletions` takes an
 * advisory lock first. Eight at once on a fresh schema, a few times over.
 */
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db.js';
import { migrateDeletions } from '../src/deletions.js';

const reachable = await postgresReachable();
const prefix = `files_migrate_${process.pid}_${Date.now().toString(36)}`;
const schemas: string[] = [];

afterAll(async () => {
  if (reachable) for (const schema of schemas) await dropSchema(schema);
});

describe.skipIf(!reachable)('migrateDeletions on a new PostgreSQL database', () => {
  it('eight instances at once: none fails', async () => {
    for (let round = 0; round < 5; round++) {
      const schema = `${prefix}_${round}`;
      schemas.push(schema);
      const db = await openDatabase(POSTGRES_URL, { searchPath: schema });
      try {
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, () => migrateDeletions(db)),
        );
        expect(results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual(
          [],
        );
        const { rows } = await db.query('SELECT * FROM file_deletions');
        expect(rows).toEqual([]);
      } finally {
        await db.close();
      }
    }
  });
});
