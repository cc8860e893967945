/**
 * The proofs of seed 001 on the server side, over raw JSON-RPC: what is
 * asked, what is validated again, what must match, what deletes nothing.
 */
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { rpc } from '@mrtr/spec-schema';
import { DEFAULT_TTL_SECONDS } from '@mrtr/ticket';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db.js';
import {
  accept,
  answer,
  ask,
  call,
  confirmed,
  exists,
  type Harness,
  KEY,
  put,
  startHarness,
  TOKEN,
  textOf,
  trash,
} from './harness.js';

const NOTES = 'n'.repeat(2345);
let h: Harness;
// One database for the file (starting PGlite is the slow part); each test its own root and servers.
let db: Database;
beforeAll(async () => {
  db = await openDatabase('memory://');
});
afterAll(() => db.close());
beforeEach(async () => {
  h = await startHarness({ db });
  await db.query('DELETE FROM file_deletions');
  put(h.root, 'notes.txt', NOTES);
  const modified = new Date('2026-10-05T14:30:00Z');
  utimesSync(join(h.root, 'notes.txt'), modified, modified);
});
afterEach(() => h.close());

const deletions = async () =>
  (
    await h.db.query<{ path: string; reason: string; backup: string | null }>(
      'SELECT path, reason, backup FROM file_deletions',
    )
  ).rows;

describe('delete_file asks with what only the server knows', () => {
  it('states size and modification time, and asks for the path, a reason and keep_backup', async () => {
    const q = await ask(h.url, 'notes.txt');
    const { ino, birthtimeNs } = statSync(join(h.root, 'notes.txt'), { bigint: true });
    const born = new Date(Number(birthtimeNs / 1_000_000n)).toISOString().slice(0, 19);
    expect(q.message).toMatch(
      /^Confirm deletion of "notes\.txt" \(2\.3 KB, modified 2026-10-05 14:30 UTC\)\./,
    );
    expect(q.message).toContain('it would be kept as "notes.txt.bak"');
    expect(q.message).toContain(
      `2,345 bytes, modified 2026-10-05T14:30:00.000000000Z, created ${born}.${String(birthtimeNs % 1_000_000_000n).padStart(9, '0')}Z, device ${statSync(h.root).dev}, inode ${ino}`,
    );
    expect(q.schema).toEqual({
      type: 'object',
      properties: {
        confirm_name: { type: 'string', title: 'Type the file path to confirm', minLength: 1 },
        reason: {
          type: 'string',
          title: 'Reason',
          description: "Why it's being deleted (recorded in the server audit log)",
          minLength: 5,
          maxLength: 200,
        },
        keep_backup: {
          type: 'boolean',
          title: 'Keep a backup',
          description: 'Keep a .bak copy instead of deleting outright',
          default: false,
        },
      },
      required: ['confirm_name', 'reason'],
    });
    expect(readFileSync(join(h.root, 'notes.txt'), 'utf8')).toBe(NOTES); // asking deletes nothing
  });

  it('offers no way around the person: only `path` is an argument, and a confirm argument is refused', async () => {
    const list = await rpc(h.url, TOKEN, 'tools/list');
    const tool = list.body.result.tools.find((t: { name: string }) => t.name === 'delete_file');
    expect(tool.inputSchema).toMatchObject({
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    });
    expect(tool.annotations).toMatchObject({ destructiveHint: true });
    const r = await rpc(h.url, TOKEN, 'tools/call', {
      name: 'delete_file',
      arguments: { path: 'notes.txt', confirm: true, confirm_name: 'notes.txt' },
    });
    // An undeclared argument is -32602 naming it (the spec's invalid-arguments error), and nothing happens.
    expect(r.body.result).toBeUndefined();
    expect(r.body.error).toMatchObject({ code: -32602, data: { argument: 'confirm' } });
    expect(r.body.error.message).toMatch(/confirm is not a declared argument/);
    expect(exists(h.root, 'notes.txt')).toBe(true);
  });
});

describe('a confirmed deletion', () => {
  it('deletes the file, empties the trash, records the reason with the deletion and in the audit trail', async () => {
    const q = await ask(h.url, 'notes.txt');
    const done = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(done.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(textOf(done)).toBe('Deleted "notes.txt" (2.3 KB).');
    expect(done.result.structuredContent).toEqual({
      deleted: { path: 'notes.txt', size: 2345, backup: null },
    });
    // server/tools: structured content is also given as serialized JSON in a text block.
    expect(JSON.parse(done.result.content[1].text)).toEqual(done.result.structuredContent);
    expect(exists(h.root, 'notes.txt')).toBe(false);
    expect(trash(h.root)).toEqual([]);
    expect(await deletions()).toEqual([
      { path: 'notes.txt', reason: 'cleanup after the release', backup: null },
    ]);
    const completed = h.events.find((e) => e.outcome === 'completed');
    expect(completed?.answer).toEqual({
      action: 'accept',
      content: { confirm_name: 'notes.txt', reason: 'cleanup after the release' },
    });
  });

  it('keep_backup keeps a .bak copy beside it, under a free name the question stated', async () => {
    put(h.root, 'notes.txt.bak', 'an older backup');
    const q = await ask(h.url, 'notes.txt');
    expect(q.message).toContain('it would be kept as "notes.txt.1.bak"');
    const done = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt', true));
    expect(textOf(done)).toBe(
      'Deleted "notes.txt" (2.3 KB). A backup is kept as "notes.txt.1.bak".',
    );
    expect(exists(h.root, 'notes.txt')).toBe(false);
    expect(readFileSync(join(h.root, 'notes.txt.1.bak'), 'utf8')).toBe(NOTES);
    expect(readFileSync(join(h.root, 'notes.txt.bak'), 'utf8')).toBe('an older backup');
    expect(trash(h.root)).toEqual([]);
  });

  it('keep_backup where no backup name is free is asked again with the same ticket, which then deletes', async () => {
    // 252 bytes: no room for ".bak" within a name's 255.
    const name = `${'n'.repeat(248)}.txt`;
    put(h.root, name, NOTES);
    const q = await ask(h.url, name);
    expect(q.message).toContain('no backup name is free beside it');
    const again = await answer(h.url, name, q.ticket, confirmed(name, true));
    expect(again.result.resultType).toBe('input_required');
    expect(again.result.requestState).toBe(q.ticket);
    expect(again.result.inputRequests[KEY].params.message).toMatch(
      /^No backup name is free beside .*, so no backup can be kept\. Answer again without "Keep a backup"/,
    );
    expect(exists(h.root, name)).toBe(true);
    const done = await answer(h.url, name, q.ticket, confirmed(name, false));
    expect(textOf(done)).toMatch(/^Deleted "n+\.txt" \(2\.3 KB\)\.$/);
    expect(exists(h.root, name)).toBe(false);
  });

  it('an identical re-send gets the recorded result and deletes nothing more, not even a new file of that name', async () => {
    const q = await ask(h.url, 'notes.txt');
    const first = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    put(h.root, 'notes.txt', 'a new file');
    const again = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(again.result).toEqual(first.result);
    const other = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt', true));
    expect(textOf(other)).toMatch(/already used/);
    expect(readFileSync(join(h.root, 'notes.txt'), 'utf8')).toBe('a new file');
  });
});

describe('the server validates the answer again', () => {
  it.each([
    ['a reason under 5 characters', { confirm_name: 'notes.txt', reason: 'no' }, /reason/],
    [
      'a reason over 200 characters',
      { confirm_name: 'notes.txt', reason: 'r'.repeat(201) },
      /reason/,
    ],
    ['no reason', { confirm_name: 'notes.txt' }, /reason/],
    [
      'keep_backup not a boolean',
      { confirm_name: 'notes.txt', reason: 'tidy up', keep_backup: 'yes' },
      /keep_backup/,
    ],
    [
      'a field not asked for',
      { confirm_name: 'notes.txt', reason: 'tidy up', force: true },
      // Counted, not named: a member the form does not have is the client's own name.
      /it has a field this form does not have/,
    ],
  ])('%s is asked again on the same ticket, nothing deleted', async (_, content, field) => {
    const q = await ask(h.url, 'notes.txt');
    const again = await answer(h.url, 'notes.txt', q.ticket, accept(content));
    expect(again.result.resultType).toBe('input_required');
    expect(again.result.requestState).toBe(q.ticket);
    const message: string = again.result.inputRequests[KEY].params.message;
    expect(message).toMatch(/The answer was not valid/);
    expect(message).toMatch(field);
    expect(exists(h.root, 'notes.txt')).toBe(true);
    expect(await deletions()).toEqual([]);
  });
});

describe('the confirmation must match the file', () => {
  it('a typed path that differs is asked again, saying what was typed and what was expected', async () => {
    const q = await ask(h.url, 'notes.txt');
    for (const typed of ['note.txt', 'Notes.txt', 'notes.txt ', './notes.txt']) {
      const again = await answer(h.url, 'notes.txt', q.ticket, confirmed(typed));
      expect(again.result.requestState).toBe(q.ticket);
      expect(again.result.inputRequests[KEY].params.message).toContain(
        `Confirmation did not match: you typed "${typed}", expected "notes.txt".`,
      );
      expect(exists(h.root, 'notes.txt')).toBe(true);
    }
    const done = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(done.result.isError).toBe(false);
    expect(exists(h.root, 'notes.txt')).toBe(false);
  });
});

describe('decline and cancel delete nothing', () => {
  it('decline: a complete refusal that uses the ticket up', async () => {
    const q = await ask(h.url, 'notes.txt');
    const declined = await answer(h.url, 'notes.txt', q.ticket, { [KEY]: { action: 'decline' } });
    expect(declined.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(textOf(declined)).toBe('Not deleted: deleting "notes.txt" was declined.');
    const late = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(textOf(late)).toMatch(/already used/);
    expect(readFileSync(join(h.root, 'notes.txt'), 'utf8')).toBe(NOTES);
    expect(await deletions()).toEqual([]);
  });

  it('cancel: nothing changes and the question may still be answered', async () => {
    const q = await ask(h.url, 'notes.txt');
    const cancelled = await answer(h.url, 'notes.txt', q.ticket, { [KEY]: { action: 'cancel' } });
    expect(textOf(cancelled)).toMatch(/dismissed. This request deleted nothing/);
    expect(exists(h.root, 'notes.txt')).toBe(true);
    const done = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(done.result.isError).toBe(false);
    expect(exists(h.root, 'notes.txt')).toBe(false);
  });
});

describe('fails closed', () => {
  it.each([
    ['no capabilities', {}],
    ['URL elicitation only', { elicitation: { url: {} } }],
  ])('a client without form elicitation (%s) cannot delete: -32021, in either round', async (_, capabilities) => {
    const first = await call(h.url, 'notes.txt', { capabilities });
    expect(first.error.code).toBe(-32021);
    expect(first.error.data.requiredCapabilities).toEqual({ elicitation: { form: {} } });
    const q = await ask(h.url, 'notes.txt');
    const second = await call(h.url, 'notes.txt', {
      capabilities,
      requestState: q.ticket,
      inputResponses: confirmed('notes.txt'),
    });
    expect(second.error.code).toBe(-32021);
    expect(exists(h.root, 'notes.txt')).toBe(true);
  });

  it('a late answer (the ticket expired) deletes nothing', async () => {
    h.clock.offsetMs = -(DEFAULT_TTL_SECONDS + 120) * 1000;
    const q = await ask(h.url, 'notes.txt');
    h.clock.offsetMs = 0;
    const late = await answer(h.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(late.error.code).toBe(-32602);
    expect(late.error.message).toMatch(/expired/);
    expect(exists(h.root, 'notes.txt')).toBe(true);
    expect(await deletions()).toEqual([]);
  });

  it('another principal cannot use the ticket', async () => {
    const q = await ask(h.url, 'notes.txt');
    const r = await call(h.url, 'notes.txt', {
      token: 'tok-bob',
      requestState: q.ticket,
      inputResponses: confirmed('notes.txt'),
    });
    expect(r.error.code).toBe(-32602);
    expect(exists(h.root, 'notes.txt')).toBe(true);
  });

  it('a ticket for one path does not delete another', async () => {
    put(h.root, 'todo.md', 'keep me');
    const q = await ask(h.url, 'notes.txt');
    const r = await answer(h.url, 'todo.md', q.ticket, confirmed('todo.md'));
    expect(r.error.code).toBe(-32602);
    expect(exists(h.root, 'todo.md')).toBe(true);
    expect(exists(h.root, 'notes.txt')).toBe(true);
  });
});
