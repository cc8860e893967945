/**
 * `mrtr` end to end in a real terminal (tmux) against a running notes server:
 * a person reads the question, chooses, reviews, confirms; declines; cancels.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { McpClient } from '@mrtr/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startNotesServer } from '../../notes-server/src/app.js';
import { type Database, openDatabase } from '../../notes-server/src/db.js';
import { askingServer } from './servers.js';
import { TmuxSession, tmuxAvailable } from './tmux.js';

const MAIN = join(import.meta.dirname, '../dist/main.js');
const TOKEN = 'tok-e2e-terminal';
const hasTmux = tmuxAvailable();

let db: Database;
let server: RunningServer;
let setup: McpClient;
const sessions: TmuxSession[] = [];

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`build mrtr first: ${MAIN} is missing`);
  db = await openDatabase('memory://');
  server = await startNotesServer({
    db,
    tokens: new Map([[TOKEN, 'local']]),
    secret: randomSecret(),
  });
  setup = new McpClient({ url: server.url, headers: { Authorization: `Bearer ${TOKEN}` } });
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

let seq = 0;
/** A workspace with two notes titled "Dup" (created in this order). */
async function workspace() {
  const uri = `notes://e2e-${++seq}`;
  const ids: string[] = [];
  for (const body of ['first body', 'second body']) {
    const { result } = await setup.callTool('notes_create', {
      workspaceUri: uri,
      title: 'Dup',
      body,
    });
    ids.push((result.structuredContent as { note: { id: string } }).note.id);
  }
  return { uri, ids };
}
const remaining = async (uri: string) =>
  (
    await db.query<{ id: string }>('SELECT id FROM notes WHERE workspace_uri = $1 ORDER BY id', [
      uri,
    ])
  ).rows.map((r) => r.id);

function mrtr(args: string[]): TmuxSession {
  const session = new TmuxSession([process.execPath, MAIN, ...args], {
    MRTR_TOKEN: TOKEN,
    NO_COLOR: '1',
  });
  sessions.push(session);
  return session;
}
const deleteIn = (uri: string, extra: string[] = []) =>
  mrtr([
    'call',
    server.url,
    'notes_delete',
    '--arg',
    `workspaceUri=${uri}`,
    '--arg',
    'title=Dup',
    ...extra,
  ]);

/**
 * The note ids of the open select, in the order the form offered them: its
 * option lines start with clack's radio marks (● ○), then the option's label,
 * which begins with the id (the message's own list uses •).
 */
function offered(screen: string): string[] {
  return [...screen.matchAll(/^\S\s+[●○]\s+(note-[0-9a-f]{10})\b/gm)].map((m) => m[1] as string);
}
/** An open (active) prompt: clack marks it ◆ (or * without Unicode); answered ones turn ◇. */
const active = (title: string) => new RegExp(`[◆*]  ${title.replace(/[?]/g, '\\?')}`);

describe.skipIf(!hasTmux)('mrtr in a terminal', () => {
  it('shows who asks and the message, lets the person choose, review, change, confirm, and deletes that note', async () => {
    const ws = await workspace();
    const t = deleteIn(ws.uri);
    let screen = await t.waitFor(active('What would you like to do?'));
    expect(screen).toContain(`Question from "mrtr-notes-server" (its own name) at ${server.url}`);
    expect(screen).toContain('asked while running tools/call notes_delete');
    expect(screen).toContain(
      `2 notes titled "Dup" are in "${ws.uri}". Choose the one to delete and confirm.`,
    );
    t.keys(['Enter']); // Answer

    screen = await t.waitFor(active('Note to delete'));
    const order = offered(screen);
    expect([...order].sort()).toEqual([...ws.ids].sort());
    t.keys(['Enter']); // the first offered note
    await t.waitFor(active('Yes, delete it permanently'));
    t.keys(['y']);

    screen = await t.waitFor(active('Send these answers?'));
    expect(screen).toMatch(new RegExp(`Note to delete: ${order[0]}`));
    expect(screen).toMatch(/Yes, delete it permanently: yes/);
    // Change the note before sending: the person reviews and corrects.
    t.keys(['Down', 'Enter']); // Change an answer
    await t.waitFor(active('Which answer?'));
    t.keys(['Enter']); // Note to delete
    await t.waitFor(active('Note to delete'));
    t.keys(['Down', 'Enter']); // the second offered note
    screen = await t.waitFor(active('Send these answers?'));
    expect(screen).toMatch(new RegExp(`Note to delete: ${order[1]}`));
    t.keys(['Enter']); // Send

    screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain(`Deleted ${order[1]} "Dup" from "${ws.uri}".`);
    expect(screen).toContain('[mrtr exited 0]');
    expect(await remaining(ws.uri)).toEqual([order[0]]);
  });

  it('declines: the server is told no and nothing is deleted', async () => {
    const ws = await workspace();
    const t = deleteIn(ws.uri);
    await t.waitFor(active('What would you like to do?'));
    t.keys(['Down', 'Enter']); // Decline
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain('Not deleted: the deletion was declined.');
    expect(screen).toContain('[mrtr exited 0]');
    expect(await remaining(ws.uri)).toEqual([...ws.ids].sort());
  });

  it('cancels from the menu: the answer is sent, nothing is deleted, exit 0 (the result is no error)', async () => {
    const ws = await workspace();
    const t = deleteIn(ws.uri);
    await t.waitFor(active('What would you like to do?'));
    t.keys(['Down', 'Down', 'Enter']); // Cancel
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain('The question was dismissed. This request deleted nothing.');
    expect(screen).toContain('[mrtr exited 0]');
    expect(await remaining(ws.uri)).toEqual([...ws.ids].sort());
  });

  it('cancels on Ctrl-C in the middle of the form: nothing is deleted, exit 130', async () => {
    const ws = await workspace();
    const t = deleteIn(ws.uri);
    await t.waitFor(active('What would you like to do?'));
    t.keys(['Enter']);
    await t.waitFor(active('Note to delete'));
    t.keys(['C-c']);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain('The question was dismissed. This request deleted nothing.');
    expect(screen).toContain('[mrtr exited 130]');
    expect(await remaining(ws.uri)).toEqual([...ws.ids].sort());
  });

  it('cancels a question left unanswered past --timeout', async () => {
    const ws = await workspace();
    const t = deleteIn(ws.uri, ['--timeout', '1']);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain(
      'No answer within 1 s: the question was cancelled, and a later answer is not sent.',
    );
    expect(screen).toContain('The question was dismissed. This request deleted nothing.');
    expect(await remaining(ws.uri)).toEqual([...ws.ids].sort());
  });

  it('exits non-zero on an isError result', async () => {
    const t = mrtr([
      'call',
      server.url,
      'notes_delete',
      '--arg',
      'workspaceUri=notes://nowhere',
      '--arg',
      'title=x',
    ]);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain('You are not a member of a workspace "notes://nowhere".');
    expect(screen).toContain('[mrtr exited 1]');
  });

  it('lists tools', async () => {
    const t = mrtr(['tools', server.url]);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toMatch(/"mrtr-notes-server" at .*: 3 tools/);
    expect(screen).toMatch(/notes_delete {2}Delete a note {2}\[destructive\]/);
    expect(screen).toContain('--arg workspaceUri=…  string, required');
    expect(screen).toContain('[mrtr exited 0]');
  });
});

describe.skipIf(!hasTmux)('mrtr and URL-mode questions', () => {
  it('shows the full URL and its host, and shows the link only after consent', async () => {
    const s = await askingServer({
      mode: 'url',
      message: 'Connect your calendar.',
      url: 'https://auth.example.com/connect?id=7',
    });
    try {
      const t = mrtr(['call', s.url, 'ask']);
      let screen = await t.waitFor(active('Go to this URL in your browser?'));
      expect(screen).toContain('Connect your calendar.');
      expect(screen).toContain('URL:  https://auth.example.com/connect?id=7');
      expect(screen).toContain('Host: auth.example.com');
      expect(screen).toContain(
        "the URL leads to auth.example.com, not to the MCP server's host 127.0.0.1",
      );
      expect(screen).not.toContain('Open this URL in your browser:');
      t.keys(['Enter']); // Open it
      screen = await t.waitFor(active('Continue once you have finished in the browser'));
      expect(screen).toMatch(
        /Open this URL in your browser:\n\S\s+https:\/\/auth\.example\.com\/connect\?id=7\n/,
      );
      t.keys(['Enter']); // Continue
      screen = await t.waitFor(/\[mrtr exited \d+\]/);
      expect(screen).toContain('got {"q":{"action":"accept"}} with st');
      expect(screen).toContain('declared {"form":{},"url":{}}');
      expect(screen).toContain('[mrtr exited 0]');
    } finally {
      await s.close();
    }
  });

  it('declares only URL elicitation with --elicitation url, and refuses an unknown mode (exit 2)', async () => {
    const s = await askingServer({
      mode: 'url',
      message: 'Approve on the page.',
      url: 'http://127.0.0.1:9/approve/x',
    });
    try {
      const t = mrtr(['call', s.url, 'ask', '--elicitation', 'url']);
      await t.waitFor(active('Go to this URL in your browser?'));
      t.keys(['Enter']); // Open it
      await t.waitFor(active('Continue once you have finished in the browser'));
      t.keys(['Enter']); // Continue
      const screen = await t.waitFor(/\[mrtr exited \d+\]/);
      expect(screen).toContain('declared {"url":{}}');
      expect(screen).toContain('[mrtr exited 0]');
      const bad = mrtr(['call', s.url, 'ask', '--elicitation', 'form,sms']);
      const refused = await bad.waitFor(/\[mrtr exited \d+\]/);
      expect(refused).toContain('must be form, url, or form,url');
      expect(refused).toContain('[mrtr exited 2]');
    } finally {
      await s.close();
    }
  });
});

describe.skipIf(!hasTmux)('mrtr form fields', () => {
  it('checks text length and format and number bounds as the person types, before anything is sent', async () => {
    const s = await askingServer({
      message: 'Tell us why.',
      requestedSchema: {
        type: 'object',
        properties: {
          reason: { type: 'string', title: 'Reason', minLength: 5, maxLength: 40 },
          email: { type: 'string', title: 'Email', format: 'email' },
          copies: { type: 'integer', title: 'Copies', minimum: 1, maximum: 3 },
        },
        required: ['reason', 'email'],
      },
    });
    try {
      const t = mrtr(['call', s.url, 'ask']);
      await t.waitFor(active('What would you like to do?'));
      t.keys(['Enter']);
      await t.waitFor(active('Reason'));
      t.keys(['no'], true);
      t.keys(['Enter']);
      await t.waitFor(/must be at least 5 characters/);
      t.keys([' thanks'], true);
      t.keys(['Enter']);
      await t.waitFor(active('Email'));
      t.keys(['bob'], true);
      t.keys(['Enter']);
      await t.waitFor(/must be an email address/);
      t.keys(['@example.com'], true);
      t.keys(['Enter']);
      let screen = await t.waitFor(active('Copies'));
      expect(screen).toMatch(/Copies \(optional\)/);
      t.keys(['7'], true);
      t.keys(['Enter']);
      await t.waitFor(/must be ≤ 3/);
      t.keys(['BSpace']);
      t.keys(['2'], true);
      t.keys(['Enter']);
      screen = await t.waitFor(active('Send these answers?'));
      expect(screen).toContain('Reason: no thanks');
      expect(screen).toContain('Email: bob@example.com');
      expect(screen).toContain('Copies: 2');
      t.keys(['Enter']);
      screen = await t.waitFor(/\[mrtr exited \d+\]/);
      expect(screen).toContain(
        'got {"q":{"action":"accept","content":{"reason":"no thanks","email":"bob@example.com","copies":2}}} with st',
      );
    } finally {
      await s.close();
    }
  });
});

describe('mrtr without a terminal', () => {
  it('declares no elicitation when stdin is not a terminal, so a gated tool is refused: nobody to ask', async () => {
    const ws = await workspace();
    // Asynchronously: the notes server answering it runs in this process.
    const child = spawn(
      process.execPath,
      [
        MAIN,
        'call',
        server.url,
        'notes_delete',
        '--arg',
        `workspaceUri=${ws.uri}`,
        '--arg',
        'title=Dup',
      ],
      { env: { ...process.env, MRTR_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const r = { status, stderr };
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'The server needs a client that can ask you questions {"elicitation":{"form":{}}}',
    );
    expect(r.stderr).toContain('mrtr only answers questions when run in a terminal');
    expect(await remaining(ws.uri)).toEqual([...ws.ids].sort());
  });
});
