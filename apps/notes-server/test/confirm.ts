import { randomBytes } from 'node:crypto';
import { callTool } from '@mrtr/spec-schema';
import { fieldOptions } from '@mrtr/wire';
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
