/**
 * The notes server driven by the official client, `@modelcontextprotocol/client`, over
 * real HTTP (protocol 2026-07-28, MRTR auto-fulfilment). Each test checks what is left in
 * the database, not only what was answered.
 */
import { randomBytes } from 'node:crypto';
import {
  Client,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { validatingFetch, wireLog } from '@mrtr/spec-schema';
import { fieldOptions } from '@mrtr/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const wire = wireLog();

import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';

type FormParams = {
  mode?: string;
  message: string;
  requestedSchema: { properties: { note_id?: { enum?: string[] } } };
};
type Person = (params: FormParams) => ElicitResult | Promise<ElicitResult>;

let db: Database;
let server: RunningServer;
const clients: Client[] = [];

beforeAll(async () => {
  db = await openDatabase('memory://');
  server = await startNotesServer({
    db,
    tokens: new Map([
      ['tok-alice', 'alice'],
      ['tok-bob', 'bob'],
    ]),
    secret: randomSecret(),
    port: 0,
  });
});

afterAll(async () => {
  // Every message the official client and our server exchanged is valid 2026-07-28.
  expect(wire.violations).toEqual([]);
  expect(wire.checked).toBeGreaterThan(20);
  for (const client of clients) await client.close();
  await server?.close();
  await db?.close();
});

/**
 * A connected client for `token`. With `person`, it declares form elicitation and answers
 * each form with `person`; without it, it declares no elicitation and registers no handler.
 */
async function connect(token: string, person?: Person): Promise<Client> {
  const client = new Client(
    { name: 'official-client-test', version: '0.0.0' },
    {
      capabilities: person ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  if (person) {
    client.setRequestHandler('elicitation/create', async (request) =>
      person(request.params as FormParams),
    );
  }
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: validatingFetch(wire),
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A new workspace of alice's with three notes titled "Dup"; returns its URI and note ids. */
async function dupWorkspace(): Promise<{ uri: string; ids: string[] }> {
  const uri = `notes://t-${randomBytes(6).toString('hex')}`;
  const alice = await connect('tok-alice');
  const ids: string[] = [];
  for (const body of ['first', 'second', 'third']) {
    const result = await alice.callTool({
      name: 'notes_create',
      arguments: { workspaceUri: uri, title: 'Dup', body },
    });
    expect(result.isError).toBeFalsy();
    ids.push((result.structuredContent as { note: { id: string } }).note.id);
  }
  return { uri, ids };
}

/** The ids of the notes of `uri` in the database, sorted. */
async function idsIn(uri: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM notes WHERE workspace_uri = $1 ORDER BY id',
    [uri],
  );
  return rows.map((r) => r.id);
}

const deleteDup = (client: Client, uri: string) =>
  client.callTool({ name: 'notes_delete', arguments: { workspaceUri: uri, title: 'Dup' } });

describe('notes_delete with the official client', () => {
  it('deletes exactly the note the person chose and confirmed', async () => {
    const { uri, ids } = await dupWorkspace();
    let chosen: string | undefined;
    const alice = await connect('tok-alice', ({ requestedSchema }) => {
      chosen = fieldOptions(requestedSchema.properties.note_id)[0];
      return { action: 'accept', content: { note_id: chosen as string, confirm: true } };
    });

    const result = await deleteDup(alice, uri);

    expect(result.isError).toBeFalsy();
    expect(chosen).toBeDefined();
    expect(result.structuredContent).toMatchObject({ deleted: { id: chosen, workspaceUri: uri } });
    expect(await idsIn(uri)).toEqual(ids.filter((id) => id !== chosen).sort());
    const listed = await alice.callTool({ name: 'notes_list', arguments: { workspaceUri: uri } });
    const left = (listed.structuredContent as { notes: { id: string; title: string }[] }).notes;
    expect(left.map((n) => n.title)).toEqual(['Dup', 'Dup']);
    expect(left.map((n) => n.id)).not.toContain(chosen);
  });

  it('offers exactly the matching notes of the workspace as candidates', async () => {
    const { uri } = await dupWorkspace();
    const seen: FormParams[] = [];
    const alice = await connect('tok-alice', (params) => {
      seen.push(params);
      return { action: 'decline' };
    });
    // A note with another title in the same workspace is not a candidate.
    await alice.callTool({
      name: 'notes_create',
      arguments: { workspaceUri: uri, title: 'Other', body: 'not a Dup' },
    });

    await deleteDup(alice, uri);

    expect(seen).toHaveLength(1);
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM notes WHERE workspace_uri = $1 AND title = $2',
      [uri, 'Dup'],
    );
    const offered = fieldOptions(seen[0]?.requestedSchema.properties.note_id) ?? [];
    expect([...offered].sort()).toEqual(rows.map((r) => r.id).sort());
    expect(offered).toHaveLength(3);
  });

  it('deletes nothing when the person declines', async () => {
    const { uri, ids } = await dupWorkspace();
    const alice = await connect('tok-alice', () => ({ action: 'decline' }));

    const result = await deleteDup(alice, uri);

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([expect.objectContaining({ type: 'text' })]);
    expect(await idsIn(uri)).toEqual([...ids].sort());
  });

  it('deletes nothing when the person accepts without confirming', async () => {
    const { uri, ids } = await dupWorkspace();
    const alice = await connect('tok-alice', ({ requestedSchema }) => ({
      action: 'accept',
      content: {
        note_id: fieldOptions(requestedSchema.properties.note_id)[0] as string,
        confirm: false,
      },
    }));

    const result = await deleteDup(alice, uri);

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toBeUndefined();
    expect(await idsIn(uri)).toEqual([...ids].sort());
  });

  it('refuses a client without form elicitation with -32021 and deletes nothing', async () => {
    const { uri, ids } = await dupWorkspace();
    const alice = await connect('tok-alice');

    const error = await deleteDup(alice, uri).then(
      () => undefined,
      (e: unknown) => e as { code?: unknown; data?: { requiredCapabilities?: unknown } },
    );

    expect(error).toBeDefined();
    expect(error?.code).toBe(-32021);
    expect(error?.data?.requiredCapabilities).toEqual({ elicitation: { form: {} } });
    expect(await idsIn(uri)).toEqual([...ids].sort());
  });

  it("does not let bob delete a note in alice's workspace", async () => {
    const uri = `notes://alice-only-${randomBytes(6).toString('hex')}`;
    const alice = await connect('tok-alice');
    const created = await alice.callTool({
      name: 'notes_create',
      arguments: { workspaceUri: uri, title: 'Private', body: 'alice only' },
    });
    expect(created.isError).toBeFalsy();
    const noteId = (created.structuredContent as { note: { id: string } }).note.id;

    let asked = 0;
    const bob = await connect('tok-bob', ({ requestedSchema }) => {
      asked++;
      return {
        action: 'accept',
        content: {
          note_id: fieldOptions(requestedSchema.properties.note_id)[0] ?? noteId,
          confirm: true,
        },
      };
    });
    const result = await bob.callTool({
      name: 'notes_delete',
      arguments: { workspaceUri: uri, title: 'Private' },
    });

    expect(result.isError).toBe(true);
    expect(asked).toBe(0);
    expect(await idsIn(uri)).toEqual([noteId]);
  });
});
