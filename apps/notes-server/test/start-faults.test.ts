/**
 * The notes server on PostgreSQL behind a proxy that keeps back or cuts
 * PostgreSQL's answers (`pg-proxy.ts` of example-kit's tests): every
 * start-up migration (the notes tables, `mrtr_replay`, `mrtr_audit`, the
 * approval tables) that stalls past the deadline or loses its connection
 * after the `SELECT 1` probe answered is told on stderr and run again, and
 * the server starts; it used to fail with "This request changed nothing: the
 * database did not answer in time" (`notes-server failed to start`, exit 1).
 */
import { callTool } from '@mrtr/spec-schema';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { PgFaultProxy, startThroughFaults } from '../../example-kit/test/pg-proxy.js';
import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { DEMO_WORKSPACE } from '../src/notes.js';

const reachable = await postgresReachable();
const TOKEN = 'tok-alice';
const schema = `notes_start_faults_${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(!reachable)(
  'notes-server when PostgreSQL stalls or drops the connection at start',
  () => {
    let proxy: PgFaultProxy | undefined;
    let db: Database | undefined;
    let server: RunningServer | undefined;

    afterAll(async () => {
      await server?.close();
      await db?.close().catch(() => {});
      await proxy?.refuse();
      await dropSchema(schema);
    });

    it('waits for each start-up migration the database stalls or drops, then serves', async () => {
      proxy = new PgFaultProxy(POSTGRES_URL);
      await proxy.start();
      const database = await openDatabase(proxy.url(POSTGRES_URL), {
        searchPath: schema,
        timeoutMs: 400,
      });
      db = database;
      const stalled = ['mrtr-notes-server-migrate', 'mrtr-audit-migrate'];
      const dropped = ['mrtr-replay-migrate:"mrtr_replay"', 'mrtr-approvals-migrate'];
      ({ started: server } = await startThroughFaults(
        proxy,
        {
          stalled,
          dropped,
          steps: [
            'migrating the notes tables',
            'migrating mrtr_replay',
            'migrating mrtr_audit',
            'migrating the approval tables',
          ],
        },
        () =>
          startNotesServer({
            db: database,
            tokens: new Map([[TOKEN, 'alice']]),
            secret: randomSecret(),
            auditTable: true,
          }),
      ));
      // The demo workspace was seeded once, by the run that committed.
      const listed = await callTool(server.url, TOKEN, 'notes_list', {
        workspaceUri: DEMO_WORKSPACE,
      });
      expect(listed.body.result?.isError).toBe(false);
      expect(listed.body.result.structuredContent.notes).toHaveLength(4);
    });
  },
);
