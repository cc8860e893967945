/**
 * notes-server as a process on PostgreSQL that stops answering without
 * closing anything: another session holds an exclusive lock on the replay
 * table, so every claim waits on it. Each confirmation must fail closed
 * within `MRTR_DB_TIMEOUT_MS` ("Nothing was changed … did not answer in
 * time", nothing deleted), other requests must not queue behind the stalled
 * ones for good, and once the lock is gone the same confirmation deletes
 * once. Before the deadline existed a confirmation waited as long as the
 * lock was held, and a dozen of them took every pooled connection.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import {
  createOwnDatabase,
  type OwnDatabase,
  postgresReachable,
  type ServerProcess,
  startServerProcess,
} from '@mrtr/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, confirm, notesLeft, seedWorkspace } from './confirm.js';

const postgres = await postgresReachable();
const TOKEN = 'tok-alice';
const TIMEOUT_MS = 400;

describe.skipIf(!postgres)('notes-server when PostgreSQL stops answering', () => {
  let database: OwnDatabase;
  let server: ServerProcess;
  let data: pg.Pool;
  const dir = mkdtempSync(join(tmpdir(), 'notes-stall-'));

  beforeAll(async () => {
    database = await createOwnDatabase('mrtr_notes_stall');
    server = await startServerProcess(new URL('..', import.meta.url).pathname, {
      DATABASE_URL: database.url,
      PORT: '0',
      MRTR_TOKENS: `alice:${TOKEN}`,
      MRTR_SECRET: 'k'.repeat(32),
      MRTR_AUDIT_FILE: join(dir, 'audit.jsonl'),
      MRTR_RATE_LIMIT: 'off',
      MRTR_DB_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    data = new pg.Pool({ connectionString: database.url, max: 2 });
  });

  afterAll(async () => {
    server?.child.kill();
    await data?.end();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('confirmations fail closed within the deadline while the replay table is locked, then delete once', async () => {
    const seeded = [];
    for (let i = 0; i < 12; i++) {
      const { uri, ids } = await seedWorkspace(data, 'alice');
      seeded.push({ uri, ids, ...(await ask(server.url, TOKEN, uri)) });
    }
    const holder = await data.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE mrtr_replay IN ACCESS EXCLUSIVE MODE');
    try {
      const started = Date.now();
      // More confirmations than the server's pool has connections (10).
      const replies = await Promise.all(
        seeded.map(({ uri, requestState, candidates }) =>
          callTool(
            server.url,
            TOKEN,
            'notes_delete',
            { workspaceUri: uri, title: 'Dup' },
            {
              inputResponses: {
                delete_choice: {
                  action: 'accept',
                  content: { note_id: candidates[0], confirm: true },
                },
              },
              requestState,
            },
          ),
        ),
      );
      const took = Date.now() - started;
      // Two waits at most: one for a connection, one for the claim (generous for a loaded CI).
      expect(took).toBeLessThan(10 * TIMEOUT_MS + 5_000);
      for (const reply of replies) {
        expect(reply.status).toBe(503);
        expect(reply.body.error.code).toBe(-32603);
        // The claim, or an audit write waiting for a pooled connection, gave up first.
        expect(reply.body.error.message).toMatch(
          /^Nothing was changed: .*(did not answer in time|unavailable|audit trail could not be written)/,
        );
      }
      // Another tool is answered while the lock is still held.
      const listed = await callTool(server.url, TOKEN, 'notes_list', {
        workspaceUri: seeded[0]?.uri,
      });
      expect(listed.body.result?.isError).toBe(false);
      for (const { uri, ids } of seeded) expect(await notesLeft(data, uri)).toEqual(ids.toSorted());
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    // The same confirmations, now that PostgreSQL answers: each deletes its note, once.
    for (const { uri, ids, requestState, candidates } of seeded) {
      const body = await confirm(server.url, TOKEN, uri, requestState, candidates[0] as string);
      expect(body.result?.isError).not.toBe(true);
      expect(await notesLeft(data, uri)).toHaveLength(ids.length - 1);
      const again = await confirm(server.url, TOKEN, uri, requestState, candidates[0] as string);
      expect(again.result).toEqual(body.result);
      expect(await notesLeft(data, uri)).toHaveLength(ids.length - 1);
    }
    expect(server.child.exitCode).toBeNull();
  }, 60_000);
});
