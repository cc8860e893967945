/**
 * The file changes while the person reads the question: a changed file is
 * asked about afresh with the new facts; a replaced or removed one is
 * refused; a swap in the window between the last check and the rename
 * cannot make anything outside the root (or another file) go.
 */
import { execFileSync } from 'node:child_process';
import {
  linkSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db.js';
import type { FilesHooks } from '../src/root.js';
import type { ToolHooks } from '../src/tools.js';
import {
  answer,
  ask,
  confirmed,
  deletionCount,
  exists,
  type Harness,
  KEY,
  put,
  startHarness,
  TOKEN,
  TOOL,
  textOf,
  trash,
} from './harness.js';

let h: Harness | undefined;
// One database for the file (starting PGlite is the slow part); each test its own root and server.
let db: Database;
beforeAll(async () => {
  db = await openDatabase('memory://');
});
afterAll(() => db.close());
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function started(hooks: FilesHooks & ToolHooks = {}) {
  h = await startHarness({ hooks, db });
  await db.query('DELETE FROM file_deletions');
  put(h.root, 'notes.txt', 'version one');
  return h;
}

const rows = deletionCount;

describe('the file changed between the rounds', () => {
  it('a new size: asked afresh with the new facts under a new ticket; nothing deleted until that is answered', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    writeFileSync(join(x.root, 'notes.txt'), 'version two, longer');
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result.resultType).toBe('input_required');
    expect(r.result.requestState).not.toBe(q.ticket);
    const message: string = r.result.inputRequests[KEY].params.message;
    expect(message).toMatch(/has changed since/);
    expect(message).toContain('Confirm deletion of "notes.txt" (19 B,');
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version two, longer');
    expect(await rows(x)).toBe(0);
    const done = await answer(x.url, 'notes.txt', r.result.requestState, confirmed('notes.txt'));
    expect(done.result.isError).toBe(false);
    expect(exists(x.root, 'notes.txt')).toBe(false);
  });

  it('the same size with new content and a new mtime: asked afresh, nothing deleted', async () => {
    const x = await started();
    const before = statSync(join(x.root, 'notes.txt'), { bigint: true });
    const q = await ask(x.url, 'notes.txt');
    writeFileSync(join(x.root, 'notes.txt'), 'version 1.0');
    const later = new Date(Number(before.mtimeMs) + 1500);
    utimesSync(join(x.root, 'notes.txt'), later, later);
    expect(statSync(join(x.root, 'notes.txt')).size).toBe(Number(before.size));
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result.resultType).toBe('input_required');
    expect(r.result.requestState).not.toBe(q.ticket);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version 1.0');
  });

  it('replaced by another file of the same name (another inode): refused, the new file kept', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    put(x.root, 'notes.txt.new', 'version one'); // same size and content
    const { mtime } = statSync(join(x.root, 'notes.txt'));
    utimesSync(join(x.root, 'notes.txt.new'), mtime, mtime);
    renameSync(join(x.root, 'notes.txt.new'), join(x.root, 'notes.txt'));
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(r)).toMatch(/was replaced by another file since you were asked/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version one');
    expect(await rows(x)).toBe(0);
  });

  it('deleted, and a new file of the same size and mtime in its place (ext4 hands on the inode number): not deleted by the old ticket', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    const old = statSync(join(x.root, 'notes.txt'), { bigint: true });
    const ref = join(x.outside, 'ref');
    execFileSync('cp', ['-p', join(x.root, 'notes.txt'), ref]);
    rmSync(join(x.root, 'notes.txt'));
    writeFileSync(join(x.root, 'notes.txt'), 'version ONE');
    // To the nanosecond, as `touch -r` sets it: only the birth time can tell the two apart.
    execFileSync('touch', ['-r', ref, join(x.root, 'notes.txt')]);
    const now = statSync(join(x.root, 'notes.txt'), { bigint: true });
    expect([now.size, now.mtimeNs]).toEqual([old.size, old.mtimeNs]);
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result.isError === false && r.result.resultType === 'complete').toBe(false);
    if (now.ino === old.ino) {
      // The same identity in every other fact: asked afresh about the new file.
      expect(r.result.resultType).toBe('input_required');
      expect(r.result.inputRequests[KEY].params.message).toMatch(/has changed since/);
    }
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version ONE');
    expect(await rows(x)).toBe(0);
  });

  it('a second name (hard link) made meanwhile: refused, nothing deleted, nothing recorded', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    linkSync(join(x.root, 'notes.txt'), join(x.root, 'elsewhere.txt'));
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(r)).toMatch(/has 2 names \(hard links\)/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version one');
    expect(await rows(x)).toBe(0);
  });

  it('removed: refused, nothing recorded', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    unlinkSync(join(x.root, 'notes.txt'));
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(textOf(r)).toBe('"notes.txt" was removed since you were asked. Nothing was deleted.');
    expect(await rows(x)).toBe(0);
  });

  it('a backup name taken meanwhile changes the question (it states the backup name)', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    put(x.root, 'notes.txt.bak', 'someone else’s');
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt', true));
    expect(r.result.resultType).toBe('input_required');
    expect(r.result.inputRequests[KEY].params.message).toContain('kept as "notes.txt.1.bak"');
    expect(readFileSync(join(x.root, 'notes.txt.bak'), 'utf8')).toBe('someone else’s');
  });
});

describe('another ticket deleted it, and a new file took the name, while its trash was not emptied yet', () => {
  it('the second ticket is told it was replaced, not that an operator must put it back', async () => {
    let during: (() => Promise<void>) | undefined;
    const x = await started({
      beforeSettle: async () => {
        const run = during;
        during = undefined;
        await run?.();
      },
    });
    const first = await ask(x.url, 'notes.txt');
    const second = await ask(x.url, 'notes.txt');
    let r: any;
    during = async () => {
      // The first deletion has committed; the file is still in the trash, to be emptied next.
      put(x.root, 'notes.txt', 'a new file, another inode');
      r = await answer(x.url, 'notes.txt', second.ticket, confirmed('notes.txt'));
    };
    const done = await answer(x.url, 'notes.txt', first.ticket, confirmed('notes.txt'));
    expect(textOf(done)).toMatch(/^Deleted "notes\.txt"/);
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(r)).toMatch(/was replaced by another file since you were asked/);
    expect(textOf(r)).not.toMatch(/operator/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('a new file, another inode');
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toBe(1);
  });
});

describe('a swap in the window between the last check and the rename', () => {
  it('the file swapped for a link to a file outside: the link is put back, nothing outside goes, the call is refused', async () => {
    let swap = async () => {};
    const x = await started({ beforeMove: () => swap() });
    const outside = put(x.outside, 'secret.txt', 'outside');
    const q = await ask(x.url, 'notes.txt');
    swap = async () => {
      swap = async () => {};
      renameSync(join(x.root, 'notes.txt'), join(x.root, 'moved-away.txt'));
      symlinkSync(outside, join(x.root, 'notes.txt'));
    };
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(r)).toMatch(/symbolic link/);
    expect(readFileSync(outside, 'utf8')).toBe('outside');
    expect(readFileSync(join(x.root, 'moved-away.txt'), 'utf8')).toBe('version one');
    expect(statSync(join(x.root, 'notes.txt')).isFile()).toBe(true); // the link, followed by statSync
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toBe(0);
  });

  it('a second name (hard link) made in the window: the file is put back and kept; the call is refused', async () => {
    let swap = async () => {};
    const x = await started({ beforeMove: () => swap() });
    const q = await ask(x.url, 'notes.txt');
    swap = async () => {
      swap = async () => {};
      linkSync(join(x.root, 'notes.txt'), join(x.root, 'late-name.txt'));
    };
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version one');
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toBe(0);
  });

  it('the file swapped for another regular file: that one is put back and kept; the call is refused', async () => {
    let swap = async () => {};
    const x = await started({ beforeMove: () => swap() });
    const q = await ask(x.url, 'notes.txt');
    swap = async () => {
      swap = async () => {};
      // Moved away, not unlinked: a new file could otherwise reuse its inode (then it only looks changed).
      renameSync(join(x.root, 'notes.txt'), join(x.root, 'kept-aside.txt'));
      put(x.root, 'notes.txt', 'an impostor');
    };
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(r)).toMatch(/was replaced by another file/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('an impostor');
    expect(readFileSync(join(x.root, 'kept-aside.txt'), 'utf8')).toBe('version one');
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toBe(0);
  });

  it.each([
    ['removed (another ticket, or rm)', (root: string) => rmSync(join(root, 'docs/plan.txt'))],
    ['gone with its folder', (root: string) => rmSync(join(root, 'docs'), { recursive: true })],
  ])('the file %s in the window: "removed since you were asked", not a fault of the files root', async (_, gone) => {
    let swap = async () => {};
    const x = await started({ beforeMove: () => swap() });
    put(x.root, 'docs/plan.txt', 'the plan');
    const q = await ask(x.url, 'docs/plan.txt');
    swap = async () => {
      swap = async () => {};
      gone(x.root);
    };
    const r = await answer(x.url, 'docs/plan.txt', q.ticket, confirmed('docs/plan.txt'));
    expect(r.error).toBeUndefined();
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(r)).toMatch(
      /^"docs\/plan\.txt" was removed since you were asked\. Nothing was deleted\.$/,
    );
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toBe(0);
  });

  it('its folder swapped for a link to a folder outside: the held folder is used, the outside file stays', async () => {
    let swap = async () => {};
    const x = await started({ beforeMove: () => swap() });
    put(x.root, 'docs/plan.txt', 'the plan');
    const lookalike = put(x.outside, 'plan.txt', 'outside plan');
    const q = await ask(x.url, 'docs/plan.txt');
    swap = async () => {
      swap = async () => {};
      renameSync(join(x.root, 'docs'), join(x.root, 'docs-old'));
      symlinkSync(x.outside, join(x.root, 'docs'));
    };
    const r = await answer(x.url, 'docs/plan.txt', q.ticket, confirmed('docs/plan.txt'));
    // The file confirmed (same inode, now under docs-old) is the one that went; nothing outside did.
    expect(r.result.isError).toBe(false);
    expect(readFileSync(lookalike, 'utf8')).toBe('outside plan');
    expect(exists(x.root, 'docs-old/plan.txt')).toBe(false);
    expect(trash(x.root)).toEqual([]);
    rmSync(join(x.root, 'docs'));
  });
});

describe('the files root itself changed between the rounds', () => {
  it('its trash replaced by a link: -32603 with HTTP 503 saying so, never a 500; nothing moved, the ticket still good', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    const trashDir = join(x.root, '.mrtr-trash');
    renameSync(trashDir, `${trashDir}-saved`);
    symlinkSync(join(x.root, 'elsewhere'), trashDir);
    const r = await callTool(
      x.url,
      TOKEN,
      TOOL,
      { path: 'notes.txt' },
      {
        requestState: q.ticket,
        inputResponses: confirmed('notes.txt'),
      },
    );
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: -32603 });
    expect(r.body.error.message).toMatch(
      /^This request changed nothing: \.mrtr-trash in FILES_ROOT is not a folder/,
    );
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version one');
    expect(await rows(x)).toBe(0);
    unlinkSync(trashDir);
    renameSync(`${trashDir}-saved`, trashDir);
    const done = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(done.result.isError).toBe(false);
    expect(exists(x.root, 'notes.txt')).toBe(false);
  });
});

// helper-162 H1, helper-165 M2/L3: another file took the name in the instant before the move, and
// the name was taken again before it could go back: the intent kept beside it names that file.
describe('a file moved by mistake that cannot go back', () => {
  it('stays in the trash under an intent naming it, not the file that was confirmed', async () => {
    let swap = async () => {};
    let retake = async () => {};
    const x = await started({ beforeMove: () => swap(), afterMove: () => retake() });
    const confirmedIno = statSync(join(x.root, 'notes.txt')).ino;
    const q = await ask(x.url, 'notes.txt');
    let interloper = 0;
    swap = async () => {
      swap = async () => {};
      renameSync(join(x.root, 'notes.txt'), join(x.root, 'kept.txt'));
      writeFileSync(join(x.root, 'notes.txt'), 'a writer made this');
      interloper = statSync(join(x.root, 'notes.txt')).ino;
    };
    retake = async () => {
      retake = async () => {};
      writeFileSync(join(x.root, 'notes.txt'), 'and then this');
    };
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    // Not "notes.txt could not be put back": the file confirmed is untouched (helper-165 M2).
    expect(JSON.stringify(r)).toMatch(
      /the file it found at \\"notes\.txt\\" \(the one you confirmed, or one that took the name/,
    );
    expect(readFileSync(join(x.root, 'kept.txt'), 'utf8')).toBe('version one');
    const intents = trash(x.root).filter((n) => n.endsWith('.json'));
    expect(intents).toHaveLength(1);
    const intent = JSON.parse(
      readFileSync(join(x.root, '.mrtr-trash', intents[0] as string), 'utf8'),
    );
    expect(intent).toMatchObject({ path: 'notes.txt', ino: String(interloper) });
    expect(intent.ino).not.toBe(String(confirmedIno));
    expect(trash(x.root).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
