/**
 * What the trash folder may hold and who may write in it. Recovery (at start
 * and every minute) and the ask path read the intents kept there: a FIFO
 * named as an intent used to hold the open for good, and with it the
 * recovery's transaction and every request behind it. And a trash folder
 * another user made or may write in could dictate what recovery moves where.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startFileDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { MAX_READ_BYTES, readNoFollow } from '../src/fd.js';
import { answer, ask, confirmed, exists, TOKEN, TOOL } from './harness.js';

const open: { base: string; db?: Database; server?: RunningServer }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.server?.close();
    await o.db?.close();
    rmSync(o.base, { recursive: true, force: true });
  }
});

/** A files root with `notes.txt` and a trash folder of mode `mode`. */
function rootWithTrash(mode = 0o700) {
  const base = mkdtempSync(join(tmpdir(), 'file-deleter-trash-'));
  const root = join(base, 'root');
  mkdirSync(join(root, '.mrtr-trash'), { recursive: true });
  chmodSync(join(root, '.mrtr-trash'), mode); // explicit: the umask must not decide the test
  writeFileSync(join(root, 'notes.txt'), 'the notes');
  const entry: (typeof open)[number] = { base };
  open.push(entry);
  return { base, root, entry };
}

async function start(root: string, entry: (typeof open)[number]) {
  const db = await openDatabase('memory://');
  entry.db = db;
  const server = await startFileDeleter({
    db,
    root,
    tokens: new Map([[TOKEN, 'alice']]),
    secret: randomSecret(),
  });
  entry.server = server;
  return server;
}

/** Reject after `ms`: the bound of a call that must not hang (generous for a loaded host). */
const within = <T>(work: Promise<T>, ms = 15_000) =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms),
    ),
  ]);

describe('readNoFollow', () => {
  it('reads a regular file; a FIFO, a folder or a file past the bound is none, at once', async () => {
    const { base } = rootWithTrash();
    writeFileSync(join(base, 'intent.json'), '{"path":"a"}');
    expect(await readNoFollow(join(base, 'intent.json'))).toBe('{"path":"a"}');
    execFileSync('mkfifo', [join(base, 'fifo.json')]);
    expect(await within(readNoFollow(join(base, 'fifo.json')))).toBeUndefined();
    expect(await readNoFollow(base)).toBeUndefined();
    writeFileSync(join(base, 'big.json'), 'x'.repeat(MAX_READ_BYTES + 1));
    expect(await readNoFollow(join(base, 'big.json'))).toBeUndefined();
    expect(await readNoFollow(join(base, 'missing.json'))).toBeUndefined();
  });
});

describe('a FIFO named as an intent in the trash', () => {
  it('neither holds the start nor the requests: the server starts, asks and deletes', async () => {
    const { root, entry } = rootWithTrash();
    execFileSync('mkfifo', [join(root, '.mrtr-trash', 'AAAAAAAAAAAAAAAAAAAA.json')]);
    const server = await within(start(root, entry));
    const q = await within(ask(server.url, 'notes.txt'));
    const done = await within(answer(server.url, 'notes.txt', q.ticket, confirmed('notes.txt')));
    expect(done.result.isError).toBe(false);
    expect(exists(root, 'notes.txt')).toBe(false);
  });
});

describe('a trash folder another user may write in', () => {
  it('is refused at start, saying what to fix', async () => {
    const { root, entry } = rootWithTrash(0o777);
    // Said for the operator starting it, with the fix: no request was refused.
    await expect(start(root, entry)).rejects.toThrow(
      /^file-deleter cannot start: \.mrtr-trash in FILES_ROOT must belong to the server's user and be writable by no one else \(mode 777, owner \d+\)\. Run chmod 700 /,
    );
  });

  it('made writable while the server runs: -32603 with HTTP 503, nothing moved, the ticket still good', async () => {
    const { root, entry } = rootWithTrash();
    const server = await start(root, entry);
    const q = await ask(server.url, 'notes.txt');
    chmodSync(join(root, '.mrtr-trash'), 0o770);
    const r = await callTool(
      server.url,
      TOKEN,
      TOOL,
      { path: 'notes.txt' },
      { requestState: q.ticket, inputResponses: confirmed('notes.txt') },
    );
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: -32603 });
    expect(r.body.error.message).toMatch(/writable by no one else \(mode 770/);
    expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('the notes');
    chmodSync(join(root, '.mrtr-trash'), 0o700);
    const done = await answer(server.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(done.result.isError).toBe(false);
    expect(exists(root, 'notes.txt')).toBe(false);
  });

  it('made writable, or gone, while round 1 asks about a missing path: the files root is blamed, not the database', async () => {
    const { root, entry } = rootWithTrash();
    const server = await start(root, entry);
    const missing = () => callTool(server.url, TOKEN, TOOL, { path: 'never-was.txt' });
    chmodSync(join(root, '.mrtr-trash'), 0o770);
    const writable = await missing();
    expect([writable.status, writable.body.error?.code]).toEqual([503, -32603]);
    expect(writable.body.error.message).toMatch(/writable by no one else \(mode 770/);
    rmSync(join(root, '.mrtr-trash'), { recursive: true });
    const gone = await missing();
    expect([gone.status, gone.body.error?.code]).toEqual([503, -32603]);
    expect(gone.body.error.message).toMatch(/^This request changed nothing: .*An operator must/);
    for (const said of [writable, gone])
      expect(JSON.stringify(said.body)).not.toMatch(/database|has not finished settling/);
  });
});
