/**
 * Every quick start of the README runs as written: started with `tsx`, it
 * refuses to start without `MRTR_SECRET`; round 1 of `delete_record` answers
 * an `InputRequiredResult` with a `requestState`; the retry with an accepted
 * answer deletes the row on PostgreSQL, once (the identical re-send gets the
 * recorded result, the row stays gone).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callDelete,
  confirmsOneDeletion,
  deletedOnceIn,
  examplesDir,
  foreignCallerStatuses,
  malformedHostReplies,
  oversizedReplies,
  readmeCurl,
  runWithoutSecret,
  start,
  testDatabase,
  twoTokenReplies,
  writeReadmeQuickStart,
} from './run.js';

const { pool, reachable } = await testDatabase();
afterAll(() => pool.end());

/** The README's first TypeScript block: the 30-line quick start of its first screen. */
const README_QUICK_START = '.readme-quickstart.ts';
afterAll(writeReadmeQuickStart(README_QUICK_START));

describe('the README quick start (first screen)', () => {
  it('is at most 30 lines', () => {
    const lines = readFileSync(join(examplesDir, README_QUICK_START), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(30);
  });

  it('does not start without MRTR_SECRET, and says how to make one', async () => {
    const { code, stderr } = await runWithoutSecret(README_QUICK_START);
    expect(code).not.toBe(0);
    expect(stderr).toContain('openssl rand -base64 32');
  });

  it('asks, then deletes once; a foreign Host or Origin gets 403', async () => {
    const server = await start(README_QUICK_START);
    try {
      expect(await foreignCallerStatuses(server)).toEqual([403, 403]);
      await confirmsOneDeletion(server);
    } finally {
      server.stop();
    }
  });

  it('its curl block asks, then deletes rec-1 with the accepted answer', async () => {
    const server = await start(README_QUICK_START);
    try {
      const port = new URL(server.url).port;
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          'bash',
          ['-c', readmeCurl()],
          { env: { ...process.env, TOKEN: server.token, PORT: port } },
          (error, stdout) => (error ? reject(error) : resolve(stdout)),
        ),
      );
      const [asked, done] = out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(asked.result.resultType).toBe('input_required');
      expect(done.result).toMatchObject({
        resultType: 'complete',
        isError: false,
        content: [{ type: 'text', text: 'Deleted rec-1: true.' }],
      });
      // Gone: a new call says so instead of asking.
      const after = (await callDelete(server, 9)).result as { content?: unknown };
      expect(JSON.stringify(after.content)).toContain('No record rec-1.');
    } finally {
      server.stop();
    }
  });
});

describe
  .skipIf(!reachable)
  .each(['quickstart-node.ts', 'quickstart-express.ts', 'quickstart-hono.ts', 'quickstart-sdk.ts'])(
  '%s on PostgreSQL',
  (file) => {
    const schema = `mrtr_examples_${file.replace(/\W/g, '_')}_${process.pid}`;
    beforeAll(() => pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`));
    afterAll(() => pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));

    it('does not start without MRTR_SECRET, and says how to make one', async () => {
      const { code, stderr } = await runWithoutSecret(file);
      expect(code).not.toBe(0);
      expect(stderr).toContain('openssl rand -base64 32');
    });

    it('asks, then deletes the row once, the claim committed with it; a foreign Host or Origin gets 403', async () => {
      const server = await start(file, schema);
      try {
        // Each quick start is a template: none may leave a local server open to DNS rebinding.
        expect(await foreignCallerStatuses(server)).toEqual([403, 403]);
        // Nor read the host from a Host that names two, or one with userinfo: 400 with JSON-RPC.
        expect(await malformedHostReplies(server)).toEqual([
          [400, -32600],
          [400, -32600],
        ]);
        // Nor take one of two Authorization fields (Node's req.headers keeps the first only).
        expect((await twoTokenReplies(server)).map(([status]) => status)).toEqual([401, 401]);
        // Nor serve MCP on a path it does not name: 404 (Express matches /MCP and /mcp/ as its routing does).
        for (const path of ['/elsewhere', '/mcp/x']) {
          const elsewhere = await fetch(new URL(path, server.url), {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${server.token}`,
            },
            body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
          });
          expect(elsewhere.status, path).toBe(404);
        }
        // Nor send the database what it cannot store (PostgreSQL text holds no U+0000): refused
        // as invalid arguments (the SDK says so in an isError result), never an internal error.
        const nul = await callDelete(server, 90, { arguments: { id: 'rec\u00001' } });
        if (file === 'quickstart-sdk.ts')
          expect(nul.result).toMatchObject({ isError: true, resultType: 'complete' });
        else expect((nul.error as { code?: number } | undefined)?.code).toBe(-32602);
        // Nor answer a body over its bound, declared or chunked, with `"id": null` (not 2026-07-28).
        for (const [status, reply] of await oversizedReplies(server)) {
          expect(status).toBe(413);
          expect(reply).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
          expect(reply).not.toHaveProperty('id');
        }
        await confirmsOneDeletion(server);
        await deletedOnceIn(pool, schema);
      } finally {
        server.stop();
      }
    });
  },
);
