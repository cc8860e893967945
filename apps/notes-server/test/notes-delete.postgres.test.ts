import { MemoryReplayStore } from '@mrtr/replay';
import { callTool } from '@mrtr/spec-schema';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { fieldOptions } from '@mrtr/wire';
import { afterAll, describe, expect, it } from 'vitest';
import { randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';

const reachable = await postgresReachable();
const schema = `notes_test_${process.pid}_${Date.now().toString(36)}`;
const opened: Database[] = [];

afterAll(async () => {
  for (const db of opened) await db.close();
  if (reachable) await dropSchema(schema);
});

describe.skipIf(!reachable)('notes server on a PostgreSQL server', () => {
  it('two instances with separate pools race 20 copies of one confirmation: exactly one deletion', async () => {
    const tokens = new Map([['tok-alice', 'alice']]);
    const secret = randomSecret();
    const store = new MemoryReplayStore();
    const dbA = await openDatabase(POSTGRES_URL, { searchPath: schema });
    opened.push(dbA);
    const a = await startNotesServer({ db: dbA, tokens, secret, store });
    const dbB = await openDatabase(POSTGRES_URL, { searchPath: schema });
    opened.push(dbB);
    const b = await startNotesServer({ db: dbB, tokens, secret, store });
    try {
      const seeded = await dbA.query<{ id: string }>(
        "SELECT id FROM notes WHERE workspace_uri = 'notes://team' AND title = 'Meeting notes'",
      );
      expect(seeded.rows).toHaveLength(3);
      const args = { workspaceUri: 'notes://team', title: 'Meeting notes' };
      const first = await callTool(a.url, 'tok-alice', 'notes_delete', args);
      const { requestState, inputRequests } = first.body.result;
      const candidates: string[] = fieldOptions(
        inputRequests.delete_choice.params.requestedSchema.properties.note_id,
      );
      expect([...candidates].sort()).toEqual(seeded.rows.map((r) => r.id).sort());
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          callTool(i % 2 ? a.url : b.url, 'tok-alice', 'notes_delete', args, {
            inputResponses: {
              delete_choice: {
                action: 'accept',
                content: { note_id: candidates[i % 3], confirm: true },
              },
            },
            requestState,
          }),
        ),
      );
      const left = await dbB.query<{ id: string }>(
        "SELECT id FROM notes WHERE workspace_uri = 'notes://team' AND title = 'Meeting notes'",
      );
      expect(left.rows).toHaveLength(2);
      // identical copies that arrive after the deletion get its recorded outcome back; nothing else deletes
      const reported = new Set(
        responses.flatMap((r) => r.body.result?.structuredContent?.deleted?.id ?? []),
      );
      expect(reported.size).toBe(1);
      expect(left.rows.map((r) => r.id)).not.toContain([...reported][0]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
