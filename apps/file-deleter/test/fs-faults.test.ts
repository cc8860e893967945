/**
 * The file system under the files root refuses (full, read-only, out of
 * descriptors): the answer is a `-32603` with HTTP 503 that says what
 * happened, never a 500; nothing changes, or a file moved aside is put back
 * (by `rename` where no link fits) or said to be held in the trash until
 * recovery can put it back; the same confirmation then deletes it once.
 * Faults are injected by replacing one call of `node:fs`'s promise API.
 */
import {
  promises as fsp,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { callTool } from '@mrtr/spec-schema';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Database, openDatabase } from '../src/db.js';
import {
  ask,
  confirmed,
  exists,
  type Harness,
  put,
  startHarness,
  TOKEN,
  TOOL,
  trash,
} from './harness.js';

let h: Harness | undefined;
let db: Database;
beforeAll(async () => {
  db = await openDatabase('memory://');
});
afterAll(() => db.close());
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

async function started() {
  h = await startHarness({ db });
  await db.query('DELETE FROM file_deletions');
  put(h.root, 'notes.txt', 'the notes');
  return h;
}

/** A Node.js system error as `node:fs` rejects with. */
function systemError(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: refused, ${syscall} '/proc/self/fd/9/x'`), {
    code,
    syscall,
    errno: -28,
  });
}

/** Round 2 of `path` with `ticket`, the raw HTTP reply. */
const answered = (x: Harness, ticket: string, keepBackup?: boolean) =>
  callTool(
    x.url,
    TOKEN,
    TOOL,
    { path: 'notes.txt' },
    { requestState: ticket, inputResponses: confirmed('notes.txt', keepBackup) },
  );

/**
 * A disk with no room for a link or a rename back: every `link` fails with
 * `ENOSPC`, and every `rename` after the first (the move into the trash).
 */
function noWayBack() {
  const realRename = fsp.rename;
  let movedAside = false;
  vi.spyOn(fsp, 'link').mockRejectedValue(systemError('ENOSPC', 'link'));
  vi.spyOn(fsp, 'rename').mockImplementation(async (from, to) => {
    if (movedAside) throw systemError('ENOSPC', 'rename');
    movedAside = true;
    return realRename(from, to);
  });
}

const rows = async () => (await db.query('SELECT nonce FROM file_deletions')).rows.length;
/** How many descriptors this process holds open on folder `dir`. */
const openOn = (dir: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === dir;
    } catch {
      return false; // closed while listed
    }
  }).length;

describe('the file system refuses while the file is looked at', () => {
  it('round 1 out of descriptors (EMFILE): 503 saying nothing changed, no descriptor kept; then asked as usual', async () => {
    const x = await started();
    const readdir = vi.spyOn(fsp, 'readdir').mockRejectedValue(systemError('EMFILE', 'scandir'));
    const r = await callTool(x.url, TOKEN, TOOL, { path: 'notes.txt' });
    expect(readdir).toHaveBeenCalled();
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: -32603 });
    expect(r.body.error.message).toBe(
      'This request changed nothing: looking at the file failed: the server has too many files open (EMFILE). Send the same request again once an operator has fixed the files root.',
    );
    // The walk's folder handles were closed, not left to the garbage collector.
    expect(openOn(realpathSync(x.root))).toBe(0);
    readdir.mockRestore();
    expect((await ask(x.url, 'notes.txt')).message).toMatch(/^Confirm deletion of "notes\.txt"/);
  });

  it('a file the server may not look at (EACCES on lstat) is a 503, not "there is no file"', async () => {
    const x = await started();
    const real = fsp.lstat;
    vi.spyOn(fsp, 'lstat').mockImplementation(((path: string, options?: object) =>
      String(path).endsWith('/notes.txt')
        ? Promise.reject(systemError('EACCES', 'lstat'))
        : real(path, options as never)) as typeof fsp.lstat);
    const r = await callTool(x.url, TOKEN, TOOL, { path: 'notes.txt' });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toMatch(
      /^This request changed nothing: looking at the file failed: the server is not allowed to \(EACCES\)/,
    );
  });
});

describe('the file system refuses after the file was moved aside', () => {
  it('no room for the backup link (ENOSPC): the file is renamed back, 503 "changed nothing", then deleted once', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    const link = vi.spyOn(fsp, 'link').mockRejectedValue(systemError('ENOSPC', 'link'));
    const r = await answered(x, q.ticket, true);
    expect(link).toHaveBeenCalled();
    expect(r.status).toBe(503);
    expect(r.body.error.message).toBe(
      'This request changed nothing: moving the file aside failed: no space is left on the file system (ENOSPC). Send the same request again once an operator has fixed the files root.',
    );
    // Back under its name (a rename needs no new link), nothing in the trash, nothing recorded.
    expect(readFileSync(`${x.root}/notes.txt`, 'utf8')).toBe('the notes');
    expect(trash(x.root)).toEqual([]);
    expect(await rows()).toBe(0);
    link.mockRestore();
    const done = await answered(x, q.ticket, true);
    expect(done.body.result.isError).toBe(false);
    expect(exists(x.root, 'notes.txt')).toBe(false);
    expect(readFileSync(`${x.root}/notes.txt.bak`, 'utf8')).toBe('the notes');
    expect(await rows()).toBe(1);
  });

  it('neither a link nor a rename back can be made: 503 says the file is held in the trash; a re-send says so too; once the disk allows, the same confirmation deletes it once', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    noWayBack();
    const r = await answered(x, q.ticket, true);
    expect(r.status).toBe(503);
    expect(r.body.error.message).toBe(
      'This request deleted nothing, but moving the file aside failed: no space is left on the file system (ENOSPC), and notes.txt could not be put back yet from .mrtr-trash: the server tries again soon and every minute. Send the same confirmation again once it is back.',
    );
    expect(exists(x.root, 'notes.txt')).toBe(false);
    expect(trash(x.root)).toHaveLength(2); // the file and its intent
    expect(await rows()).toBe(0);

    // A re-send while the disk still refuses: told the truth, not "removed since you were asked".
    const again = await answered(x, q.ticket, true);
    expect(again.body.result.isError).toBe(true);
    expect(again.body.result.content[0].text).toMatch(
      /^"notes\.txt" is in \.mrtr-trash after a deletion that did not complete, and could not be put back yet: putting the file back failed: no space is left on the file system \(ENOSPC\)\. Nothing was deleted/,
    );
    expect(await rows()).toBe(0);

    vi.mocked(fsp.link).mockRestore();
    vi.mocked(fsp.rename).mockRestore();
    warn.mockRestore();
    // The disk allows again: the re-send puts the file back, finds it unchanged, and deletes it once.
    const done = await answered(x, q.ticket, true);
    expect(done.body.result.isError).toBe(false);
    expect(exists(x.root, 'notes.txt')).toBe(false);
    expect(readFileSync(`${x.root}/notes.txt.bak`, 'utf8')).toBe('the notes');
    expect(trash(x.root)).toEqual([]);
    expect(await rows()).toBe(1);
  });

  it('a file that cannot go back because another took its name is told as such, never as removed', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    const lines: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    noWayBack();
    expect((await answered(x, q.ticket, true)).status).toBe(503);
    vi.mocked(fsp.link).mockRestore();
    vi.mocked(fsp.rename).mockRestore();
    put(x.root, 'notes.txt', 'a new file under the old name');
    // The retry scheduled after the failed settle (1 s) finds the name taken.
    for (let i = 0; i < 50 && !lines.some((l) => l.includes('cannot be put back')); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await answered(x, q.ticket, true);
    expect(again.body.result.isError).toBe(true);
    expect(again.body.result.content[0].text).toBe(
      '"notes.txt" now names another file, and the file you confirmed is in .mrtr-trash after a deletion that did not complete: it cannot go back under its name while another file holds it. Nothing was deleted; an operator must put it back.',
    );
    expect(readFileSync(`${x.root}/notes.txt`, 'utf8')).toBe('a new file under the old name');
    expect(lines.join('\n')).toMatch(
      /cannot be put back: its name notes\.txt is taken by another file/,
    );
    expect(await rows()).toBe(0);
  });
});

describe('a read-only files root', () => {
  it('the intent cannot be written, nor anything unlinked (EROFS): 503 says nothing changed, not that the file is held', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    const realOpen = fsp.open;
    vi.spyOn(fsp, 'open').mockImplementation(((path: string, ...rest: unknown[]) =>
      String(path).endsWith('.json')
        ? Promise.reject(systemError('EROFS', 'open'))
        : realOpen(path, ...(rest as []))) as typeof fsp.open);
    vi.spyOn(fsp, 'unlink').mockRejectedValue(systemError('EROFS', 'unlink'));
    const r = await answered(x, q.ticket);
    expect(r.status).toBe(503);
    expect(r.body.error.message).toBe(
      'This request changed nothing: moving the file aside failed: the file system is read-only (EROFS). Send the same request again once an operator has fixed the files root.',
    );
    expect(readFileSync(`${x.root}/notes.txt`, 'utf8')).toBe('the notes');
    expect(await rows()).toBe(0);
  });
});

describe('a name on disk that is not valid UTF-8', () => {
  it('is refused as one that text cannot name, not as missing', async () => {
    const x = await started();
    // `b<FF>d.txt`: readdir gives `b\uFFFDd.txt`, whose UTF-8 is other bytes.
    writeFileSync(
      Buffer.concat([Buffer.from(`${x.root}/b`), Buffer.from([0xff]), Buffer.from('d.txt')]),
      'x',
    );
    const r = await callTool(x.url, TOKEN, TOOL, { path: 'b\uFFFDd.txt' });
    expect(r.body.result.isError).toBe(true);
    expect(r.body.result.content[0].text).toBe(
      'Not deleted: "b\uFFFDd.txt" names a file whose name on disk is not valid UTF-8 (shown with U+FFFD); such a name cannot be given as text, so it is not deleted.',
    );
  });
});
