/**
 * Paths: traversal, absolute and encoded paths, Unicode look-alikes and
 * symbolic links are refused before anything is asked, and nothing outside
 * the root (or inside it) is touched.
 */
import { linkSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathProblem } from '../src/paths.js';
import {
  answer,
  ask,
  call,
  confirmed,
  exists,
  type Harness,
  put,
  startHarness,
  textOf,
} from './harness.js';

let h: Harness;
let secret: string;
beforeAll(async () => {
  h = await startHarness();
  put(h.root, 'notes.txt', 'inside');
  secret = put(h.outside, 'secret.txt', 'outside: must survive');
  put(h.outside, 'notes.txt', 'outside notes: must survive');
});
afterAll(() => h.close());

const untouched = () => {
  expect(readFileSync(secret, 'utf8')).toBe('outside: must survive');
  expect(readFileSync(join(h.outside, 'notes.txt'), 'utf8')).toBe('outside notes: must survive');
  expect(readFileSync(join(h.root, 'notes.txt'), 'utf8')).toBe('inside');
};

/**
 * Round 1 for `path` breaks a rule of the path argument itself: `-32602`
 * naming `path` and saying why, before anything is looked at or asked.
 */
async function invalid(path: string, why: RegExp) {
  const body = await call(h.url, path);
  expect(body.result).toBeUndefined();
  expect(body.error).toMatchObject({ code: -32602, data: { argument: 'path' } });
  expect(body.error.message).toMatch(/^Invalid arguments for tool delete_file: path: /);
  expect(body.error.message).toMatch(why);
  untouched();
}

/** Round 1 for `path` refuses it without a question once the root is looked at; the refusal says why. */
async function refused(path: string, why: RegExp) {
  const body = await call(h.url, path);
  expect(body.error, JSON.stringify(body.error)).toBeUndefined();
  expect(body.result).toMatchObject({ resultType: 'complete', isError: true });
  expect(textOf(body)).toMatch(why);
  untouched();
}

describe('paths that leave the root are refused', () => {
  it.each([
    ['../outside/secret.txt', /\.\. \(paths stay inside the root\)/],
    ['sub/../../outside/secret.txt', /\.\./],
    ['./notes.txt', /contains \. or \.\./],
    ['/etc/passwd', /relative to the files root/],
    ['//outside/secret.txt', /relative to the files root/],
    ['C:/Windows/win.ini', /drive letter/],
    ['..\\outside\\secret.txt', /separates folders with \//],
    ['%2e%2e/outside/secret.txt', /percent-encoding/],
    ['..%2foutside%2fsecret.txt', /percent-encoding/],
    ['%252e%252e%252fsecret.txt', /percent-encoding/],
    ['notes.txt/', /empty folder name/],
    ['a//notes.txt', /empty folder name/],
    ['.mrtr-trash/anything', /\.mrtr-trash/],
    ['.MRTR-TRASH/x', /\.mrtr-trash/],
  ])('%s', async (path, why) => invalid(path, why));
});

describe('Unicode look-alikes are refused, never normalized into another name', () => {
  it.each([
    ['\u2025/outside/secret.txt', 'two dot leader ‥ for ..'],
    ['\u2024\u2024/outside/secret.txt', 'one dot leader ․ for .'],
    ['..\uFF0Foutside\uFF0Fsecret.txt', 'fullwidth solidus ／ for /'],

    ['\uFF4Eotes.txt', 'fullwidth ｎ'],
    ['ﬁle.txt', 'the ligature ﬁ'],
  ])('%s (%s): compatibility look-alike', async (path) =>
    invalid(path, /compatibility look-alike/));

  it.each([
    ['..\u2215outside\u2215secret.txt', 'division slash ∕'],
    ['..\u2044outside\u2044secret.txt', 'fraction slash ⁄'],
    ['..\u29F8outside\u29F8secret.txt', 'big solidus ⧸'],
  ])('%s (%s): a slash NFKC keeps', async (path) => invalid(path, /looks like \/ or \\/));

  it('a name in NFD (e then a combining accent) is refused: names must be NFC', async () => {
    await invalid('cafe\u0301.txt', /not in Unicode NFC form/);
  });

  it.each([
    ['notes\u202Etxt.exe', 'right-to-left override'],
    ['notes\u200B.txt', 'zero-width space'],
    ['notes.txt\u0007', 'bell'],
    ['notes\u2028.txt', 'line separator'],
    ['notes\u115f.txt', 'Hangul choseong filler'],
    ['notes\u2800.txt', 'blank braille pattern'],
    ['notes\ue000.txt', 'private use'],
    ['notes\u{10fffd}.txt', 'supplementary private use'],
    ['notes\u0378.txt', 'unassigned'],
    ['notes\ufdd0.txt', 'noncharacter'],
  ])('%s (%s): invisible or control characters', async (path) =>
    invalid(path, /control, private-use, unassigned or invisible formatting character/));

  it('a name stacking combining marks on one character is refused, joiners between them or not', async () => {
    await invalid(`e${'\u0301'.repeat(8)}.txt`, /stacks more than 4 combining marks/);
    await invalid(
      `e${'\u0301\u200d'.repeat(6)}.txt`,
      /invisible formatting character|stacks more than 4/,
    );
  });

  it('a name with a space at its end is refused (it would read as another name)', async () => {
    await invalid('notes.txt ', /starts or ends with a space/);
  });

  it('another script (Cyrillic о in nоtes.txt) names another file, and there is none', async () => {
    await refused('n\u043Etes.txt', /there is no file/);
  });

  it('a name that differs in case names no file here, and the refusal says what is there', async () => {
    await refused('NOTES.txt', /there is no file "NOTES\.txt" \(the folder has "notes\.txt"\)/);
  });
});

describe('hard links: a file with more than one name is not deleted', () => {
  it('is refused before anything is asked, and both names keep it', async () => {
    linkSync(join(h.root, 'notes.txt'), join(h.root, 'second-name.txt'));
    await refused('notes.txt', /"notes\.txt" has 2 names \(hard links\)/);
    await refused('second-name.txt', /has 2 names/);
    expect([exists(h.root, 'notes.txt'), exists(h.root, 'second-name.txt')]).toEqual([true, true]);
  });
});

describe('symbolic links are never followed, nor deleted', () => {
  it('a link to a file outside the root is refused as a target', async () => {
    symlinkSync(secret, join(h.root, 'link-out.txt'));
    await refused('link-out.txt', /"link-out\.txt" is a symbolic link/);
    expect(exists(h.root, 'link-out.txt')).toBe(true);
  });

  it('a relative link escaping upwards is refused', async () => {
    symlinkSync('../outside/secret.txt', join(h.root, 'up.txt'));
    await refused('up.txt', /symbolic link/);
  });

  it('a link to a file inside the root is refused too', async () => {
    symlinkSync('notes.txt', join(h.root, 'alias.txt'));
    await refused('alias.txt', /symbolic link/);
  });

  it('a linked folder on the way is refused, wherever it points', async () => {
    symlinkSync(h.outside, join(h.root, 'out'));
    await refused('out/secret.txt', /"out" is a symbolic link, which is never followed/);
    mkdirSync(join(h.root, 'deep'));
    symlinkSync('../../outside', join(h.root, 'deep', 'up'));
    await refused('deep/up/notes.txt', /"deep\/up" is a symbolic link/);
  });

  it('a folder or a missing file is refused without a question', async () => {
    mkdirSync(join(h.root, 'folder'));
    await refused('folder', /"folder" is not a regular file/);
    await refused('nothing.txt', /there is no file "nothing\.txt"/);
    await refused('no/such/file.txt', /there is no folder "no"/);
    await refused('notes.txt/more', /"notes\.txt" is not a folder/);
  });
});

describe('names a person could confuse', () => {
  it('the question warns when the folder also holds a name differing only in case', async () => {
    put(h.root, 'twins/Report.txt', 'upper');
    put(h.root, 'twins/report.txt', 'lower');
    const q = await ask(h.url, 'twins/report.txt');
    expect(q.message).toContain(
      'Careful: the same folder also holds "Report.txt", differing only in case or form.',
    );
    const done = await answer(h.url, 'twins/report.txt', q.ticket, confirmed('twins/report.txt'));
    expect(done.result.isError).toBe(false);
    expect(readFileSync(join(h.root, 'twins/Report.txt'), 'utf8')).toBe('upper');
    expect(exists(h.root, 'twins/report.txt')).toBe(false);
  });

  it('a file in a subfolder is asked about and deleted by its path', async () => {
    put(h.root, 'reports/q3.csv', 'a,b\n');
    const q = await ask(h.url, 'reports/q3.csv');
    expect(q.message).toMatch(/^Confirm deletion of "reports\/q3\.csv" \(4 B, /);
    const done = await answer(h.url, 'reports/q3.csv', q.ticket, confirmed('reports/q3.csv'));
    expect(done.result.isError).toBe(false);
    expect(exists(h.root, 'reports/q3.csv')).toBe(false);
    untouched();
  });

  it("quotes a path whose name reads like the server's own words, which is typed as it is on disk", async () => {
    const name = 'q3 (0 B, empty; a copy is kept)” Really keep "all.txt';
    put(h.root, name, 'the real data');
    const q = await ask(h.url, name);
    expect(q.message.split('\n')[0]).toBe(
      'Confirm deletion of "q3 (0 B, empty; a copy is kept)\\” Really keep \\"all.txt" (13 B, modified ' +
        q.message.split(' (13 B, modified ')[1]?.split('\n')[0],
    );
    const done = await answer(h.url, name, q.ticket, confirmed(name));
    expect(textOf(done)).toBe(
      'Deleted "q3 (0 B, empty; a copy is kept)\\” Really keep \\"all.txt" (13 B).',
    );
    expect(exists(h.root, name)).toBe(false);
  });
});

describe('pathProblem', () => {
  it('accepts plain relative paths, including non-ASCII NFC names', () => {
    for (const ok of ['notes.txt', 'a/b/c.md', 'café.txt', '日本語/メモ.txt', '.hidden', 'a..b'])
      expect(pathProblem(ok), ok).toBeUndefined();
  });
  it('refuses names over 255 UTF-8 bytes', () => {
    expect(pathProblem('é'.repeat(128))).toMatch(/longer than 255 UTF-8 bytes/);
    expect(pathProblem('é'.repeat(127))).toBeUndefined();
  });
});
