import { MemoryReplayStore } from '@mrtr/replay';
import { callTool } from '@mrtr/spec-schema';
import { fieldOptions } from '@mrtr/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';

const ALICE = 'tok-alice';
const BOB = 'tok-bob';
const tokens = new Map([
  [ALICE, 'alice'],
  [BOB, 'bob'],
]);

let db: Database;
let server: RunningServer;
let url: string;

beforeAll(async () => {
  db = await openDatabase('memory://');
  server = await startNotesServer({ db, tokens, secret: randomSecret() });
  url = server.url;
});
afterAll(async () => {
  await server.close();
  await db.close();
});

let seq = 0;
/** A fresh workspace owned by alice (bob added when `shared`) with three notes titled "Dup" and one "Other". */
async function workspace(shared = false) {
  const uri = `notes://t${++seq}-${Math.random().toString(36).slice(2, 8)}`;
  const ids: string[] = [];
  for (const title of ['Dup', 'Dup', 'Dup', 'Other']) {
    const r = await callTool(url, ALICE, 'notes_create', {
      workspaceUri: uri,
      title,
      body: `${title} body`,
    });
    expect(r.body.result.isError).toBe(false);
    ids.push(r.body.result.structuredContent.note.id);
  }
  if (shared) {
    await db.query('INSERT INTO workspace_members (workspace_uri, principal) VALUES ($1, $2)', [
      uri,
      'bob',
    ]);
  }
  return { uri, dups: ids.slice(0, 3), other: ids[3] as string };
}

async function remaining(uri: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM notes WHERE workspace_uri = $1 ORDER BY id',
    [uri],
  );
  return rows.map((r) => r.id);
}

async function ask(uri: string, token = ALICE, title = 'Dup') {
  const r = await callTool(url, token, 'notes_delete', { workspaceUri: uri, title });
  expect(r.status).toBe(200);
  expect(r.body.result.resultType).toBe('input_required');
  return r.body.result as {
    inputRequests: Record<string, any>;
    requestState: string;
  };
}

const accept = (noteId: string, confirm = true) => ({
  delete_choice: { action: 'accept', content: { note_id: noteId, confirm } },
});

describe('notes_delete over raw HTTP', () => {
  it('asks with a form listing exactly the matching ids, then deletes the chosen note', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri);
    const form = first.inputRequests.delete_choice;
    expect(form.method).toBe('elicitation/create');
    expect(form.params.mode).toBe('form');
    expect([...fieldOptions(form.params.requestedSchema.properties.note_id)].sort()).toEqual(
      [...ws.dups].sort(),
    );
    expect(form.params.requestedSchema.required).toEqual(['note_id', 'confirm']);
    expect(form.params.requestedSchema.properties.confirm.type).toBe('boolean');

    const chosen = ws.dups[1] as string;
    const done = await callTool(
      url,
      ALICE,
      'notes_delete',
      { title: 'Dup', workspaceUri: ws.uri },
      {
        inputResponses: accept(chosen),
        requestState: first.requestState,
      },
    );
    expect(done.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await remaining(ws.uri)).toEqual(
      [...ws.dups.filter((id) => id !== chosen), ws.other].sort(),
    );
  });

  it('a single match is still confirmed through the form', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri, ALICE, 'Other');
    expect(
      fieldOptions(first.inputRequests.delete_choice.params.requestedSchema.properties.note_id),
    ).toEqual([ws.other]);
    expect(await remaining(ws.uri)).toHaveLength(4);
  });

  it('no match is a complete isError result, with no question', async () => {
    const ws = await workspace();
    const r = await callTool(url, ALICE, 'notes_delete', { workspaceUri: ws.uri, title: 'Nope' });
    expect(r.body.result).toMatchObject({ resultType: 'complete', isError: true });
  });

  it('decline is a complete non-error refusal that uses up the ticket', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri);
    const args = { workspaceUri: ws.uri, title: 'Dup' };
    const declined = await callTool(url, ALICE, 'notes_delete', args, {
      inputResponses: { delete_choice: { action: 'decline' } },
      requestState: first.requestState,
    });
    expect(declined.body.result).toMatchObject({ resultType: 'complete', isError: false });
    const later = await callTool(url, ALICE, 'notes_delete', args, {
      inputResponses: accept(ws.dups[0] as string),
      requestState: first.requestState,
    });
    expect(later.body.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(await remaining(ws.uri)).toHaveLength(4);
  });

  it('accept with confirm: false deletes nothing', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri);
    const r = await callTool(
      url,
      ALICE,
      'notes_delete',
      { workspaceUri: ws.uri, title: 'Dup' },
      {
        inputResponses: accept(ws.dups[0] as string, false),
        requestState: first.requestState,
      },
    );
    expect(r.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await remaining(ws.uri)).toHaveLength(4);
  });

  it('cancel changes nothing and leaves the ticket usable; a later accept deletes', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri);
    const args = { workspaceUri: ws.uri, title: 'Dup' };
    const cancelled = await callTool(url, ALICE, 'notes_delete', args, {
      inputResponses: { delete_choice: { action: 'cancel' } },
      requestState: first.requestState,
    });
    expect(cancelled.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await remaining(ws.uri)).toHaveLength(4);
    const accepted = await callTool(url, ALICE, 'notes_delete', args, {
      inputResponses: accept(ws.dups[2] as string),
      requestState: first.requestState,
    });
    expect(accepted.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await remaining(ws.uri)).not.toContain(ws.dups[2]);
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('a missing or malformed answer is asked again with the same ticket, nothing consumed', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri);
    const args = { workspaceUri: ws.uri, title: 'Dup' };
    for (const inputResponses of [
      undefined,
      {},
      { delete_choice: { action: 'maybe' } },
      { other_key: accept(ws.dups[0] as string).delete_choice },
    ]) {
      const r = await callTool(url, ALICE, 'notes_delete', args, {
        inputResponses,
        requestState: first.requestState,
        invalid: true, // `action: 'maybe'` is not a valid ElicitResult on purpose
      });
      expect(r.body.result.resultType).toBe('input_required');
      expect(r.body.result.requestState).toBe(first.requestState);
    }
    // accept without content, or content violating the schema, is not consent either
    for (const content of [
      undefined,
      { note_id: ws.dups[0] },
      { note_id: ws.dups[0], confirm: 'yes' },
      { note_id: 42, confirm: true },
    ]) {
      const r = await callTool(url, ALICE, 'notes_delete', args, {
        inputResponses: { delete_choice: { action: 'accept', ...(content ? { content } : {}) } },
        requestState: first.requestState,
      });
      expect(r.body.result.resultType).toBe('input_required');
    }
    expect(await remaining(ws.uri)).toHaveLength(4);
    const ok = await callTool(url, ALICE, 'notes_delete', args, {
      inputResponses: accept(ws.dups[0] as string),
      requestState: first.requestState,
    });
    expect(ok.body.result.isError).toBe(false);
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('a tampered requestState is rejected with a JSON-RPC error and deletes nothing', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri);
    const s = first.requestState;
    const i = Math.floor(s.length * 0.6);
    const flipped = s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const requestState of [
      flipped,
      `${s}x`,
      s.replace('v1.', 'v2.'),
      s.replace('.k1.', '.k9.'),
      'garbage',
      'x'.repeat(5000),
    ]) {
      const r = await callTool(
        url,
        ALICE,
        'notes_delete',
        { workspaceUri: ws.uri, title: 'Dup' },
        {
          inputResponses: accept(ws.dups[0] as string),
          requestState,
        },
      );
      expect(r.body.error?.code, `${requestState.slice(0, 12)} → ${JSON.stringify(r.body)}`).toBe(
        -32602,
      );
      expect(JSON.stringify(r.body)).not.toContain(ws.dups[0]);
    }
    expect(await remaining(ws.uri)).toHaveLength(4);
  });

  it('a valid ticket presented with a changed title or workspace is rejected', async () => {
    const ws = await workspace();
    const other = await workspace();
    const first = await ask(ws.uri);
    for (const args of [
      { workspaceUri: ws.uri, title: 'Other' },
      { workspaceUri: other.uri, title: 'Dup' },
      { workspaceUri: ws.uri, title: 'Dup', extra: 1 },
    ]) {
      const r = await callTool(url, ALICE, 'notes_delete', args, {
        inputResponses: accept(ws.other),
        requestState: first.requestState,
      });
      expect(r.body.error?.code ?? r.body.result?.isError).toBeTruthy();
    }
    expect(await remaining(ws.uri)).toHaveLength(4);
    expect(await remaining(other.uri)).toHaveLength(4);
  });

  it('a ticket presented by another principal is rejected, even one who is a member', async () => {
    const ws = await workspace(true);
    const first = await ask(ws.uri);
    const r = await callTool(
      url,
      BOB,
      'notes_delete',
      { workspaceUri: ws.uri, title: 'Dup' },
      {
        inputResponses: accept(ws.dups[0] as string),
        requestState: first.requestState,
      },
    );
    expect(r.body.error?.code).toBe(-32602);
    expect(r.body.error?.message).toMatch(/principal/);
    expect(await remaining(ws.uri)).toHaveLength(4);
  });

  it('a chosen id outside the signed candidates (another workspace) is asked again, nothing deleted', async () => {
    const ws = await workspace();
    const other = await workspace();
    const first = await ask(ws.uri);
    for (const id of [other.dups[0] as string, ws.other]) {
      const r = await callTool(
        url,
        ALICE,
        'notes_delete',
        { workspaceUri: ws.uri, title: 'Dup' },
        {
          inputResponses: accept(id),
          requestState: first.requestState,
        },
      );
      expect(r.body.result.resultType).toBe('input_required');
    }
    expect(await remaining(ws.uri)).toHaveLength(4);
    expect(await remaining(other.uri)).toHaveLength(4);
  });

  it('clients without elicitation in this request get -32021 and nothing happens; URL-only ones get the approval page', async () => {
    const ws = await workspace();
    const urlOnly = await callTool(
      url,
      ALICE,
      'notes_delete',
      { workspaceUri: ws.uri, title: 'Dup' },
      { capabilities: { elicitation: { url: {} } } },
    );
    expect(urlOnly.body.result.inputRequests.delete_choice.params.mode).toBe('url');
    for (const capabilities of [{}, { sampling: {} }]) {
      const r = await callTool(
        url,
        ALICE,
        'notes_delete',
        { workspaceUri: ws.uri, title: 'Dup' },
        { capabilities },
      );
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe(-32021);
      expect(r.body.error.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
    }
    // the retry is judged on its own _meta too: a ticket does not carry capabilities over
    const first = await ask(ws.uri);
    const r = await callTool(
      url,
      ALICE,
      'notes_delete',
      { workspaceUri: ws.uri, title: 'Dup' },
      {
        inputResponses: accept(ws.dups[0] as string),
        requestState: first.requestState,
        capabilities: {},
      },
    );
    expect(r.body.error.code).toBe(-32021);
    expect(await remaining(ws.uri)).toHaveLength(4);
  });

  it('{elicitation: {}} declares form support', async () => {
    const ws = await workspace();
    const r = await callTool(
      url,
      ALICE,
      'notes_delete',
      { workspaceUri: ws.uri, title: 'Dup' },
      {
        capabilities: { elicitation: {} },
      },
    );
    expect(r.body.result.resultType).toBe('input_required');
  });

  it('re-sending a completed confirmation returns the recorded outcome and deletes nothing more', async () => {
    const ws = await workspace();
    const first = await ask(ws.uri);
    const args = { workspaceUri: ws.uri, title: 'Dup' };
    const extra = {
      inputResponses: accept(ws.dups[0] as string),
      requestState: first.requestState,
    };
    const once = await callTool(url, ALICE, 'notes_delete', args, extra);
    const again = await callTool(url, ALICE, 'notes_delete', args, extra);
    expect(again.body.result).toEqual(once.body.result);
    expect(await remaining(ws.uri)).toHaveLength(3);
    // the same ticket with a different choice is refused
    const swapped = await callTool(url, ALICE, 'notes_delete', args, {
      inputResponses: accept(ws.dups[1] as string),
      requestState: first.requestState,
    });
    expect(swapped.body.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('a note moved to another workspace between the rounds is not deleted; a fresh question follows', async () => {
    const ws = await workspace();
    const elsewhere = await workspace();
    const first = await ask(ws.uri);
    const moved = ws.dups[0] as string;
    await db.query('UPDATE notes SET workspace_uri = $1 WHERE id = $2', [elsewhere.uri, moved]);
    const r = await callTool(
      url,
      ALICE,
      'notes_delete',
      { workspaceUri: ws.uri, title: 'Dup' },
      {
        inputResponses: accept(moved),
        requestState: first.requestState,
      },
    );
    expect(r.body.result.resultType).toBe('input_required');
    expect(r.body.result.requestState).not.toBe(first.requestState);
    expect(
      fieldOptions(
        r.body.result.inputRequests.delete_choice.params.requestedSchema.properties.note_id,
      ),
    ).not.toContain(moved);
    expect(await remaining(elsewhere.uri)).toContain(moved);
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  // helper-162 H2: the question shows 40 characters of a note; the ticket seals all of it.
  it('a note edited past its preview, or deleted and created again under its id, between the rounds is not deleted', async () => {
    for (const change of [
      (id: string) =>
        db.query(
          "UPDATE notes SET body = body || ' and a sentence past the preview' WHERE id = $1",
          [id],
        ),
      async (id: string) => {
        const { rows } = await db.query<Record<string, unknown>>(
          'SELECT * FROM notes WHERE id = $1',
          [id],
        );
        const row = rows[0] as Record<string, unknown>;
        await db.query('DELETE FROM notes WHERE id = $1', [id]);
        await db.query(
          'INSERT INTO notes (id, workspace_uri, title, body) VALUES ($1, $2, $3, $4)',
          [id, row.workspace_uri, row.title, `${row.body} (created again)`],
        );
      },
    ]) {
      const ws = await workspace();
      // Longer than the 40 characters the question shows: every change below is past them.
      await db.query("UPDATE notes SET body = repeat('long body ', 8) WHERE workspace_uri = $1", [
        ws.uri,
      ]);
      const first = await ask(ws.uri);
      const target = ws.dups[0] as string;
      await change(target);
      const answer = { inputResponses: accept(target), requestState: first.requestState };
      const r = await callTool(
        url,
        ALICE,
        'notes_delete',
        { workspaceUri: ws.uri, title: 'Dup' },
        answer,
      );
      // The revision in the question changed: asked afresh, under a new ticket, nothing deleted.
      expect(r.body.result.resultType).toBe('input_required');
      expect(r.body.result.requestState).not.toBe(first.requestState);
      expect(r.body.result.inputRequests.delete_choice.params.message).toMatch(/changed/);
      expect(await remaining(ws.uri)).toContain(target);
      const done = await callTool(
        url,
        ALICE,
        'notes_delete',
        { workspaceUri: ws.uri, title: 'Dup' },
        { inputResponses: accept(target), requestState: r.body.result.requestState },
      );
      expect(done.body.result.isError).toBe(false);
      expect(await remaining(ws.uri)).not.toContain(target);
    }
  });

  // helper-160 M3: more than 20 notes of one title could not be deleted at all.
  it('more notes of one title than a form offers: the oldest are offered, and can be deleted', async () => {
    const uri = `notes://many-${++seq}`;
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      const r = await callTool(url, ALICE, 'notes_create', {
        workspaceUri: uri,
        title: 'Same',
        body: `n${i}`,
      });
      ids.push(r.body.result.structuredContent.note.id);
    }
    const first = await ask(uri, ALICE, 'Same');
    const form = first.inputRequests.delete_choice.params;
    expect(form.message).toMatch(
      /^22 notes titled "Same" .* the 20 oldest are offered here \(to be asked about another, call notes_delete with its noteId/,
    );
    const offered = fieldOptions(form.requestedSchema.properties.note_id);
    expect(offered).toHaveLength(20);
    const r = await callTool(
      url,
      ALICE,
      'notes_delete',
      { workspaceUri: uri, title: 'Same' },
      {
        inputResponses: accept(offered[19] as string),
        requestState: first.requestState,
      },
    );
    expect(r.body.result.isError).toBe(false);
    expect(await remaining(uri)).toHaveLength(21);
    // The newest, never among the 20 oldest, is asked about alone by its id (helper-165 M1).
    const newest = ids[21] as string;
    const alone = await callTool(url, ALICE, 'notes_delete', {
      workspaceUri: uri,
      title: 'Same',
      noteId: newest,
    });
    const only = alone.body.result.inputRequests.delete_choice.params;
    expect(fieldOptions(only.requestedSchema.properties.note_id)).toEqual([newest]);
    const gone = await callTool(
      url,
      ALICE,
      'notes_delete',
      { workspaceUri: uri, title: 'Same', noteId: newest },
      { inputResponses: accept(newest), requestState: alone.body.result.requestState },
    );
    expect(gone.body.result.isError).toBe(false);
    expect(await remaining(uri)).not.toContain(newest);
  });

  it('requests without a valid bearer token get HTTP 401', async () => {
    for (const token of [undefined, 'wrong']) {
      const r = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: '{}',
      });
      expect(r.status).toBe(401);
    }
  });
});

describe('two server instances over one database and one replay store', () => {
  it('20 concurrent copies of one confirmation delete exactly one note', async () => {
    const secret = randomSecret();
    const store = new MemoryReplayStore();
    const a = await startNotesServer({ db, tokens, secret, store });
    const b = await startNotesServer({ db, tokens, secret, store });
    try {
      const ws = await workspace();
      const first = await callTool(a.url, ALICE, 'notes_delete', {
        workspaceUri: ws.uri,
        title: 'Dup',
      });
      const requestState = first.body.result.requestState as string;
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          callTool(
            i % 2 ? a.url : b.url,
            ALICE,
            'notes_delete',
            { workspaceUri: ws.uri, title: 'Dup' },
            {
              // half the copies choose another candidate: still only one deletion in all
              inputResponses: accept((i % 4 === 3 ? ws.dups[1] : ws.dups[0]) as string),
              requestState,
            },
          ),
        ),
      );
      const left = await remaining(ws.uri);
      expect(left).toHaveLength(3);
      const deleted = ws.dups.filter((id) => !left.includes(id));
      expect(deleted).toHaveLength(1);
      const performed = responses.filter(
        (r) => r.body.result?.isError === false && r.body.result.structuredContent?.deleted,
      );
      expect(performed.length).toBeGreaterThanOrEqual(1);
      for (const r of performed)
        expect(r.body.result.structuredContent.deleted.id).toBe(deleted[0]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
