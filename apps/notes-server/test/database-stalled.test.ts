import { callTool } from '@mrtr/spec-schema';
import { postgresReachable, type ServerProcess } from '@mrtr/test-services';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, confirm, notesLeft, notesServerOnOwnDatabase, seedWorkspace } from './confirm.js';

const postgres = await postgresReachable();
const TOKEN = 'tok-alice';
const TIMEOUT_MS = 400;

describe.skipIf(!postgres)('notes-server when PostgreSQL stops answering', () => {
  let setup: Awaited<ReturnType<typeof notesServerOnOwnDatabase>>;
  let server: ServerProcess;
  let data: pg.Pool;

  beforeAll(async () => {
    setup = await notesServerOnOwnDatabase('mrtr_notes_stall', TOKEN, {
      MRTR_DB_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    ({ server, data } = setup);
  });

  afterAll(async () => {
    await setup?.close();
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
          /^This request changed nothing: .*(did not answer in time|unavailable|audit trail could not be written)/,
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
  });
});
