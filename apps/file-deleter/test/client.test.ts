/**
 * The seed's proofs driven by `@mrtr/client` (as it is), over real HTTP:
 * the question a person reads, the client's validation before sending and
 * the server's after it, an unanswered question that does not block, a late
 * answer, and a client that cannot show forms.
 */
import { readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { type Answerer, type FormQuestion, JsonRpcError, McpClient } from '@mrtr/client';
import { DEFAULT_TTL_SECONDS } from '@mrtr/ticket';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db.js';
import { exists, type Harness, put, startHarness, TOKEN } from './harness.js';

let h: Harness;
let posted: string[];
// One database for the file (starting PGlite is the slow part); each test its own root and servers.
let db: Database;
beforeAll(async () => {
  db = await openDatabase('memory://');
});
afterAll(() => db.close());
beforeEach(async () => {
  h = await startHarness({ db });
  await db.query('DELETE FROM file_deletions');
  put(h.root, 'notes.txt', 'n'.repeat(2345));
  const modified = new Date('2026-10-05T14:30:00Z');
  utimesSync(join(h.root, 'notes.txt'), modified, modified);
  posted = [];
});
afterEach(() => h.close());

/** A client whose every request body is recorded in `posted`. */
function client(answerer?: Answerer, options: { answerTimeoutMs?: number } = {}) {
  return new McpClient({
    url: h.url,
    headers: { Authorization: `Bearer ${TOKEN}` },
    ...(answerer ? { answerer } : {}),
    ...options,
    fetch: async (input, init) => {
      posted.push(String(init?.body ?? ''));
      return fetch(input, init);
    },
  });
}

/** A person who reads the path in the question and types it, with a reason. */
const person = (reason = 'old meeting notes'): Answerer & { seen: FormQuestion[] } => {
  const seen: FormQuestion[] = [];
  return {
    seen,
    async form(q) {
      seen.push(q);
      // The path in quotes, `\` before any quote-like character in it (`quoted` of @mrtr/gate).
      const shown = /^Confirm deletion of "((?:[^"\\]|\\.)*)" \(/.exec(q.message)?.[1] ?? '';
      const path = shown.replace(/\\(.)/g, '$1');
      return { action: 'accept', content: { confirm_name: path, reason } };
    },
  };
};

describe('@mrtr/client against the file deleter', () => {
  it('the person reads details only the server knows, types the path, and the file goes', async () => {
    const answerer = person();
    const c = client(answerer);
    await c.discover();
    const { result, rounds } = await c.callTool('delete_file', { path: 'notes.txt' });
    expect(result.isError).toBe(false);
    expect(rounds).toBe(2);
    expect(answerer.seen[0]?.message).toMatch(
      /^Confirm deletion of "notes\.txt" \(2\.3 KB, modified 2026-10-05 14:30 UTC\)\./,
    );
    expect(answerer.seen[0]?.server.name).toBe('mrtr-file-deleter');
    expect(exists(h.root, 'notes.txt')).toBe(false);
  });

  it('the client validates against the schema before sending: a too-short reason is never sent', async () => {
    const answers = ['no', 'a proper reason'];
    const retries: unknown[] = [];
    const c = client({
      async form(q) {
        if (q.retry) retries.push(q.retry.issues.map((i) => i.field));
        return {
          action: 'accept',
          content: { confirm_name: 'notes.txt', reason: answers.shift() as string },
        };
      },
    });
    const { result } = await c.callTool('delete_file', { path: 'notes.txt' });
    expect(result.isError).toBe(false);
    expect(retries).toEqual([['reason']]);
    const calls = posted.filter((b) => b.includes('"tools/call"'));
    expect(calls).toHaveLength(2);
    expect(calls.some((b) => b.includes('"reason":"no"'))).toBe(false);
  });

  it('the server checks what the schema cannot: a typed path that differs is asked again', async () => {
    const typed = ['notes.txt.bak', 'notes.txt'];
    const messages: string[] = [];
    const c = client({
      async form(q) {
        messages.push(q.message);
        return {
          action: 'accept',
          content: { confirm_name: typed.shift() as string, reason: 'old meeting notes' },
        };
      },
    });
    const { result, rounds } = await c.callTool('delete_file', { path: 'notes.txt' });
    expect(result.isError).toBe(false);
    expect(rounds).toBe(3);
    expect(messages[1]).toContain(
      'Confirmation did not match: you typed "notes.txt.bak", expected "notes.txt".',
    );
  });

  it('decline and cancel delete nothing', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const { result } = await client({ form: async () => ({ action }) }).callTool('delete_file', {
        path: 'notes.txt',
      });
      expect(result.isError).toBeFalsy();
      expect(result.content[0]?.text).toMatch(
        action === 'decline' ? /^Not deleted/ : /This request deleted nothing/,
      );
    }
    expect(readFileSync(join(h.root, 'notes.txt'), 'utf8')).toHaveLength(2345);
  });

  it('an unanswered question is a cancel after the timeout, and the client carries on', async () => {
    const c = client(
      { form: () => new Promise(() => {}) }, // the person walked away
      { answerTimeoutMs: 300 },
    );
    const { result, events } = await c.callTool('delete_file', { path: 'notes.txt' });
    expect(events.some((e) => e.type === 'timed-out')).toBe(true);
    expect(result.content[0]?.text).toMatch(/dismissed/);
    expect(exists(h.root, 'notes.txt')).toBe(true);
    // The same client goes on with the next call.
    const next = await c.callTool('delete_file', { path: 'notes.txt' }, { answerer: person() });
    expect(next.result.isError).toBe(false);
  });

  it('a late answer (after the ticket expired) deletes nothing', async () => {
    const c = client({
      async form() {
        h.clock.offsetMs = (DEFAULT_TTL_SECONDS + 120) * 1000; // the person took too long
        return { action: 'accept', content: { confirm_name: 'notes.txt', reason: 'finally' } };
      },
    });
    const error = await c.callTool('delete_file', { path: 'notes.txt' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect((error as JsonRpcError).rpcCode).toBe(-32602);
    expect((error as Error).message).toMatch(/expired/);
    expect(exists(h.root, 'notes.txt')).toBe(true);
  });

  it('a client without an answerer (no elicitation declared) cannot delete: -32021', async () => {
    const error = await client()
      .callTool('delete_file', { path: 'notes.txt' })
      .catch((e: unknown) => e);
    expect((error as JsonRpcError).rpcCode).toBe(-32021);
    expect((error as JsonRpcError).data).toEqual({
      requiredCapabilities: { elicitation: { form: {} } },
    });
    expect(exists(h.root, 'notes.txt')).toBe(true);
  });
});
