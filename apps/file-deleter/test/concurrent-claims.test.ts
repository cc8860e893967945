/**
 * Two confirmations of one file answered at once, where the file system keeps
 * birth times: the second claim waits for the first (the identity lock is
 * taken in every claim), then looks again, and never moves a file that took
 * the name since (helper-162 H1: a program that makes the file again as soon
 * as it is gone had its new file moved into the trash and kept there).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db.js';
import type { FilesHooks } from '../src/root.js';
import {
  answer,
  ask,
  confirmed,
  deletionCount,
  type Harness,
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

describe('two confirmations of one file at once (birth times kept)', () => {
  it.skipIf(!reachable)(
    'the second waits for the first, then refuses: the file made again under the name is never moved',
    async () => {
      const schema = `file_deleter_cc_${process.pid}_${Date.now().toString(36)}`;
      pg = { db: await openDatabase(POSTGRES_URL, { searchPath: schema }), schema };
      let moves = 0;
      let second: Promise<any> | undefined;
      const tickets: string[] = [];
      const hooks: FilesHooks = {
        beforeMove: async () => {
          moves++;
          if (moves !== 1) return;
          // The first deletion, just before its move: the second answer arrives now, and has until
          // this one moves on (a second) to reach a move of its own.
          second = answer(x.url, 'log.txt', tickets[1] as string, confirmed('log.txt'));
          await new Promise((r) => setTimeout(r, 1000));
        },
      };
      h = await startHarness({ hooks, db: pg.db });
      const x = h;
      put(x.root, 'log.txt', 'first log');
      tickets.push((await ask(x.url, 'log.txt')).ticket, (await ask(x.url, 'log.txt')).ticket);
      const first = await answer(x.url, 'log.txt', tickets[0] as string, confirmed('log.txt'));
      expect(textOf(first)).toMatch(/^Deleted "log\.txt"/);
      // What a log writer does: the file is made again as soon as it is gone.
      writeFileSync(join(x.root, 'log.txt'), 'new log');
      const made = statSync(join(x.root, 'log.txt'), { bigint: true }).ino;
      const r = await (second as Promise<any>);
      expect(r.result).toMatchObject({ resultType: 'complete', isError: true });
      expect(textOf(r)).toMatch(/(changed|was removed) since you were asked\. Nothing was deleted/);
      expect(moves).toBe(1);
      expect(readFileSync(join(x.root, 'log.txt'), 'utf8')).toBe('new log');
      expect(statSync(join(x.root, 'log.txt'), { bigint: true }).ino).toBe(made);
      expect(readdirSync(join(x.root, '.mrtr-trash')).filter((n) => !n.startsWith('.'))).toEqual(
        [],
      );
      expect(await deletionCount(x)).toBe(1);
    },
  );
});
