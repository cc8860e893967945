/**
 * One delete: a rollback after the move puts the file back; a crash after
 * the commit leaves a used ticket and a trash entry that recovery unlinks,
 * never a second delete; two instances racing one confirmation delete once.
 */
import {
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AuditWriter, GateAuditEvent } from '@mrtr/gate';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { randomSecret, startFileDeleter } from '../src/app.js';
import { openDatabase } from '../src/db.js';
import type { FilesHooks } from '../src/root.js';
import {
  answer,
  ask,
  call,
  confirmed,
  exists,
  type Harness,
  put,
  startHarness,
  TOKEN,
  textOf,
  trash,
} from './harness.js';

const reachable = await postgresReachable();
const opened: Harness[] = [];
afterEach(async () => {
  for (const x of opened.splice(0)) await x.close();
});
async function harness(...args: Parameters<typeof startHarness>) {
  const x = await startHarness(...args);
  opened.push(x);
  put(x.root, 'notes.txt', 'the notes');
  return x;
}

/** A deletion of notes.txt rolled back (its audit write failed) by a process that died before putting the file back. */
async function rolledBackUnsettled(): Promise<Harness> {
  const x = await harness({
    audit: [failingWriter()],
    hooks: {
      beforeSettle: async () => {
        throw new Error('process died');
      },
    },
  });
  const q = await ask(x.url, 'notes.txt');
  await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
  return x;
}

/**
 * A deletion of notes.txt rolled back (its audit write failed) and not yet
 * settled; `recover()` lets the audit write and settling work again.
 */
async function rolledBackPending(hooks: FilesHooks = {}) {
  const writer = failingWriter();
  let crash = true;
  const x = await harness({
    audit: [writer],
    hooks: {
      ...hooks,
      beforeSettle: async () => {
        if (crash) throw new Error('settling did not run');
      },
    },
  });
  const q = await ask(x.url, 'notes.txt');
  await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
  expect(exists(x.root, 'notes.txt')).toBe(false);
  expect(trash(x.root)).toHaveLength(2);
  const recover = () => {
    writer.on = false;
    crash = false;
  };
  return { x, q, recover };
}

/** The same confirmation sent again deletes notes.txt, once, and leaves the trash empty. */
async function deletedOnceBy(x: Harness, ticket: string) {
  const done = await answer(x.url, 'notes.txt', ticket, confirmed('notes.txt'));
  expect(textOf(done)).toBe('Deleted "notes.txt" (9 B).');
  expect(exists(x.root, 'notes.txt')).toBe(false);
  expect(trash(x.root)).toEqual([]);
  expect(await rows(x)).toHaveLength(1);
}

/** A new instance on the same database and root starts (recovering the trash first) and stops. */
const restarted = (x: Harness) =>
  startFileDeleter({ db: x.db, root: x.root, tokens: new Map(), secret: randomSecret() }).then(
    (s) => s.close(),
  );

const rows = async (x: Harness) =>
  (
    await x.db.query<{ nonce: string; finished: boolean }>(
      'SELECT nonce, finished_at IS NOT NULL AS finished FROM file_deletions',
    )
  ).rows;

/** A transactional audit writer whose `completed` write fails while `failing.on`: the claim rolls back. */
function failingWriter(): AuditWriter<unknown> & { on: boolean } {
  const w = {
    on: true,
    transactional: true as const,
    async write(e: GateAuditEvent) {
      if (w.on && e.outcome === 'completed') throw new Error('audit disk full');
    },
  };
  return w;
}

/**
 * A file deleter whose claims roll back (the audit's `completed` write fails while `writer.on`)
 * and whose database stops answering transactions once the claim has ended (`stalled.on`, set
 * before the settle): the file of a deletion stays in the trash until `stalled.on` is cleared.
 */
async function stalledAfterMove() {
  const writer = failingWriter();
  const db = await openDatabase('memory://');
  const stalled = { on: false };
  const flaky: typeof db = {
    ...db,
    transaction: (fn) =>
      stalled.on ? Promise.reject(new Error('the database did not answer')) : db.transaction(fn),
  };
  const x = await harness({
    db: flaky,
    audit: [writer],
    hooks: {
      beforeSettle: async () => {
        stalled.on = true;
      },
    },
  });
  return { x, stalled, writer };
}

describe('at most once, across a rollback or a crash', () => {
  it('a rollback after the move puts the file back (same inode); the same confirmation then deletes it once', async () => {
    const writer = failingWriter();
    const events: GateAuditEvent[] = [];
    const x = await harness({ audit: [(e) => void events.push(e), writer] });
    const { ino } = statSync(join(x.root, 'notes.txt'));
    const q = await ask(x.url, 'notes.txt');
    const failed = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(failed.error.code).toBe(-32603);
    expect(failed.error.message).toMatch(/This request changed nothing/);
    expect(statSync(join(x.root, 'notes.txt')).ino).toBe(ino);
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toEqual([]);
    writer.on = false;
    const done = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(done.result.isError).toBe(false);
    expect(exists(x.root, 'notes.txt')).toBe(false);
    expect(await rows(x)).toHaveLength(1);
  });

  it('a crash between writing the intent and the move: the re-sent confirmation deletes at once, not 503', async () => {
    const events: GateAuditEvent[] = [];
    const x = await harness({ audit: [(e) => void events.push(e)] });
    const q = await ask(x.url, 'notes.txt');
    const nonce = events.find((e) => e.outcome === 'asked')?.nonce as string;
    // What the killed process left: the intent, and the file still under its name.
    mkdirSync(join(x.root, '.mrtr-trash'), { recursive: true });
    writeFileSync(
      join(x.root, '.mrtr-trash', `${nonce}.json`),
      JSON.stringify({ path: 'notes.txt', dev: '0', ino: '0' }),
    );
    const done = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(done.error).toBeUndefined();
    expect(done.result.isError).toBe(false);
    expect(exists(x.root, 'notes.txt')).toBe(false);
    expect(await rows(x)).toHaveLength(1);
  });

  it('a crash after the commit, before the unlink: the ticket is used, a re-send deletes nothing more, recovery empties the trash', async () => {
    let crash = true;
    const x = await harness({
      hooks: {
        beforeSettle: async () => {
          if (crash) throw new Error('process died');
        },
      },
    });
    const q = await ask(x.url, 'notes.txt');
    const lost = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(lost.error.code).toBe(-32603); // the response never made it
    expect(exists(x.root, 'notes.txt')).toBe(false);
    const [row] = await rows(x);
    expect(row?.finished).toBe(false);
    expect(trash(x.root).sort()).toEqual([row?.nonce, `${row?.nonce}.json`].sort());
    // Someone writes a new notes.txt; the client re-sends the confirmation it never got an answer to.
    put(x.root, 'notes.txt', 'a new file');
    crash = false;
    const again = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(textOf(again)).toBe('Deleted "notes.txt" (9 B).');
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('a new file');
    // A restarted instance recovers the trash before it serves.
    await restarted(x);
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toEqual([{ nonce: row?.nonce, finished: true }]);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('a new file');
  });

  it('a crash after a rollback, before the file was put back: recovery at start restores it', async () => {
    const x = await rolledBackUnsettled();
    expect(exists(x.root, 'notes.txt')).toBe(false);
    expect(trash(x.root)).toHaveLength(2);
    await restarted(x);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('the notes');
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toEqual([]);
  });

  it('a crash inside the put-back, after its link and before its unlink: recovery sees the file is back, and it can still be deleted once', async () => {
    const x = await rolledBackUnsettled();
    const nonce = trash(x.root).find((n) => !n.endsWith('.json')) as string;
    // What the killed restore left: the file under its name and under its trash entry.
    linkSync(join(x.root, '.mrtr-trash', nonce), join(x.root, 'notes.txt'));
    await restarted(x);
    expect(trash(x.root)).toEqual([]);
    expect(statSync(join(x.root, 'notes.txt')).nlink).toBe(1);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('the notes');
    // No longer "2 names": a fresh confirmation deletes it, and nothing in the trash brings it back.
    const again = await startFileDeleter({
      db: x.db,
      root: x.root,
      tokens: new Map([[TOKEN, 'alice']]),
      secret: randomSecret(),
    });
    try {
      const fresh = await ask(again.url, 'notes.txt');
      const done = await answer(again.url, 'notes.txt', fresh.ticket, confirmed('notes.txt'));
      expect(textOf(done)).toBe('Deleted "notes.txt" (9 B).');
      expect(exists(x.root, 'notes.txt')).toBe(false);
    } finally {
      await again.close();
    }
  });

  it('a rollback whose file was not put back yet: the same confirmation settles it first, then deletes once', async () => {
    const { x, q, recover } = await rolledBackPending();
    recover();
    // Not "notes.txt was removed since you were asked": it is in the trash of a rolled-back deletion.
    await deletedOnceBy(x, q.ticket);
  });

  it('a confirmation whose file another instance put back after this one looked: it deletes, not "removed since you were asked"', async () => {
    let putBack = false;
    const root = { path: '' };
    const { x, q, recover } = await rolledBackPending({
      // Right after this request found notes.txt missing, another instance settles it.
      afterLookup: async (_path, found) => {
        if (!putBack || !('refused' in found)) return;
        putBack = false;
        const nonce = trash(root.path).find((n) => !n.endsWith('.json')) as string;
        renameSync(join(root.path, '.mrtr-trash', nonce), join(root.path, 'notes.txt'));
        rmSync(join(root.path, '.mrtr-trash', `${nonce}.json`));
      },
    });
    root.path = x.root;
    recover();
    putBack = true;
    await deletedOnceBy(x, q.ticket);
  });

  it('a settle the database refused is tried again soon: the file of a rolled-back deletion comes back', async () => {
    const { x, stalled } = await stalledAfterMove();
    const q = await ask(x.url, 'notes.txt');
    const failed = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    // Not "changed nothing": the file is not under its name, and the person must not act as if so.
    expect(failed.error.code).toBe(-32603);
    expect(failed.error.message).not.toMatch(/changed nothing/);
    expect(failed.error.message).toMatch(
      /did not complete, and "notes\.txt" is in \.mrtr-trash, not under its name, until the server can settle/,
    );
    expect(exists(x.root, 'notes.txt')).toBe(false);
    stalled.on = false;
    for (let i = 0; i < 40 && !exists(x.root, 'notes.txt'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('the notes');
    expect(trash(x.root)).toEqual([]);
  });

  it('while it is unsettled, round 1 on its path says so, not "there is no file"; once the database answers, round 1 puts it back and asks', async () => {
    const { x, stalled, writer } = await stalledAfterMove();
    const q = await ask(x.url, 'notes.txt');
    await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(exists(x.root, 'notes.txt')).toBe(false);
    const meanwhile = await call(x.url, 'notes.txt');
    expect(meanwhile.result.isError).toBe(true);
    expect(textOf(meanwhile)).toBe(
      '"notes.txt" is in a deletion that has not finished settling (the database did not answer), so it is not under its name now. Nothing more was deleted; call delete_file again in a minute.',
    );
    // Round 1 settles it itself once the database answers (before the retry timer, 1 s on).
    stalled.on = false;
    writer.on = false;
    const back = await ask(x.url, 'notes.txt');
    expect(back.message).toMatch(/^Confirm deletion of "notes\.txt"/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('the notes');
    expect(trash(x.root)).toEqual([]);
    expect(await rows(x)).toEqual([]);
  });
});

/** 12 copies of one confirmation, alternating between `urls`: one deletion, one outcome. */
async function race(urls: string[], root: string) {
  const q = await ask(urls[0] as string, 'notes.txt');
  const replies = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      answer(urls[i % urls.length] as string, 'notes.txt', q.ticket, confirmed('notes.txt')),
    ),
  );
  const done = replies.filter((r) => r.result?.resultType === 'complete' && !r.result.isError);
  expect(done.length).toBeGreaterThan(0);
  for (const r of done) expect(r.result).toEqual(done[0].result);
  for (const r of replies.filter((r) => !done.includes(r)))
    expect(textOf(r)).toMatch(/already used|being carried out by another request/);
  expect(exists(root, 'notes.txt')).toBe(false);
  expect(trash(root)).toEqual([]);
}

describe('two server instances racing one confirmation', () => {
  it('on one PGlite database: exactly one deletion', async () => {
    const x = await harness({ instances: 2 });
    await race(
      x.servers.map((s) => s.url),
      x.root,
    );
    expect(await rows(x)).toHaveLength(1);
  });

  it.skipIf(!reachable)('on PostgreSQL, one pool each: exactly one deletion', async () => {
    const schema = `file_deleter_test_${process.pid}_${Date.now().toString(36)}`;
    const x = await harness(); // for its root; its own server is not used
    const dbs = [
      await openDatabase(POSTGRES_URL, { searchPath: schema }),
      await openDatabase(POSTGRES_URL, { searchPath: schema }),
    ];
    const secret = randomSecret();
    const servers = [];
    try {
      for (const db of dbs)
        servers.push(
          await startFileDeleter({ db, root: x.root, tokens: new Map([[TOKEN, 'alice']]), secret }),
        );
      await race(
        servers.map((s) => s.url),
        x.root,
      );
      const count = await dbs[0]?.query('SELECT 1 FROM file_deletions');
      expect(count?.rows).toHaveLength(1);
    } finally {
      for (const s of servers) await s.close();
      for (const db of dbs) await db.close();
      await dropSchema(schema);
    }
  });
});
