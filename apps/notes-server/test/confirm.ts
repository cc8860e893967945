import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import { createOwnDatabase, type ServerProcess, startServerProcess } from '@mrtr/test-services';
import { fieldOptions } from '@mrtr/wire';
import pg from 'pg';
import { expect } from 'vitest';
import type { Queryable } from '../src/db.js';

/** A fresh workspace of `principal` with three notes titled "Dup"; returns its URI and the note ids. */
export async function seedWorkspace(db: Queryable, principal: string) {
  const uri = `notes://replay-${randomBytes(4).toString('hex')}`;
  await db.query('INSERT INTO workspaces (uri) VALUES ($1)', [uri]);
  await db.query('INSERT INTO workspace_members (workspace_uri, principal) VALUES ($1, $2)', [
    uri,
    principal,
  ]);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = `note-${randomBytes(5).toString('hex')}`;
    await db.query(
      "INSERT INTO notes (id, workspace_uri, title, body) VALUES ($1, $2, 'Dup', 'body')",
      [id, uri],
    );
    ids.push(id);
  }
  return { uri, ids };
}

/** Ids of the notes left in `uri`. */
export async function notesLeft(db: Queryable, uri: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM notes WHERE workspace_uri = $1 ORDER BY id',
    [uri],
  );
  return rows.map((r) => r.id);
}

/** Round 1 of notes_delete: the ticket and the offered candidates. */
export async function ask(url: string, token: string, uri: string) {
  const r = await callTool(url, token, 'notes_delete', { workspaceUri: uri, title: 'Dup' });
  expect(r.body.result?.resultType).toBe('input_required');
  return {
    requestState: r.body.result.requestState as string,
    candidates: fieldOptions(
      r.body.result.inputRequests.delete_choice.params.requestedSchema.properties.note_id,
    ),
  };
}

/** Round 2 of notes_delete: accept with `noteId` and confirm; the JSON-RPC response body. */
export async function confirm(
  url: string,
  token: string,
  uri: string,
  requestState: string,
  noteId: string,
) {
  const r = await callTool(
    url,
    token,
    'notes_delete',
    { workspaceUri: uri, title: 'Dup' },
    {
      inputResponses: {
        delete_choice: { action: 'accept', content: { note_id: noteId, confirm: true } },
      },
      requestState,
    },
  );
  return r.body;
}

/**
 * notes-server as a process on a PostgreSQL database of its own, principal
 * `alice` with `token`, no rate limit, the audit trail in a temporary folder;
 * `data` is a small pool on the same database for the test's own reads and
 * writes (its connection errors ignored: fault tests end them too).
 */
export async function notesServerOnOwnDatabase(
  name: string,
  token: string,
  env: Record<string, string> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const database = await createOwnDatabase(name);
  const server: ServerProcess = await startServerProcess(new URL('..', import.meta.url).pathname, {
    DATABASE_URL: database.url,
    PORT: '0',
    MRTR_TOKENS: `alice:${token}`,
    MRTR_SECRET: 'k'.repeat(32),
    MRTR_AUDIT_FILE: join(dir, 'audit.jsonl'),
    MRTR_RATE_LIMIT: 'off', // bursts of calls: the fault is the point here, not the limit
    ...env,
  });
  const data = new pg.Pool({ connectionString: database.url, max: 2 });
  data.on('error', () => {});
  return {
    database,
    server,
    data,
    async close() {
      server.child.kill();
      await data.end();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
