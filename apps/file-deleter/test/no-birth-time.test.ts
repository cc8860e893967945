/**
 * Where the file system keeps no birth time (ext4 with 128-byte inodes; the
 * `withoutBirthTimes` hook acts so on any), a ticket seals how many deletions
 * of the file's device and inode had committed: a file that takes a deleted
 * file's inode, size and mtime is told apart by the count alone.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FilesHooks } from '../src/root.js';
import {
  answer,
  ask,
  call,
  confirmed,
  exists,
  type Harness,
  KEY,
  put,
  startHarness,
  textOf,
} from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function started(hooks: FilesHooks = {}) {
  h = await startHarness({ hooks: { withoutBirthTimes: true, ...hooks } });
  put(h.root, 'notes.txt', 'version one');
  return h;
}

/** Write a file of the same size at `path` and give it `ref`'s mtime to the nanosecond (`touch -r`). */
function lookAlike(x: Harness, path: string, ref: string) {
  writeFileSync(join(x.root, path), 'version ONE');
  execFileSync('touch', ['-r', ref, join(x.root, path)]);
}

const deletions = async (x: Harness) =>
  (await x.db.query('SELECT nonce FROM file_deletions')).rows.length;

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
    expect(textOf(r)).not.toMatch(/another file took its place/);
    expect(readFileSync(join(x.root, 'notes.txt'), 'utf8')).toBe('version one');
    // Asked again, the file is asked about afresh.
    const again = await call(x.url, 'notes.txt');
    expect(again.result.inputRequests[KEY].params.message).toMatch(/^Confirm deletion of/);
  });
});
