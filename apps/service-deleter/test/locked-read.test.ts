/**
 * A locked read that finds nothing reads again: under READ COMMITTED a
 * `FOR UPDATE` that waited for a transaction which deleted the row skips it
 * and cannot see the row that transaction made again; each transaction
 * waiting behind that one can do the same once more. The statements are
 * scripted here, since which of two waiting sessions PostgreSQL wakes first
 * cannot be arranged from outside.
 */
import { describe, expect, it } from 'vitest';
import type { Queryable, QueryResult } from '../src/db.js';
import { getService, getVolume } from '../src/services.js';

/** A `Queryable` whose reads of `table` by id find nothing `misses` times, then `row`. */
function remadeWhileWaiting(table: string, misses: number, row: Record<string, unknown>) {
  const reads: string[] = [];
  const q: Queryable = {
    async query<R>(sql: string): Promise<QueryResult<R>> {
      if (new RegExp(`FROM ${table}\\b.* WHERE (\\w+\\.)?id = \\$1`).test(sql)) {
        reads.push(sql);
        return { rows: (reads.length > misses ? [row] : []) as R[] };
      }
      return { rows: [] };
    },
  };
  return { q, reads };
}

const service = {
  id: 'svc_remade',
  name: 'remade',
  environment: 'staging',
  instances: 1,
  revision: 1,
  team_id: 'platform',
  incarnation: '41',
};

describe('a locked read of a row made again while it waited', () => {
  it('finds the service made again by the third transaction it waited for', async () => {
    const { q, reads } = remadeWhileWaiting('services', 2, service);
    const s = await getService(q, 'svc_remade', true);
    expect(s?.incarnation.service).toBe('41');
    expect(reads).toHaveLength(3);
    expect(reads.every((sql) => sql.endsWith(' FOR UPDATE'))).toBe(true);
  });

  it('finds the volume made again the same way', async () => {
    const { q } = remadeWhileWaiting('volumes', 2, {
      id: 'vol_remade',
      size_gb: 4,
      service_id: null,
      team_id: 'platform',
      incarnation: '42',
    });
    expect((await getVolume(q, 'vol_remade', true))?.incarnation).toBe('42');
  });

  it('without a lock reads once, and a row not there is read a bounded number of times', async () => {
    const once = remadeWhileWaiting('services', 1, service);
    expect(await getService(once.q, 'svc_remade')).toBeUndefined();
    expect(once.reads).toHaveLength(1);
    const never = remadeWhileWaiting('services', Number.POSITIVE_INFINITY, service);
    expect(await getService(never.q, 'svc_remade', true)).toBeUndefined();
    expect(never.reads).toHaveLength(5);
  });
});
