/**
 * The notes server on the official SDK (`sdk-app.ts`, `pnpm start:sdk`):
 * the same tools as the `@mrtr/server` entry, the same `notes_delete`
 * declaration, for the official client on 2026-07-28 and on the 2025-era
 * default; two entry points on one database share one replay ledger.
 */
import type { ChildProcess } from 'node:child_process';
import {
  Client,
  type ElicitRequestFormParams,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { callTool } from '@mrtr/spec-schema';
import { startServerProcess } from '@mrtr/test-services';
import { fieldOptions } from '@mrtr/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { DEMO_WORKSPACE } from '../src/notes.js';
import { startNotesSdkServer } from '../src/sdk-app.js';

type Era = 'modern' | 'legacy';
type Person = (params: ElicitRequestFormParams) => ElicitResult;

const tokens = new Map([
  ['tok-alice', 'alice'],
  ['tok-bob', 'bob'],
]);
let db: Database;
let ours: RunningServer;
let sdk: RunningServer;
const clients: Client[] = [];

beforeAll(async () => {
  db = await openDatabase('memory://');
  const secret = randomSecret();
  ours = await startNotesServer({ db, tokens, secret, port: 0 });
  sdk = await startNotesSdkServer({ db, tokens, secret, port: 0 });
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await sdk?.close();
  await ours?.close();
  await db?.close();
});

async function connect(url: string, token: string, era: Era, person?: Person): Promise<Client> {
  const client = new Client(
    { name: 'notes-sdk-test', version: '0.0.0' },
    {
      capabilities: person ? { elicitation: { form: {} } } : {},
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  );
  if (person)
    client.setRequestHandler('elicitation/create', async (r) =>
      r.params.mode === 'url' ? { action: 'decline' } : person(r.params),
    );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** A workspace of alice's with three notes titled "Dup", made through `client`; their ids. */
async function dupWorkspace(client: Client) {
  const uri = `notes://sdk-${crypto.randomUUID().slice(0, 8)}`;
  for (const body of ['one', 'two', 'three'])
    await client.callTool({
      name: 'notes_create',
      arguments: { workspaceUri: uri, title: 'Dup', body },
    });
  return uri;
}

const idsIn = async (uri: string) =>
  (await db.query<{ id: string }>('SELECT id FROM notes WHERE workspace_uri = $1', [uri])).rows
    .map((r) => r.id)
    .sort();

const choose =
  (pick: number): Person =>
  ({ requestedSchema }) => ({
    action: 'accept',
    content: {
      note_id: fieldOptions(requestedSchema.properties.note_id as never)?.[pick] as string,
      confirm: true,
    },
  });

describe('the notes server on the SDK', () => {
  it('lists the same notes_delete as the @mrtr/server entry', async () => {
    const mine = (await (await connect(ours.url, 'tok-alice', 'modern')).listTools()).tools;
    const theirs = (await (await connect(sdk.url, 'tok-alice', 'modern')).listTools()).tools;
    expect(theirs.map((t) => t.name).sort()).toEqual(mine.map((t) => t.name).sort());
    const pick = (tools: typeof mine) => {
      const { name, title, description, inputSchema, annotations } =
        tools.find((t) => t.name === 'notes_delete') ?? {};
      return { name, title, description, inputSchema, annotations };
    };
    expect(pick(theirs)).toEqual(pick(mine));
  });

  it.each([
    'modern',
    'legacy',
  ] as const)('on %s, deletes the note the person chose; a decline deletes nothing', async (era) => {
    const seen: string[] = [];
    const alice = await connect(sdk.url, 'tok-alice', era, (params) => {
      seen.push(params.message);
      return choose(1)(params);
    });
    const uri = await dupWorkspace(alice);
    const before = await idsIn(uri);
    const done = await alice.callTool({
      name: 'notes_delete',
      arguments: { workspaceUri: uri, title: 'Dup' },
    });
    const deleted = (done.structuredContent as { deleted: { id: string } }).deleted.id;
    expect(seen[0]).toMatch(/^3 notes titled "Dup"/);
    expect(await idsIn(uri)).toEqual(before.filter((id) => id !== deleted));
    const decliner = await connect(sdk.url, 'tok-alice', era, () => ({ action: 'decline' }));
    const declined = await decliner.callTool({
      name: 'notes_delete',
      arguments: { workspaceUri: uri, title: 'Dup' },
    });
    expect(declined.content).toEqual([
      { type: 'text', text: 'Not deleted: the deletion was declined. Nothing was changed.' },
    ]);
    expect(await idsIn(uri)).toHaveLength(2);
  });

  it("bob cannot delete in alice's workspace, in either era", async () => {
    const uri = await dupWorkspace(await connect(sdk.url, 'tok-alice', 'modern'));
    for (const era of ['modern', 'legacy'] as const) {
      const bob = await connect(sdk.url, 'tok-bob', era, choose(0));
      const refused = await bob.callTool({
        name: 'notes_delete',
        arguments: { workspaceUri: uri, title: 'Dup' },
      });
      expect(refused.isError).toBe(true);
      expect(refused.content).toEqual([
        { type: 'text', text: `You are not a member of a workspace "${uri}".` },
      ]);
    }
    expect(await idsIn(uri)).toHaveLength(3);
  });

  it('a confirmation asked on one entry point is used once, whichever entry point presents it', async () => {
    const uri = await dupWorkspace(await connect(ours.url, 'tok-alice', 'modern'));
    const args = { workspaceUri: uri, title: 'Dup' };
    const asked = (await callTool(ours.url, 'tok-alice', 'notes_delete', args)).body.result;
    const [noteId, other] = fieldOptions(
      asked.inputRequests.delete_choice.params.requestedSchema.properties.note_id,
    ) as string[];
    const answer = (id: string | undefined) => ({
      requestState: asked.requestState,
      inputResponses: {
        delete_choice: { action: 'accept', content: { note_id: id, confirm: true } },
      },
    });
    const first = (await callTool(sdk.url, 'tok-alice', 'notes_delete', args, answer(noteId))).body;
    expect(first.result.structuredContent.deleted.id).toBe(noteId);
    // The same ticket again, as it was and with the other note, on both entry points: nothing more.
    for (const url of [ours.url, sdk.url])
      for (const id of [noteId, other]) {
        const again = (await callTool(url, 'tok-alice', 'notes_delete', args, answer(id))).body;
        expect(again.result.structuredContent?.deleted?.id ?? noteId).toBe(noteId);
      }
    expect(await idsIn(uri)).toHaveLength(2);
  });
});

describe('pnpm start:sdk', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill();
  });

  it('serves both eras from src/sdk-main.ts', async () => {
    const server = await startServerProcess(
      new URL('..', import.meta.url).pathname,
      {
        DATABASE_URL: 'memory://',
        PORT: '0',
        MRTR_TOKENS: 'alice:tok-alice',
        MRTR_SECRET: 'x'.repeat(32),
        MRTR_AUDIT_TABLE: 'off',
      },
      'src/sdk-main.ts',
    );
    child = server.child;
    expect(server.stdout()).toMatch(/SDK bridge/);
    for (const era of ['legacy', 'modern'] as const) {
      const alice = await connect(server.url, 'tok-alice', era, choose(0));
      const done = await alice.callTool({
        name: 'notes_delete',
        arguments: { workspaceUri: DEMO_WORKSPACE, title: 'Meeting notes' },
      });
      expect(done.isError).toBe(false);
    }
    const outcomes = server
      .stdout()
      .split('\n')
      .filter((l) => l.includes('"mrtr.audit"'))
      .map((l) => JSON.parse(l).outcome);
    expect(outcomes).toEqual(['asked', 'accepted', 'completed', 'asked', 'accepted', 'completed']);
  });
});
