/**
 * notes-server as a process whose stdout (the JSON-lines audit trail) is a
 * pipe nobody reads any more: audited requests fail closed with -32603 and
 * delete nothing, while requests that write no audit record keep being
 * answered; once the pipe is read again, the same confirmations delete once.
 * Before the fix the sink retried the full pipe with `Atomics.wait`, which
 * froze the whole server for about 5 seconds per record.
 */
import { randomBytes } from 'node:crypto';
import { callTool } from '@mrtr/spec-schema';
import { type ServerProcess, startServerProcess } from '@mrtr/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, confirm } from './confirm.js';

const TOKEN = 'tok-alice';
const AUDIT_FAILED = /^This request changed nothing: the audit trail could not be written/;
let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess(new URL('..', import.meta.url).pathname, {
    DATABASE_URL: 'memory://',
    PORT: '0',
    MRTR_TOKENS: `alice:${TOKEN}`,
    MRTR_SECRET: 's'.repeat(32),
  });
});
afterAll(() => {
  server?.child.kill();
});

/** A workspace of alice's own with one note titled "Dup" (notes_create writes no audit record). */
async function workspaceWithNote(): Promise<string> {
  const uri = `notes://stalled-${randomBytes(4).toString('hex')}`;
  const r = await callTool(server.url, TOKEN, 'notes_create', { workspaceUri: uri, title: 'Dup' });
  expect(r.body.result.isError).toBeFalsy();
  return uri;
}

const list = (uri: string) => callTool(server.url, TOKEN, 'notes_list', { workspaceUri: uri });
const noteCount = async (uri: string) =>
  ((await list(uri)).body.result.structuredContent.notes as unknown[]).length;

/** Round 1 of notes_delete (writes an `asked` record); the JSON-RPC body, never a transport error. */
const asked = (uri: string) =>
  callTool(server.url, TOKEN, 'notes_delete', { workspaceUri: uri, title: 'Dup' }).then(
    (r) => r.body,
  );

describe('notes-server with its audit trail on a stdout nobody reads', () => {
  it('fails audited requests closed, answers the others, deletes nothing; deletes once when read again', async () => {
    const confirmations = [];
    for (let i = 0; i < 3; i++) {
      const uri = await workspaceWithNote();
      confirmations.push({ uri, ...(await ask(server.url, TOKEN, uri)) });
    }
    const spare = await workspaceWithNote();

    // Stop reading: the pipe's buffer, then the server's own stdout buffer, fill up.
    server.child.stdout?.pause();
    let refused: any;
    for (let batch = 0; batch < 100 && !refused; batch++) {
      const bodies = await Promise.all(Array.from({ length: 20 }, () => asked(spare)));
      for (const body of bodies) expect(body.result ?? body.error).toBeDefined();
      refused = bodies.find((b) => b.error);
    }
    expect(refused?.error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(AUDIT_FAILED),
    });

    // Audited requests now wait for the trail (at most the sink's timeout) or fail at once;
    // meanwhile requests that write no record are answered, one after another.
    let settled = 0;
    const waiting = Array.from({ length: 5 }, () =>
      asked(spare).finally(() => {
        settled++;
      }),
    );
    for (let i = 0; i < 5; i++) expect(await noteCount(spare)).toBe(1);
    const settledWhileListing = settled;
    for (const body of await Promise.all(waiting))
      expect(body.error?.message).toMatch(AUDIT_FAILED);
    expect(settledWhileListing).toBe(0);

    // A confirmation fails closed at its `accepted` record: nothing is deleted.
    for (const { uri, requestState, candidates } of confirmations) {
      const body = await confirm(server.url, TOKEN, uri, requestState, candidates[0] as string);
      expect(body.error).toMatchObject({
        code: -32603,
        message: expect.stringMatching(AUDIT_FAILED),
      });
      expect(await noteCount(uri)).toBe(1);
    }

    // Read again: the trail drains and the same confirmations delete, once each.
    server.child.stdout?.resume();
    for (const { uri, requestState, candidates } of confirmations) {
      let body: any;
      for (let attempt = 0; attempt < 50; attempt++) {
        body = await confirm(server.url, TOKEN, uri, requestState, candidates[0] as string);
        if (body.result) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(body.result).toMatchObject({ isError: false });
      expect(await noteCount(uri)).toBe(0);
    }
    expect(server.child.exitCode).toBeNull();
  });
});
