import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { digestJson } from '@mrtr/digest';
import type { GateAuditEvent } from '@mrtr/gate';
import { pgliteDriver, pgPoolDriver, type SqlDriver } from '@mrtr/replay-postgres';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditTableStatements,
  migrateAuditTable,
  PostgresAuditSink,
  readAuditRecords,
} from '../src/index.js';

const reachable = await postgresReachable();
const schema = `audit_table_${process.pid}_${Date.now().toString(36)}`;
afterAll(async () => {
  if (reachable) await dropSchema(schema);
});

const args = { workspaceUri: 'notes://team', title: 'Meeting\u0000notes', n: 1e21 };
const record: GateAuditEvent = {
  outcome: 'accepted',
  principal: 'alice',
  client: { name: 'mrtr', version: '0.1.0', title: 'mrtr CLI' },
  method: 'tools/call',
  name: 'notes_delete',
  operation: 'tools/call:notes_delete',
  arguments: args,
  argumentsDigest: digestJson(args),
  phase: 'confirm',
  key: 'delete_choice',
  nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
  question: '3 notes titled "Meeting notes"…\n• note-1',
  // Content is client-controlled: the \u0000 escape jsonb refuses must still be recorded.
  answer: { action: 'accept', content: { note_id: 'note-1', confirm: true, why: 'x\u0000y' } },
  requestId: '7',
  trace: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '00f067aa0ba902b7' },
  receivedAt: 1_800_000_000_123,
  at: 1_800_000_000_456,
};

function table(
  name: string,
  open: () => Promise<{ driver: SqlDriver; close(): Promise<void> }>,
  skip = false,
) {
  describe.skipIf(skip)(name, () => {
    let db: { driver: SqlDriver; close(): Promise<void> };
    beforeAll(async () => {
      db = await open();
      await migrateAuditTable(db.driver);
      await migrateAuditTable(db.driver); // idempotent
    });
    afterAll(() => db?.close());

    it('stores a record and reads it back unchanged, a string request id staying a string', async () => {
      const sink = new PostgresAuditSink(db.driver);
      await sink.write(record);
      await sink.write({
        ...record,
        outcome: 'asked',
        requestId: 7,
        answer: undefined,
        nonce: 'other',
      });
      const [back] = await readAuditRecords(db.driver, { nonce: record.nonce as string });
      expect(back).toEqual(record);
      expect(digestJson(back?.arguments)).toBe(record.argumentsDigest);
      const all = await readAuditRecords(db.driver);
      expect(all.map((r) => r.requestId)).toEqual(['7', 7]);
    });

    it('writes inside the transaction it is given: a rollback removes the row', async () => {
      const sink = new PostgresAuditSink(db.driver);
      await expect(
        db.driver.transaction(async (tx) => {
          await sink.write({ ...record, nonce: 'rolled-back' }, tx);
          throw new Error('mutation failed');
        }),
      ).rejects.toThrow('mutation failed');
      expect(await readAuditRecords(db.driver, { nonce: 'rolled-back' })).toEqual([]);
    });

    it('rejects table names that are not plain identifiers, before any SQL', async () => {
      expect(() => new PostgresAuditSink(db.driver, { table: 'audit; DROP TABLE x' })).toThrow(
        TypeError,
      );
      await expect(migrateAuditTable(db.driver, { table: 'A"b' })).rejects.toThrow(TypeError);
    });
  });
}

table('the audit table on PGlite', async () => {
  const db = await PGlite.create();
  return { driver: pgliteDriver(db), close: () => db.close() };
});

table(
  'the audit table on the PostgreSQL server',
  async () => {
    const pool = await poolInSchema(schema, 3);
    return { driver: pgPoolDriver(pool), close: () => pool.end() };
  },
  !reachable,
);

describe('migrations/001_mrtr_audit.sql', () => {
  it('is what migrateAuditTable runs for the default table', () => {
    const file = readFileSync(new URL('../migrations/001_mrtr_audit.sql', import.meta.url), 'utf8');
    const statements = file
      .split('\n')
      .filter((l) => !l.startsWith('--'))
      .join('\n')
      .split(';')
      .map((s) => s.replace(/\s+/g, ' ').trim())
      .filter(Boolean);
    expect(statements).toEqual(auditTableStatements().map((s) => s.replace(/\s+/g, ' ').trim()));
  });
});
