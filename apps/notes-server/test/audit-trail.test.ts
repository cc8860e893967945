import { JsonLinesAuditSink } from '@mrtr/audit';
import { readAuditRecords } from '@mrtr/audit-postgres';
import { callTool } from '@mrtr/spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { ask, notesLeft, seedWorkspace } from './confirm.js';

const TOKEN = 'tok-carol';
let db: Database;
let server: RunningServer;
const lines: string[] = [];
const trail = { failing: false };

beforeAll(async () => {
  db = await openDatabase('memory://');
  const audit = new JsonLinesAuditSink({
    destination: {
      write(line) {
        if (trail.failing) throw new Error('EIO: i/o error, write');
        lines.push(line);
      },
    },
  });
  server = await startNotesServer({
    db,
    tokens: new Map([[TOKEN, 'carol']]),
    secret: randomSecret(),
    audit,
    auditTable: true,
  });
});
afterAll(async () => {
  await server.close();
  await db.close();
});

const records = (nonce: string) => lines.map((l) => JSON.parse(l)).filter((r) => r.nonce === nonce);

const answer = (uri: string, requestState: string, response: Record<string, unknown>) =>
  callTool(
    server.url,
    TOKEN,
    'notes_delete',
    { workspaceUri: uri, title: 'Dup' },
    { requestState, inputResponses: { delete_choice: response } },
  );

describe('notes server audit trail (JSON lines and table mrtr_audit)', () => {
  it('a deletion leaves asked, accepted, completed in both, with who asked, through what client, and what was answered', async () => {
    const { uri, ids } = await seedWorkspace(db, 'carol');
    const { requestState } = await ask(server.url, TOKEN, uri);
    const nonce = JSON.parse(lines.at(-1) as string).nonce as string;
    const r = await answer(uri, requestState, {
      action: 'accept',
      content: { note_id: ids[1], confirm: true },
    });
    expect(r.body.result).toMatchObject({ isError: false });
    expect(await notesLeft(db, uri)).not.toContain(ids[1]);
    const json = records(nonce);
    expect(json.map((e) => e.outcome)).toEqual(['asked', 'accepted', 'completed']);
    expect(json[0]).toMatchObject({
      principal: 'carol',
      client: { name: 'raw-test', version: '0.0.0' },
      operation: 'tools/call:notes_delete',
      arguments: { title: 'Dup', workspaceUri: uri },
      msg: 'mrtr.audit',
    });
    expect(json[0].question).toContain(`3 notes titled "Dup" are in "${uri}".`);
    expect(json[2].answer).toEqual({
      action: 'accept',
      content: { note_id: ids[1], confirm: true },
    });
    const table = await readAuditRecords(db, { nonce });
    expect(table.map((e) => [e.outcome, e.question, e.answer])).toEqual(
      json.map((e) => [e.outcome, e.question, e.answer]),
    );
  });

  it('a decline is recorded in both; nothing is deleted', async () => {
    const { uri } = await seedWorkspace(db, 'carol');
    const { requestState } = await ask(server.url, TOKEN, uri);
    const nonce = JSON.parse(lines.at(-1) as string).nonce as string;
    await answer(uri, requestState, { action: 'decline' });
    expect(await notesLeft(db, uri)).toHaveLength(3);
    expect(records(nonce).map((e) => e.outcome)).toEqual(['asked', 'declined']);
    expect((await readAuditRecords(db, { nonce })).map((e) => e.outcome)).toEqual([
      'asked',
      'declined',
    ]);
  });

  it('a trail that cannot be written stops the deletion with -32603 saying nothing was changed', async () => {
    const { uri, ids } = await seedWorkspace(db, 'carol');
    const { requestState } = await ask(server.url, TOKEN, uri);
    const nonce = JSON.parse(lines.at(-1) as string).nonce as string;
    trail.failing = true;
    try {
      const r = await answer(uri, requestState, {
        action: 'accept',
        content: { note_id: ids[0], confirm: true },
      });
      expect(r.body.error).toMatchObject({
        code: -32603,
        message: expect.stringMatching(/^This request changed nothing/),
      });
    } finally {
      trail.failing = false;
    }
    expect(await notesLeft(db, uri)).toHaveLength(3);
    // The table saw the attempt and its failure; the same confirmation goes through once the trail is back.
    expect((await readAuditRecords(db, { nonce })).map((e) => [e.outcome, e.reason])).toEqual([
      ['asked', undefined],
      ['accepted', undefined],
      ['failed', 'audit_sink_failed'],
    ]);
    await answer(uri, requestState, {
      action: 'accept',
      content: { note_id: ids[0], confirm: true },
    });
    expect(await notesLeft(db, uri)).toHaveLength(2);
  });
});
