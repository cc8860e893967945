/**
 * A question is read in one snapshot (helper-162 M1): read in three statements,
 * a service being deleted was read with its DNS records and volumes already
 * gone, and the question described a service that never was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase, type Queryable } from '../src/db.js';
import { getService, insertService, listServices, migrate } from '../src/services.js';

let db: Database;
beforeAll(async () => {
  db = await openDatabase('memory://');
  await migrate(db, ['alice']);
});
afterAll(() => db.close());

/** `db`, on which another transaction deletes `svc`'s DNS records and volumes right after the first statement. */
function deletedAfterFirstStatement(svc: string): Queryable {
  let first = true;
  return {
    async query(sql, params) {
      const result = await db.query(sql, params);
      if (first) {
        first = false;
        await db.query('DELETE FROM dns_records WHERE service_id = $1', [svc]);
        await db.query('DELETE FROM volumes WHERE service_id = $1', [svc]);
      }
      return result as never;
    },
  };
}

describe('a service read while another transaction deletes it', () => {
  it('is read whole, as it was, or not at all', async () => {
    for (const [id, read] of [
      ['svc_torn1', (q: Queryable) => getService(q, 'svc_torn1')],
      [
        'svc_torn2',
        async (q: Queryable) => (await listServices(q, 'alice')).find((s) => s.id === 'svc_torn2'),
      ],
    ] as const) {
      await insertService(db, {
        id,
        name: id.replace('_', '-'),
        environment: 'staging',
        instances: 2,
        dnsRecords: [`${id}.example.com`],
        volumes: [{ id: `vol_${id}`, sizeGb: 5 }],
      });
      const s = await read(deletedAfterFirstStatement(id));
      expect(s?.dnsRecords, id).toEqual([`${id}.example.com`]);
      expect(
        s?.volumes.map((v) => v.id),
        id,
      ).toEqual([`vol_${id}`]);
      expect(s?.incarnation.volumes, id).toHaveLength(1);
    }
  });
});
