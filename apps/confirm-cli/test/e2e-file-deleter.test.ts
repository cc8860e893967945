/**
 * The client side of a file deleter in a real terminal (tmux): `mrtr` against a
 * scripted `delete_file` that asks its DeleteConfirmation form and
 * deletes only on a valid accept whose typed path matches. What the server
 * received is recorded, so each test can show what was (not) sent.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listenJsonRpc } from './servers.js';
import { TmuxSession, tmuxAvailable } from './tmux.js';

const MAIN = join(import.meta.dirname, '../dist/main.js');
const hasTmux = tmuxAvailable();
if (!existsSync(MAIN)) throw new Error(`build mrtr first: ${MAIN} is missing`);

/** The file deleter's DeleteConfirmation form, as the elicitation `requestedSchema`. */
const deleteConfirmation = {
  type: 'object',
  properties: {
    confirm_name: { type: 'string', title: 'Type the file path to confirm' },
    reason: { type: 'string', title: 'Reason', minLength: 5, maxLength: 200 },
    keep_backup: { type: 'boolean', title: 'Keep a .bak copy', default: false },
  },
  required: ['confirm_name', 'reason'],
};

const closers: (() => Promise<unknown>)[] = [];
const sessions: TmuxSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** `delete_file {path}` asking `schema` under key `confirm`; records every inputResponses it got. */
async function fileDeleter(schema: Record<string, unknown> = deleteConfirmation) {
  const received: unknown[] = [];
  const deleted: string[] = [];
  const server = await listenJsonRpc(({ id, method, params }) => {
    const text = (t: string) => ({
      resultType: 'complete',
      content: [{ type: 'text', text: t }],
    });
    let result: Record<string, unknown>;
    if (method === 'server/discover') {
      result = {
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {} },
      };
    } else if (method === 'tools/list') {
      const inputSchema = { type: 'object', properties: { path: { type: 'string' } } };
      result = { resultType: 'complete', tools: [{ name: 'delete_file', inputSchema }] };
    } else if (!params.inputResponses) {
      const message = `Confirm deletion of ${params.arguments.path} (2.3 KB, modified 2026-10-05 14:30)`;
      result = {
        resultType: 'input_required',
        inputRequests: {
          confirm: {
            method: 'elicitation/create',
            params: { mode: 'form', message, requestedSchema: schema },
          },
        },
        requestState: 'ticket',
      };
    } else {
      const answer = params.inputResponses.confirm;
      received.push(params.inputResponses);
      if (answer?.action !== 'accept') result = text(`Not deleted: ${answer?.action}`);
      else if (answer.content.confirm_name !== params.arguments.path)
        result = text('Not deleted: the typed path does not match');
      else {
        deleted.push(params.arguments.path);
        result = text(`Deleted ${params.arguments.path} (${JSON.stringify(answer.content)})`);
      }
    }
    return JSON.stringify({ jsonrpc: '2.0', id, result });
  });
  closers.push(server.close);
  return { url: server.url, received, deleted };
}

function mrtr(args: string[]): TmuxSession {
  const session = new TmuxSession([process.execPath, MAIN, ...args], { NO_COLOR: '1' });
  sessions.push(session);
  return session;
}
const active = (title: string) => new RegExp(`[◆*]  ${title.replace(/[?.]/g, '\\$&')}`);
const EXITED = /\[mrtr exited \d+\]/;

describe.skipIf(!hasTmux)('mrtr and a file deleter', () => {
  it('checks the answer against the schema before sending it, and says why it is refused', async () => {
    const s = await fileDeleter();
    const t = mrtr(['call', s.url, 'delete_file', '--arg', 'path=notes.txt']);
    let screen = await t.waitFor(active('What would you like to do?'));
    expect(screen).toContain('Confirm deletion of notes.txt (2.3 KB, modified 2026-10-05 14:30)');
    t.keys(['Enter']);
    await t.waitFor(active('Type the file path to confirm'));
    t.keys(['notes.txt'], true);
    t.keys(['Enter']);
    await t.waitFor(active('Reason'));
    t.keys(['old'], true);
    t.keys(['Enter']);
    await t.waitFor(/must be at least 5 characters/);
    expect(s.received).toEqual([]); // nothing was sent
    t.keys([' logs'], true);
    t.keys(['Enter']);
    screen = await t.waitFor(active('Keep a .bak copy'));
    t.keys(['Enter']); // the default: no
    screen = await t.waitFor(active('Send these answers?'));
    expect(screen).toContain('Reason: old logs');
    expect(screen).toContain('Keep a .bak copy: no');
    t.keys(['Enter']);
    screen = await t.waitFor(EXITED);
    expect(screen).toContain('[mrtr exited 0]');
    expect(s.received).toEqual([
      {
        confirm: {
          action: 'accept',
          content: { confirm_name: 'notes.txt', reason: 'old logs', keep_backup: false },
        },
      },
    ]);
    expect(s.deleted).toEqual(['notes.txt']);
  });

  it('cancels an unanswered question at --timeout and sends nothing typed after it', async () => {
    const s = await fileDeleter();
    const t = mrtr(['call', s.url, 'delete_file', '--arg', 'path=notes.txt', '--timeout', '2']);
    await t.waitFor(active('What would you like to do?'));
    t.keys(['Enter']);
    await t.waitFor(active('Type the file path to confirm'));
    t.keys(['notes.txt'], true); // the person starts, then walks away
    let screen = await t.waitFor(EXITED);
    expect(screen).toContain('No answer within 2 s: the question was cancelled');
    expect(screen).toContain('Not deleted: cancel');
    expect(screen).toContain('[mrtr exited 0]');
    // The rest of the answer arrives late: there is nothing left to send it to.
    t.keys(['Enter']);
    t.keys(['old logs'], true);
    t.keys(['Enter', 'Enter', 'Enter']);
    await new Promise((r) => setTimeout(r, 500));
    screen = t.screen();
    expect(s.received).toEqual([{ confirm: { action: 'cancel' } }]);
    expect(s.deleted).toEqual([]);
  });

  it('declines a form it cannot draw without asking, and prints what it declined and why', async () => {
    const nested = {
      type: 'object',
      properties: { target: { type: 'object', properties: { path: { type: 'string' } } } },
    };
    const s = await fileDeleter(nested);
    const t = mrtr(['call', s.url, 'delete_file', '--arg', 'path=notes.txt']);
    const screen = await t.waitFor(EXITED);
    expect(screen).toContain('cannot show faithfully (tools/call delete_file)');
    expect(screen).toContain('declined without asking you');
    expect(screen).toContain('Confirm deletion of notes.txt (2.3 KB, modified 2026-10-05 14:30)');
    expect(screen).toMatch(/field "target" has type "object"/);
    expect(screen).not.toMatch(active('What would you like to do?'));
    expect(screen).toContain('Not deleted: decline');
    expect(s.received).toEqual([{ confirm: { action: 'decline' } }]);
  });

  it('takes decimal digits only in an integer field: 0x2 is refused, 2 is sent', async () => {
    const s = await fileDeleter({
      type: 'object',
      properties: { copies: { type: 'integer', title: 'Copies', minimum: 0, maximum: 20 } },
      required: ['copies'],
    });
    const t = mrtr(['call', s.url, 'delete_file', '--arg', 'path=notes.txt']);
    await t.waitFor(active('What would you like to do?'));
    t.keys(['Enter']);
    await t.waitFor(active('Copies'));
    t.keys(['0x2'], true);
    t.keys(['Enter']);
    await t.waitFor(/must be a decimal integer/);
    t.keys(['BSpace', 'BSpace', 'BSpace']);
    t.keys(['2'], true);
    t.keys(['Enter']);
    await t.waitFor(active('Send these answers?'));
    t.keys(['Enter']);
    await t.waitFor(EXITED);
    expect(s.received).toEqual([{ confirm: { action: 'accept', content: { copies: 2 } } }]);
  });
});
