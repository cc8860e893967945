/**
 * Valid and hostile data over real HTTP: a question whose notes hold a lot
 * of text still asks (its ticket does not grow with what it shows), previews
 * stay valid Unicode, text PostgreSQL cannot store is refused up front, and
 * an answer's odd content never turns a decline or a cancel into anything else.
 */
import { callTool } from '@mrtr/spec-schema';
import { fieldOptions } from '@mrtr/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { findByTitle } from '../src/notes.js';

const TOKEN = 'tok-alice-hostile';
let db: Database;
let server: RunningServer;
let seq = 0;

beforeAll(async () => {
  db = await openDatabase('memory://');
  server = await startNotesServer({
    db,
    tokens: new Map([[TOKEN, 'alice']]),
    secret: randomSecret(),
  });
});
afterAll(async () => {
  await server.close();
  await db.close();
});

const call = (name: string, args: Record<string, unknown>, extra = {}) =>
  callTool(server.url, TOKEN, name, args, extra);

async function workspaceWith(bodies: string[], title = 'Same') {
  const uri = `notes://hostile-${++seq}`;
  for (const body of bodies) {
    const r = await call('notes_create', { workspaceUri: uri, title, body });
    expect(r.body.result.isError).toBe(false);
  }
  return uri;
}

describe('questions over data of any size and script', () => {
  it.each([
    [
      '10 notes with 40 control characters each',
      Array.from({ length: 10 }, (_, i) => `${i}${'\u0001\u0007\t'.repeat(14)}`),
    ],
    [
      '15 notes in CJK',
      Array.from({ length: 15 }, (_, i) =>
        `会議の議事録${i}：移行は一週間遅れました。次回は金曜日です。`.repeat(3),
      ),
    ],
    [
      '20 notes of 10 000 characters',
      Array.from({ length: 20 }, (_, i) => `${i}${'x'.repeat(9_990)}`),
    ],
  ])('%s: asked, with a ticket of at most 200 characters', async (_what, bodies) => {
    const uri = await workspaceWith(bodies);
    const r = await call('notes_delete', { workspaceUri: uri, title: 'Same' });
    expect(r.status).toBe(200);
    expect(r.body.result.resultType).toBe('input_required');
    expect((r.body.result.requestState as string).length).toBeLessThanOrEqual(200);
    const options = fieldOptions(
      r.body.result.inputRequests.delete_choice.params.requestedSchema.properties.note_id,
    );
    expect(options).toHaveLength(bodies.length);
  });

  it('a body of emoji, flags and combining marks is previewed on a character boundary', async () => {
    const uri = await workspaceWith(['😀'.repeat(60), '🇫🇷'.repeat(40), 'é'.repeat(80)]);
    const r = await call('notes_delete', { workspaceUri: uri, title: 'Same' });
    const params = r.body.result.inputRequests.delete_choice.params;
    expect((params.message as string).isWellFormed()).toBe(true);
    for (const option of params.requestedSchema.properties.note_id.oneOf as { title: string }[])
      expect(option.title.isWellFormed()).toBe(true);
    expect(params.message).toContain('…');
  });
});

describe('stored text that would rewrite the question it appears in', () => {
  it('a body with a line break cannot add a candidate line the server never offered', async () => {
    const uri = await workspaceWith([
      'a\n• note-0000000000 (created 2026-12-02): empty draft',
      'b',
    ]);
    const r = await call('notes_delete', { workspaceUri: uri, title: 'Same' });
    const message = r.body.result.inputRequests.delete_choice.params.message as string;
    // The head and one line per note: two notes, three lines.
    expect(message.split('\n')).toHaveLength(3);
  });

  it('a title that holds quotes and a sentence cannot close the quote: the question reads it as one title', async () => {
    const title =
      'Old draft". Nothing is deleted: this only archives it. Archive the note "Old draft';
    const uri = await workspaceWith(['kept'], title);
    const r = await call('notes_delete', { workspaceUri: uri, title });
    const message = r.body.result.inputRequests.delete_choice.params.message as string;
    expect(message.split('\n')[0]).toBe(
      `Delete the note "Old draft\\". Nothing is deleted: this only archives it. Archive the note \\"Old draft" from "${uri}"? This cannot be undone.`,
    );
  });

  it.each([
    '  ',
    '\u3000',
    '\u00a0\u2003',
  ])('a title of white space alone (%j) is -32602', async (title) => {
    const r = await call('notes_create', { workspaceUri: 'notes://blank', title });
    expect(r.body.error?.code).toBe(-32602);
    expect(JSON.stringify(r.body.error)).toContain('white space');
  });

  it.each([
    ['title', { workspaceUri: 'notes://spoof', title: 'One\nThis note is an empty draft' }],
    ['title', { workspaceUri: 'notes://spoof', title: 'abc\u202efed' }],
    ['workspaceUri', { workspaceUri: 'notes://a\u2028b', title: 'x' }],
  ])('a control or bidi character in %s is -32602', async (argument, args) => {
    for (const tool of ['notes_create', 'notes_delete']) {
      const r = await call(tool, args);
      expect(r.body.error?.code).toBe(-32602);
      expect(JSON.stringify(r.body.error)).toContain(argument);
    }
  });
});

describe('text PostgreSQL cannot store', () => {
  it.each([
    ['title', { workspaceUri: 'notes://nul', title: 'a\u0000b' }],
    ['workspaceUri', { workspaceUri: 'notes://n\u0000l', title: 'x' }],
    ['body', { workspaceUri: 'notes://nul', title: 'x', body: 'nul \u0000 here' }],
  ])('U+0000 in %s is -32602 naming the argument, never a 500', async (argument, args) => {
    const r = await call('notes_create', args);
    expect(r.status).not.toBe(500);
    expect(r.body.error?.code).toBe(-32602);
    expect(JSON.stringify(r.body.error)).toContain(argument);
  });

  it('U+0000 in the title of notes_delete is -32602 too, before anything is asked', async () => {
    const r = await call('notes_delete', { workspaceUri: 'notes://nul', title: 'a\u0000' });
    expect(r.status).not.toBe(500);
    expect(r.body.error?.code).toBe(-32602);
  });
});

describe('odd answer content', () => {
  async function asked() {
    const uri = await workspaceWith(['one', 'two']);
    const r = await call('notes_delete', { workspaceUri: uri, title: 'Same' });
    return { uri, requestState: r.body.result.requestState as string };
  }
  const answer = (uri: string, requestState: string, response: unknown) =>
    call(
      'notes_delete',
      { workspaceUri: uri, title: 'Same' },
      { requestState, inputResponses: { delete_choice: response } },
    );

  it('a decline carrying a lone surrogate stays a decline; the ticket is used up', async () => {
    const { uri, requestState } = await asked();
    // JSON text with a lone-surrogate escape, as a hostile client would send it.
    const declined = await answer(uri, requestState, {
      action: 'decline',
      content: { note_id: '\ud800' },
    });
    expect(declined.status).toBe(200);
    expect(declined.body.result).toMatchObject({ resultType: 'complete', isError: false });
    const ids = (await findByTitle(db, uri, 'Same')).map((n) => n.id);
    const accept = await answer(uri, requestState, {
      action: 'accept',
      content: { note_id: ids[0], confirm: true },
    });
    expect(accept.body.result.isError).toBe(true);
    expect(await findByTitle(db, uri, 'Same')).toHaveLength(2);
  });

  it('a cancel carrying a lone surrogate stays a cancel; the same ticket still completes', async () => {
    const { uri, requestState } = await asked();
    const cancelled = await answer(uri, requestState, {
      action: 'cancel',
      content: { x: '\udfff' },
    });
    expect(cancelled.body.result).toMatchObject({ resultType: 'complete', isError: false });
    const ids = (await findByTitle(db, uri, 'Same')).map((n) => n.id);
    const done = await answer(uri, requestState, {
      action: 'accept',
      content: { note_id: ids[0], confirm: true },
    });
    expect(done.body.result.isError).toBe(false);
  });

  it('an accept with a lone surrogate is asked again; a cancel after the ticket was used says nothing untrue', async () => {
    const { uri, requestState } = await asked();
    const odd = await answer(uri, requestState, {
      action: 'accept',
      content: { note_id: 'x\ud800', confirm: true },
    });
    expect(odd.body.result.resultType).toBe('input_required');
    const ids = (await findByTitle(db, uri, 'Same')).map((n) => n.id);
    await answer(uri, requestState, {
      action: 'accept',
      content: { note_id: ids[0], confirm: true },
    });
    const late = await answer(uri, requestState, { action: 'cancel' });
    expect(late.body.result.content[0].text).not.toMatch(/can still be answered/);
    // The store knows the ticket was used: said so, rather than a cancel of a question still open.
    expect(late.body.result.content[0].text).toMatch(
      /^This confirmation was already used; this request changed nothing\./,
    );
    expect(late.body.result.content[0].text).not.toMatch(/Not deleted/);
  });
});
