import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { digestJson } from '@mrtr/digest';
import type { GateAuditEvent } from '@mrtr/gate';
import { pgliteDriver, pgPoolDriver, type SqlDriver } from '@mrtr/sql';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditTableStatements,
  MAX_AUDIT_RETENTION_MS,
  migrateAuditTable,
  PostgresAuditSink,
  readAuditRecords,
  sweepAuditTable,
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
  confirmation: 'presence',
  receipt: 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhbGljZSJ9.c2ln',
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

    it('records U+0000 in a text column as U+FFFD instead of failing the round', async () => {
      const sink = new PostgresAuditSink(db.driver);
      const nonce = 'nul-in-text-columns';
      // What a person typed, quoted back in the question; a principal and a reason from elsewhere.
      await sink.write({
        ...record,
        nonce,
        outcome: 'asked_again',
        principal: 'al\u0000ice',
        reason: 'check\u0000failed',
        question: 'You typed "api\u0000staging"; type the name exactly.',
      });
      const [back] = await readAuditRecords(db.driver, { nonce });
      expect(back).toMatchObject({
        principal: 'al\ufffdice',
        reason: 'check\ufffdfailed',
        question: 'You typed "api\ufffdstaging"; type the name exactly.',
        // JSON columns and the canonical arguments keep U+0000 itself.
        arguments: args,
        answer: record.answer,
      });
    });

    it('stores a record whose arguments were left out by their length, and reads it back so', async () => {
      const sink = new PostgresAuditSink(db.driver);
      const { arguments: _, ...long } = {
        ...record,
        nonce: 'long-arguments',
        argumentsLength: 20_000,
      };
      await sink.write(long);
      const [back] = await readAuditRecords(db.driver, { nonce: 'long-arguments' });
      expect(back).toEqual(long);
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

    it('sweeps the rows older than the retention (default 30 days) and keeps the newer ones', async () => {
      await migrateAuditTable(db.driver, { table: 'audit_aged' });
      const sink = new PostgresAuditSink(db.driver, { table: 'audit_aged' });
      const now = Date.UTC(2026, 10, 30);
      const day = 24 * 60 * 60 * 1000;
      for (const [nonce, age] of [
        ['d45', 45 * day],
        ['d31', 31 * day],
        ['d30-minus-1s', 30 * day - 1000],
        ['d1', day],
        ['now', 0],
      ] as const)
        await sink.write({ ...record, nonce, at: now - age, receivedAt: now - age });
      expect(await sink.sweep(now)).toBe(2);
      const left = await readAuditRecords(db.driver, { table: 'audit_aged' });
      expect(left.map((r) => r.nonce)).toEqual(['d30-minus-1s', 'd1', 'now']);
      expect(await sink.sweep(now)).toBe(0);
      // A shorter retention, through the function, in batches smaller than what it deletes.
      expect(
        await sweepAuditTable(db.driver, {
          table: 'audit_aged',
          olderThanMs: 12 * 60 * 60 * 1000,
          now,
          batchSize: 1,
        }),
      ).toBe(2);
      expect(
        (await readAuditRecords(db.driver, { table: 'audit_aged' })).map((r) => r.nonce),
      ).toEqual(['now']);
    });

    it('keeps at most maxRows rows, the newest, deleting in batches', async () => {
      await migrateAuditTable(db.driver, { table: 'audit_capped' });
      const sink = new PostgresAuditSink(db.driver, { table: 'audit_capped', maxRows: 3 });
      for (let i = 0; i < 8; i++) await sink.write({ ...record, nonce: `n${i}`, at: Date.now() });
      expect(await sink.sweep()).toBe(5);
      const left = await readAuditRecords(db.driver, { table: 'audit_capped' });
      expect(left.map((r) => r.nonce)).toEqual(['n5', 'n6', 'n7']);
      expect(
        await sweepAuditTable(db.driver, { table: 'audit_capped', maxRows: 1, batchSize: 1 }),
      ).toBe(2);
      expect(await sweepAuditTable(db.driver, { table: 'audit_capped', maxRows: 1 })).toBe(0);
    });

    it('adds the confirmation and receipt columns to a table made by migration 001, keeping its rows', async () => {
      const file = readFileSync(
        new URL('../migrations/001_mrtr_audit.sql', import.meta.url),
        'utf8',
      ).replaceAll('"mrtr_audit', '"audit_v1');
      for (const statement of sqlStatements(file)) await db.driver.query(statement);
      const old = { ...record, nonce: 'before-002' };
      delete old.confirmation;
      delete old.receipt;
      await db.driver.query(
        `INSERT INTO audit_v1 (nonce, outcome, principal, method, name, arguments, arguments_digest,
          phase, input_key, received_at, recorded_at) VALUES ($1, 'asked', 'alice', 'tools/call',
          'notes_delete', '{}', $2, 'confirm', 'k', now(), now())`,
        [old.nonce, digestJson({})],
      );
      await expect(
        new PostgresAuditSink(db.driver, { table: 'audit_v1' }).write(record),
      ).rejects.toThrow();
      await migrateAuditTable(db.driver, { table: 'audit_v1' });
      await migrateAuditTable(db.driver, { table: 'audit_v1' }); // idempotent on the new shape too
      const sink = new PostgresAuditSink(db.driver, { table: 'audit_v1' });
      await sink.write({ ...record, nonce: 'after-002' });
      const [kept] = await readAuditRecords(db.driver, { table: 'audit_v1', nonce: 'before-002' });
      expect(kept?.outcome).toBe('asked');
      expect(kept && 'receipt' in kept).toBe(false);
      const [added] = await readAuditRecords(db.driver, { table: 'audit_v1', nonce: 'after-002' });
      expect(added).toMatchObject({ confirmation: 'presence', receipt: record.receipt });
    });

    it('refuses a retention or a cap that is not positive, before any SQL', async () => {
      expect(() => new PostgresAuditSink(db.driver, { retentionMs: 0 })).toThrow(RangeError);
      expect(() => new PostgresAuditSink(db.driver, { maxRows: 1.5 })).toThrow(RangeError);
      // Past what a Date or timestamptz holds, every sweep would fail.
      for (const retentionMs of [
        Number.POSITIVE_INFINITY,
        1e20,
        8.64e15 + 1,
        MAX_AUDIT_RETENTION_MS + 1,
      ])
        expect(() => new PostgresAuditSink(db.driver, { retentionMs })).toThrow(RangeError);
      expect(
        await new PostgresAuditSink(db.driver, { retentionMs: MAX_AUDIT_RETENTION_MS }).sweep(),
      ).toBe(0);
      await expect(sweepAuditTable(db.driver, { olderThanMs: 1e20 })).rejects.toThrow(/at most/);
      await expect(sweepAuditTable(db.driver, { now: Number.NaN })).rejects.toThrow(RangeError);
      await expect(sweepAuditTable(db.driver, { olderThanMs: -1 })).rejects.toThrow(RangeError);
      await expect(sweepAuditTable(db.driver, { batchSize: 0 })).rejects.toThrow(RangeError);
    });

    it('a table name of 63 characters still gets both its indexes (names PostgreSQL would cut)', async () => {
      const long = `a${'u'.repeat(62)}`;
      await migrateAuditTable(db.driver, { table: long });
      await migrateAuditTable(db.driver, { table: long }); // idempotent
      const { rows } = await db.driver.query<{ indexdef: string }>(
        'SELECT indexdef FROM pg_indexes WHERE tablename = $1',
        [long],
      );
      expect(rows.map((r) => r.indexdef.replace(/^.* USING btree /, '')).sort()).toEqual([
        '(id)',
        '(nonce)',
        '(recorded_at)',
      ]);
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

/** The statements of a migration file, without its comments. */
function sqlStatements(file: string): string[] {
  return file
    .split('\n')
    .filter((l) => !l.startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

describe('migrations/001_mrtr_audit.sql, 002_receipt.sql and 003_arguments_length.sql', () => {
  it('are, in order, what migrateAuditTable runs for the default table', () => {
    const files = ['001_mrtr_audit.sql', '002_receipt.sql', '003_arguments_length.sql'];
    const statements = files.flatMap((name) =>
      sqlStatements(readFileSync(new URL(`../migrations/${name}`, import.meta.url), 'utf8')),
    );
    expect(statements).toEqual(auditTableStatements().map((s) => s.replace(/\s+/g, ' ').trim()));
  });
});
