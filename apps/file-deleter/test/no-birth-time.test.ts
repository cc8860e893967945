/**
 * Where the file system keeps no birth time (ext4 with 128-byte inodes; the
 * `withoutBirthTimes` hook acts so on any), a ticket seals how many deletions
 * of the file's device and inode had committed: a file that takes a deleted
 * file's inode, size and mtime is told apart by the count alone.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db.js';
import type { FilesHooks } from '../src/root.js';
import type { ToolHooks } from '../src/tools.js';
import {
  answer,
  ask,
  call,
  confirmed,
  deletionCount,
  exists,
  type Harness,
  KEY,
  put,
  startHarness,
  textOf,
} from './harness.js';

const reachable = await postgresReachable();

let h: Harness | undefined;
let pg: { db: Database; schema: string } | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await pg?.db.close();
  if (pg) await dropSchema(pg.schema);
  pg = undefined;
});

async function started(hooks: FilesHooks & ToolHooks = {}, db?: Database) {
  h = await startHarness({ hooks: { withoutBirthTimes: true, ...hooks }, ...(db ? { db } : {}) });
  put(h.root, 'notes.txt', 'version one');
  return h;
}

/** A PostgreSQL database of its own: PGlite runs one transaction at a time, so claims never overlap there. */
async function postgres(): Promise<Database> {
  const schema = `file_deleter_nobt_${process.pid}_${Date.now().toString(36)}`;
  pg = { db: await openDatabase(POSTGRES_URL, { searchPath: schema }), schema };
  return pg.db;
}

/** Write a file of the same size at `path` and give it `ref`'s mtime to the nanosecond (`touch -r`). */
function lookAlike(x: Harness, path: string, ref: string) {
  writeFileSync(join(x.root, path), 'version ONE');
  execFileSync('touch', ['-r', ref, join(x.root, path)]);
}

const deletions = deletionCount;

describe('a file system without birth times', () => {
  it('asks without a birth time, and deletes on a good answer', async () => {
    const x = await started();
    const q = await ask(x.url, 'notes.txt');
    expect(q.message).not.toContain('created');
    const r = await answer(x.url, 'notes.txt', q.ticket, confirmed('notes.txt'));
    expect(textOf(r)).toMatch(/^Deleted "notes\.txt"/);
    expect(exists(x.root, 'notes.txt')).toBe(false);
  });

  it('a second ticket does not delete the look-alike that took the deleted file’s inode', async () => {
    const x = await started();
    const first = await ask(x.url, 'notes.txt');
    const second = await ask(x.url, 'notes.txt');
    const ref = join(x.outside, 'ref');
    execFileSync('cp', ['-p', join(x.root, 'notes.txt'), ref]);
    const old = statSync(join(x.root, 'notes.txt'), { bigint: true });
    await answer(x.url, 'notes.txt', first.ticket, confirmed('notes.txt'));
    lookAlike(x, 'notes.txt', ref);
    const r = await answer(x.url, 'notes.txt', second.ticket, confirmed('notes.txt'));
    expect(r.result.isError === false && r.result.resultType === 'complete').toBe(false);
    if (statSync(join(x.root, 'notes.txt'), { bigint: true }).ino === old.ino)
      expect(textOf(r)).toMatch(/was deleted since you were asked/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version ONE');
    expect(await deletions(x)).toBe(1);
  });

  it('a question asked while another ticket’s deletion of the file commits does not become a ticket for a later look-alike', async () => {
    // The deletion commits right after this question's first look at the file, before it counts.
    let during: (() => Promise<void>) | undefined;
    const x = await started({
      afterLookup: async () => {
        const run = during;
        during = undefined;
        await run?.();
      },
    });
    const first = await ask(x.url, 'notes.txt');
    const ref = join(x.outside, 'ref');
    execFileSync('cp', ['-p', join(x.root, 'notes.txt'), ref]);
    during = async () => {
      const done = await answer(x.url, 'notes.txt', first.ticket, confirmed('notes.txt'));
      expect(textOf(done)).toMatch(/^Deleted "notes\.txt"/);
    };
    const second = await call(x.url, 'notes.txt');
    expect(during).toBeUndefined();
    lookAlike(x, 'notes.txt', ref);
    if (second.result?.resultType === 'input_required') {
      // Had a question come back, its answer must not delete the look-alike.
      const r = await answer(
        x.url,
        'notes.txt',
        second.result.requestState,
        confirmed('notes.txt'),
      );
      expect(r.result.isError === false && r.result.resultType === 'complete').toBe(false);
    } else {
      expect(textOf(second)).toMatch(/changed while it was being looked at/);
    }
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version ONE');
    expect(await deletions(x)).toBe(1);
  });

  it.skipIf(!reachable)(
    'two tickets answered at once on PostgreSQL: the second waits for the first, and does not delete a look-alike made as soon as the first is done',
    async () => {
      // The first ticket's deletion pauses just before its move until the second is in its claim
      // too (or a second has passed: the second now waits for the first instead of getting there);
      // the second, once there, pauses until the look-alike has been made.
      let moves = 0;
      let secondAtMove: () => void = () => {};
      const secondThere = new Promise<void>((resolve) => {
        secondAtMove = resolve;
      });
      let lookAlikeMade: () => void = () => {};
      const made = new Promise<void>((resolve) => {
        lookAlikeMade = resolve;
      });
      let second: Promise<any> | undefined;
      const x = await started(
        {
          beforeMove: async () => {
            moves++;
            if (moves === 1) {
              second = answer(x.url, 'notes.txt', tickets[1] as string, confirmed('notes.txt'));
              await Promise.race([secondThere, new Promise((r) => setTimeout(r, 1000))]);
            } else if (moves === 2) {
              secondAtMove();
              await made;
            }
          },
        },
        await postgres(),
      );
      const tickets = [
        (await ask(x.url, 'notes.txt')).ticket,
        (await ask(x.url, 'notes.txt')).ticket,
      ];
      const ref = join(x.outside, 'ref');
      execFileSync('cp', ['-p', join(x.root, 'notes.txt'), ref]);
      const first = await answer(x.url, 'notes.txt', tickets[0] as string, confirmed('notes.txt'));
      expect(textOf(first)).toMatch(/^Deleted "notes\.txt"/);
      lookAlike(x, 'notes.txt', ref);
      lookAlikeMade();
      const r = await (second as Promise<any>);
      expect(r.result.isError === false && r.result.resultType === 'complete').toBe(false);
      expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version ONE');
      expect(await deletions(x)).toBe(1);
    },
  );

  it('the same file put back from its backup is not deleted by a second ticket, and the refusal does not call it another file', async () => {
    const x = await started();
    const first = await ask(x.url, 'notes.txt');
    const second = await ask(x.url, 'notes.txt');
    const kept = await answer(x.url, 'notes.txt', first.ticket, confirmed('notes.txt', true));
    expect(textOf(kept)).toContain('A backup is kept as "notes.txt.bak"');
    renameSync(join(x.root, 'notes.txt.bak'), join(x.root, 'notes.txt'));
    const r = await answer(x.url, 'notes.txt', second.ticket, confirmed('notes.txt'));
    expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(r)).toMatch(
      /was deleted since you were asked\..*same file put back or another one/,
    );
    expect(textOf(r)).not.toMatch(/another file took its place|size|modification time/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version one');
    // Asked again, the file is asked about afresh.
    const again = await call(x.url, 'notes.txt');
    expect(again.result.inputRequests[KEY].params.message).toMatch(/^Confirm deletion of/);
  });
});
