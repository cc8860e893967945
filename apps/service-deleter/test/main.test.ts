/**
 * `service-deleter` as started by `pnpm start:deleter`: the audit trail is on by default,
 * as JSON lines on stdout, or appended to MRTR_AUDIT_FILE when it is set.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'deleter-main-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** Start `src/main.ts` with `env`; resolves with its URL and a reader of everything it printed. */
async function start(env: Record<string, string>) {
  const tsx = new URL('../node_modules/.bin/tsx', import.meta.url).pathname;
  const child = spawn(tsx, ['src/main.ts'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: {
      ...process.env,
      DATABASE_URL: 'memory://',
      REDIS_URL: '',
      PORT: '0',
      MRTR_TOKENS: 'alice:tok-alice',
      MRTR_SECRET: 'x'.repeat(32),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { url, stdout: () => out };
}

/** Ask and confirm the deletion of api-prod, the way the seed tells it. */
async function deleteOne(url: string) {
  const args = { serviceId: 'svc_8f21c', name: 'api-prod' };
  const first = await callTool(url, 'tok-alice', 'delete_service', args);
  const done = await callTool(url, 'tok-alice', 'delete_service', args, {
    requestState: first.body.result.requestState,
    inputResponses: { confirm_delete: { action: 'accept', content: { serviceName: 'api-prod' } } },
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
