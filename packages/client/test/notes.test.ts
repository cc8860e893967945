/** @mrtr/client against the real notes server (in-process, in-memory PGlite), every rule over real HTTP. */
import { readFileSync } from 'node:fs';
import { validatingFetch, wireLog } from '@mrtr/spec-schema';
import { fieldOptions } from '@mrtr/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningServer,
  randomSecret,
  startNotesServer,
} from '../../../apps/notes-server/src/app.js';
import { type Database, openDatabase } from '../../../apps/notes-server/src/db.js';
import { type FormQuestion, InvalidAnswerError, JsonRpcError, McpClient } from '../src/index.js';
import { scriptedAnswerer } from './helpers.js';

/** The version the default clientInfo must name: this package's own. */
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

const TOKEN = 'tok-client-test';
let db: Database;
let server: RunningServer;
/** Every request the client sent and every response body, in order. */
const wire: { headers: Headers; body: any; response: any }[] = [];

const schemaLog = wireLog();
/** Records each exchange, after checking every message against the official schema.json. */
const recordingFetch: typeof fetch = async (input, init) => {
  const response = await validatingFetch(schemaLog)(input, init);
  const text = await response.clone().text();
  wire.push({
    headers: new Headers(init?.headers),
    body: JSON.parse(String(init?.body)),
    response: text ? JSON.parse(text) : undefined,
  });
  return response;
};

beforeAll(async () => {
  db = await openDatabase('memory://');
  server = await startNotesServer({
    db,
    tokens: new Map([[TOKEN, 'alice']]),
    secret: randomSecret(),
  });
});
afterAll(async () => {
  // Every message @mrtr/client and the notes server exchanged is valid 2026-07-28.
  expect(schemaLog.violations).toEqual([]);
  expect(schemaLog.checked).toBeGreaterThan(20);
  await server?.close();
  await db?.close();
});

let seq = 0;
/** A fresh workspace with three notes titled "Dup"; returns its URI and their ids. */
async function workspace(client: McpClient) {
  const uri = `notes://client-${++seq}`;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { result } = await client.callTool('notes_create', {
      workspaceUri: uri,
      title: 'Dup',
      body: `body ${i}`,
    });
    ids.push((result.structuredContent as any).note.id);
  }
  return { uri, ids };
}
const remaining = async (uri: string) =>
  (await db.query<{ id: string }>('SELECT id FROM notes WHERE workspace_uri = $1', [uri])).rows.map(
    (r) => r.id,
  );

function client(answerer?: Parameters<typeof scriptedAnswerer>[0]) {
  const scripted = scriptedAnswerer(answerer ?? []);
  const c = new McpClient({
    url: server.url,
    headers: { Authorization: `Bearer ${TOKEN}` },
    fetch: recordingFetch,
    ...(answerer ? { answerer: scripted.answerer } : {}),
  });
  return { client: c, questions: scripted.questions };
}

/** Pick the `n`-th offered note and confirm. */
const choose =
  (n: number, confirm = true) =>
  async (q: FormQuestion) => {
    const options = fieldOptions(q.requestedSchema.properties.note_id);
    return { action: 'accept' as const, content: { note_id: options[n] as string, confirm } };
  };

describe('@mrtr/client against the notes server', () => {
  it('discovers the server and lists its tools', async () => {
    const { client: c } = client();
    await c.discover();
    expect(c.server.name).toBe('mrtr-notes-server');
    expect(c.server.url).toBe(server.url);
    const { tools, rejected } = await c.listTools();
    expect(tools.map((t) => t.name)).toContain('notes_delete');
    expect(rejected).toEqual([]);
  });

  it('deletes the note the person chose, in two requests that follow every MRTR rule', async () => {
    const { client: c, questions } = client([choose(1)]);
    const ws = await workspace(c);
    wire.length = 0;
    const out = await c.callTool('notes_delete', { workspaceUri: ws.uri, title: 'Dup' });
    expect(out.result.isError).toBe(false);
    expect(out.rounds).toBe(2);
    const asked = questions[0] as FormQuestion;
    const chosen = fieldOptions(asked.requestedSchema.properties.note_id)[1];
    expect(out.result.content[0]?.text).toContain(`Deleted ${chosen}`);
    expect((await remaining(ws.uri)).sort()).toEqual(ws.ids.filter((id) => id !== chosen).sort());

    const [first, retry] = wire;
    if (!first || !retry) throw new Error('expected two requests');
    // A new JSON-RPC id; the same params; requestState exactly as received; responses under the same keys.
    expect(retry.body.id).not.toBe(first.body.id);
    const { inputResponses, requestState, ...same } = retry.body.params;
    expect(same).toEqual(first.body.params);
    expect('requestState' in first.body.params).toBe(false);
    expect('inputResponses' in first.body.params).toBe(false);
    expect(requestState).toBe(first.response.result.requestState);
    expect(Object.keys(inputResponses)).toEqual(Object.keys(first.response.result.inputRequests));
    // Headers and _meta on both.
    for (const { headers, body } of [first, retry]) {
      expect(headers.get('mcp-protocol-version')).toBe('2026-07-28');
      expect(headers.get('mcp-method')).toBe('tools/call');
      expect(headers.get('mcp-name')).toBe('notes_delete');
      expect(body.params._meta['io.modelcontextprotocol/clientCapabilities']).toEqual({
        elicitation: { form: {} },
      });
      expect(body.params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
      expect(body.params._meta['io.modelcontextprotocol/clientInfo']).toEqual({
        name: '@mrtr/client',
        version: PACKAGE_VERSION,
      });
    }
    // The question names the server and carries the server's message verbatim.
    const form = first.response.result.inputRequests.delete_choice.params;
    expect(asked.message).toBe(form.message);
    expect(asked.server.url).toBe(server.url);
  });

  it('deletes nothing on decline or cancel', async () => {
    const { client: c } = client([{ action: 'decline' }, { action: 'cancel' }]);
    const ws = await workspace(c);
    const declined = await c.callTool('notes_delete', { workspaceUri: ws.uri, title: 'Dup' });
    expect(declined.result.content[0]?.text).toMatch(/declined/);
    const cancelled = await c.callTool('notes_delete', { workspaceUri: ws.uri, title: 'Dup' });
    expect(cancelled.result.content[0]?.text).toMatch(/dismissed/);
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('without an answerer declares no elicitation, and the server refuses with -32021', async () => {
    const { client: c } = client();
    const ws = await workspace(c);
    const error = await c
      .callTool('notes_delete', { workspaceUri: ws.uri, title: 'Dup' })
      .catch((e) => e);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.rpcCode).toBe(-32021);
    expect(error.data.requiredCapabilities).toEqual({ elicitation: { form: {} } });
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('sends nothing the schema rejects: an id that was not offered never reaches the server', async () => {
    const bad = async () => ({
      action: 'accept' as const,
      content: { note_id: 'note-forged', confirm: true },
    });
    const { client: c } = client([bad, bad, bad]);
    const ws = await workspace(c);
    wire.length = 0;
    await expect(
      c.callTool('notes_delete', { workspaceUri: ws.uri, title: 'Dup' }),
    ).rejects.toBeInstanceOf(InvalidAnswerError);
    expect(wire).toHaveLength(1);
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('a confirm of false is sent as given, and the server deletes nothing', async () => {
    const { client: c } = client([choose(0, false)]);
    const ws = await workspace(c);
    const out = await c.callTool('notes_delete', { workspaceUri: ws.uri, title: 'Dup' });
    expect(out.result.isError === true || !/Deleted/.test(out.result.content[0]?.text ?? '')).toBe(
      true,
    );
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('cancels on timeout; the server deletes nothing', async () => {
    const never = (q: FormQuestion) =>
      new Promise<never>((_, reject) =>
        q.signal.addEventListener('abort', () => reject(new Error('closed'))),
      );
    const scripted = scriptedAnswerer([never]);
    const c = new McpClient({
      url: server.url,
      headers: { Authorization: `Bearer ${TOKEN}` },
      fetch: recordingFetch,
      answerer: scripted.answerer,
      answerTimeoutMs: 50,
    });
    const ws = await workspace(c);
    const out = await c.callTool('notes_delete', { workspaceUri: ws.uri, title: 'Dup' });
    expect(out.events).toContainEqual(
      expect.objectContaining({ type: 'timed-out', key: 'delete_choice', afterMs: 50, round: 1 }),
    );
    expect(out.result.content[0]?.text).toMatch(/dismissed/);
    expect(await remaining(ws.uri)).toHaveLength(3);
  });

  it('sends a non-ASCII tool name with the Base64 sentinel, which the server decodes and matches', async () => {
    const { client: c } = client();
    wire.length = 0;
    const error = await c.callTool('notes_dëlete', {}).catch((e) => e);
    expect(wire[0]?.headers.get('mcp-name')).toMatch(/^=\?base64\?.+\?=$/);
    // Not -32020 HeaderMismatch: the header matched the body; the tool is simply unknown.
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.rpcCode).not.toBe(-32020);
  });
});
