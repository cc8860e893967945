/**
 * `service-deleter` as started by `pnpm start:deleter`: the audit trail is on by default,
 * as JSON lines on stdout, or appended to MRTR_AUDIT_FILE when it is set. The
 * approval page's sign-in takes MRTR_PAGE_USERS, never the bearer token, when
 * it is set; a generated password beside a generated token; else the token,
 * with a warning at start.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import { startServerProcess } from '@mrtr/test-services';
import { afterAll, describe, expect, it, vi } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'deleter-main-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** Start `src/main.ts` with `env` over a test configuration; remember the child for cleanup. */
async function start(env: Record<string, string>) {
  const server = await startServerProcess(new URL('..', import.meta.url).pathname, {
    DATABASE_URL: 'memory://',
    PORT: '0',
    MRTR_TOKENS: 'alice:tok-alice',
    MRTR_SECRET: 'x'.repeat(32),
    REDIS_URL: '',
    ...env,
  });
  children.push(server.child);
  return server;
}

/**
 * Create a staging service without volumes, then ask and confirm its deletion by form
 * (production ones, and those with volumes, go to the approval page).
 */
async function deleteOne(url: string) {
  const args = { serviceId: 'svc_main1', name: 'main-staging' };
  const made = await callTool(url, 'tok-alice', 'create_service', {
    id: args.serviceId,
    name: args.name,
    environment: 'staging',
    instances: 1,
  });
  expect(made.body.result.isError).toBe(false);
  const first = await callTool(url, 'tok-alice', 'delete_service', args);
  const done = await callTool(url, 'tok-alice', 'delete_service', args, {
    requestState: first.body.result.requestState,
    inputResponses: {
      confirm_delete: { action: 'accept', content: { serviceName: args.name } },
    },
  });
  expect(done.body.result.isError).toBe(false);
}

/** POST the approval page's sign-in form of the server at `url`; the status. */
async function signIn(url: string, principal: string, password: string): Promise<number> {
  const origin = new URL(url).origin;
  const response = await fetch(`${origin}/approve/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({ principal, password }),
    redirect: 'manual',
  });
  await response.body?.cancel();
  return response.status;
}

const auditLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((r) => r.msg === 'mrtr.audit');

describe('service-deleter main', () => {
  it('writes the JSON-lines trail to stdout by default', async () => {
    const { url, stdout } = await start({});
    await deleteOne(url);
    expect(stdout()).toMatch(/audit trail: JSON lines to stdout; table mrtr_audit/);
    const records = auditLines(stdout());
    expect(records.map((r) => r.outcome)).toEqual(['asked', 'accepted', 'completed']);
    expect(records[2]).toMatchObject({
      principal: 'alice',
      operation: 'tools/call:delete_service',
    });
  });

  it('appends the trail to MRTR_AUDIT_FILE when it is set', async () => {
    const file = join(dir, 'trail', 'audit.jsonl');
    const { url, stdout } = await start({ MRTR_AUDIT_FILE: file });
    await deleteOne(url);
    expect(auditLines(stdout())).toEqual([]);
    const records = auditLines(readFileSync(file, 'utf8'));
    expect(records.map((r) => r.outcome)).toEqual(['asked', 'accepted', 'completed']);
  });

  it('signs in to the approval page with MRTR_PAGE_USERS, refusing the bearer token', async () => {
    const { url, stderr } = await start({ MRTR_PAGE_USERS: 'alice:page-alice-0123456789' });
    expect(await signIn(url, 'alice', 'tok-alice')).toBe(401);
    expect(await signIn(url, 'alice', 'page-alice-0123456789')).toBe(200);
    expect(stderr()).not.toMatch(/MRTR_PAGE_USERS is not set/);
  });

  it('refuses to start when a page password is a bearer token', async () => {
    await expect(start({ MRTR_PAGE_USERS: 'alice:tok-alice' })).rejects.toThrow(
      /MRTR_PAGE_USERS gives principal "alice" a bearer token of MRTR_TOKENS/,
    );
  });

  it('without MRTR_TOKENS, prints a page password beside the token, and only it signs in', async () => {
    const { url, stdout } = await start({ MRTR_TOKENS: '' });
    await vi.waitFor(() => expect(stdout()).toMatch(/approval-page password: \S+\n/));
    const token = /principal "local" token: (\S+)/.exec(stdout())?.[1] as string;
    const password = /principal "local" approval-page password: (\S+)/.exec(stdout())?.[1];
    expect(token).toBeDefined();
    expect(password).toBeDefined();
    expect(password).not.toBe(token);
    expect(await signIn(url, 'local', token)).toBe(401);
    expect(await signIn(url, 'local', password as string)).toBe(200);
  });

  it('with MRTR_TOKENS alone, the token signs in, and the start warns how to set MRTR_PAGE_USERS', async () => {
    const { url, stderr } = await start({});
    expect(await signIn(url, 'alice', 'tok-alice')).toBe(200);
    await vi.waitFor(() => expect(stderr()).toMatch(/MRTR_PAGE_USERS is not set/));
    expect(stderr()).toMatch(/proves nothing a client holding the token could not do/);
    expect(stderr()).toContain('MRTR_PAGE_USERS=alice:<password>,bob:<password>');
  });
});
