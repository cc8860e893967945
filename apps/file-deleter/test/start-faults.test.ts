/**
 * The file deleter on PostgreSQL behind a proxy that keeps back or cuts
 * PostgreSQL's answers (`pg-proxy.ts` of example-kit's tests): every
 * start-up step on the database (`mrtr_replay`, `file_deletions`,
 * `mrtr_audit`, and settling what a crash left in the trash) that stalls past
 * the deadline or loses its connection after the `SELECT 1` probe answered
 * is told on stderr and run again, and the server starts; it used to fail
 * with "This request changed nothing: the database did not answer in time".
 */
import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { PgFaultProxy, startThroughFaults } from '../../example-kit/test/pg-proxy.js';
import { type RunningServer, randomSecret, startFileDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { exists, trash } from './harness.js';

const reachable = await postgresReachable();
const schema = `files_start_faults_${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(!reachable)(
  'file-deleter when PostgreSQL stalls or drops the connection at start',
  () => {
    const base = mkdtempSync(join(tmpdir(), 'file-deleter-start-'));
    let proxy: PgFaultProxy | undefined;
    let db: Database | undefined;
    let server: RunningServer | undefined;

    afterAll(async () => {
      await server?.close();
      await db?.close().catch(() => {});
      await proxy?.refuse();
      await dropSchema(schema);
      rmSync(base, { recursive: true, force: true });
    });

    it('waits for each start-up step the database stalls or drops, then serves', async () => {
      // What a crash between the move and the commit leaves: the file in the trash, with its intent.
      const root = join(base, 'root');
      mkdirSync(join(root, '.mrtr-trash'), { recursive: true });
      writeFileSync(join(root, 'notes.txt'), 'the notes');
      const { dev, ino } = statSync(join(root, 'notes.txt'), { bigint: true });
      const nonce = randomBytes(16).toString('hex');
      renameSync(join(root, 'notes.txt'), join(root, '.mrtr-trash', nonce));
      writeFileSync(
        join(root, '.mrtr-trash', `${nonce}.json`),
        JSON.stringify({ path: 'notes.txt', dev: String(dev), ino: String(ino) }),
      );

      proxy = new PgFaultProxy(POSTGRES_URL);
      await proxy.start();
      const database = await openDatabase(proxy.url(POSTGRES_URL), {
        searchPath: schema,
        timeoutMs: 400,
      });
      db = database;
      const stalled = ['mrtr-replay-migrate:"mrtr_replay"', nonce];
      const dropped = ['mrtr-file-deleter-migrate', 'mrtr-audit-migrate'];
      ({ started: server } = await startThroughFaults(
        proxy,
        {
          stalled,
          dropped,
          steps: [
            'migrating mrtr_replay',
            'migrating file_deletions',
            'migrating mrtr_audit',
            'recovering the trash',
          ],
        },
        () =>
          startFileDeleter({
            db: database,
            root,
            tokens: new Map([['tok-alice', 'alice']]),
            secret: randomSecret(),
            auditTable: true,
          }),
      ));
      // No deletion committed under that nonce: the file is back where it was.
      expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('the notes');
      expect(trash(root)).toEqual([]);
      expect(exists(root, 'notes.txt')).toBe(true);
    });
  },
);
