/**
 * `service-deleter` as started by `pnpm start:deleter`: the audit trail is on by default,
 * as JSON lines on stdout, or appended to MRTR_AUDIT_FILE when it is set.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import { startServerProcess } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';

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

/** Ask and confirm by form the deletion of api-staging (production ones go to the approval page). */
async function deleteOne(url: string) {
  const args = { serviceId: 'svc_2d7e0', name: 'api-staging' };
  const first = await callTool(url, 'tok-alice', 'delete_service', args);
  const done = await callTool(url, 'tok-alice', 'delete_service', args, {
    requestState: first.body.result.requestState,
    inputResponses: {
      confirm_delete: { action: 'accept', content: { serviceName: 'api-staging' } },
    },
  });
  expect(done.body.result.isError).toBe(false);
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
});
