/**
 * `file-deleter` as started by `pnpm start:files`: FILES_ROOT, the audit
 * trail on stdout with the person's reason, and the demo folder seeded once.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import { startServerProcess } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { seedDemoFiles } from '../src/seed.js';

const dir = mkdtempSync(join(tmpdir(), 'file-deleter-main-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

const auditLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((r) => r.msg === 'mrtr.audit');

describe('file-deleter main', () => {
  it('serves FILES_ROOT and writes the trail, with the reason, to stdout', async () => {
    const root = join(dir, 'root');
    mkdirSync(root);
    writeFileSync(join(root, 'old.log'), 'x'.repeat(100));
    const server = await startServerProcess(new URL('..', import.meta.url).pathname, {
      DATABASE_URL: 'memory://',
      PORT: '0',
      FILES_ROOT: root,
      MRTR_TOKENS: 'alice:tok-alice',
      MRTR_SECRET: 'x'.repeat(32),
    });
    children.push(server.child);
    expect(server.stdout()).toContain(`files root: ${root}`);
    const first = await callTool(server.url, 'tok-alice', 'delete_file', { path: 'old.log' });
    const done = await callTool(
      server.url,
      'tok-alice',
      'delete_file',
      { path: 'old.log' },
      {
        requestState: first.body.result.requestState,
        inputResponses: {
          confirm_delete: {
            action: 'accept',
            content: { confirm_name: 'old.log', reason: 'rotated long ago' },
          },
        },
      },
    );
    expect(done.body.result.content[0].text).toBe('Deleted "old.log" (100 B).');
    const records = auditLines(server.stdout());
    expect(records.map((r) => r.outcome)).toEqual(['asked', 'accepted', 'completed']);
    expect(records[2]).toMatchObject({
      principal: 'alice',
      operation: 'tools/call:delete_file',
      answer: {
        action: 'accept',
        content: { confirm_name: 'old.log', reason: 'rotated long ago' },
      },
    });
  });

  it('refuses to start on a FILES_ROOT that does not exist', async () => {
    const started = startServerProcess(new URL('..', import.meta.url).pathname, {
      DATABASE_URL: 'memory://',
      PORT: '0',
      FILES_ROOT: join(dir, 'missing'),
      MRTR_TOKENS: 'alice:tok-alice',
      MRTR_SECRET: 'x'.repeat(32),
    });
    await expect(started).rejects.toThrow(/file-deleter failed to start: .*ENOENT/);
  });
});

describe('the demo folder', () => {
  it('is seeded once, with notes.txt of 2.3 KB modified 2026-10-05 14:30 UTC; an existing folder is left alone', async () => {
    const demo = join(dir, 'demo');
    expect(await seedDemoFiles(demo)).toBe(true);
    const notes = statSync(join(demo, 'notes.txt'));
    expect(notes.size).toBe(2345);
    expect(notes.mtime.toISOString()).toBe('2026-10-05T14:30:00.000Z');
    expect(readFileSync(join(demo, 'reports/q3-summary.csv'), 'utf8')).toMatch(/^month,revenue/);
    rmSync(join(demo, 'todo.md'));
    expect(await seedDemoFiles(demo)).toBe(false);
    expect(() => statSync(join(demo, 'todo.md'))).toThrow();
  });
});
