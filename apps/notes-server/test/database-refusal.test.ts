/**
 * A tool written as people write them, passing its arguments to the
 * database unchecked (`{ id: { type: 'string' } }`): what the database
 * refuses is the caller's error (`-32602`, SQLSTATE named), never a 500,
 * on PGlite and on a PostgreSQL server.
 */
import { bearerAuthenticator, listen, type RunningServer } from '@mrtr/example-kit';
import { createMcpEndpoint, type ToolDefinition } from '@mrtr/server';
import { callTool } from '@mrtr/spec-schema';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import { textResult } from '@mrtr/wire';
import { afterAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db.js';

const reachable = await postgresReachable();
const schema = `refusal_test_${process.pid}_${Date.now().toString(36)}`;
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  if (reachable) await dropSchema(schema);
});

/** Three naive tools over one table: look up by id, insert a row, count since a date. */
function naiveTools(db: Database): ToolDefinition[] {
  const object = (properties: Record<string, unknown>) => ({
    type: 'object' as const,
    properties,
    required: Object.keys(properties),
  });
  return [
    {
      name: 'find',
      inputSchema: object({ id: { type: 'string' } }),
      async handler(args) {
        const { id } = args as { id: string };
        const r = await db.query('SELECT id FROM items WHERE id = $1', [id]);
        return textResult(`${r.rows.length} found`);
      },
    },
    {
      name: 'add',
      inputSchema: object({ id: { type: 'string' }, size: { type: 'integer' } }),
      async handler(args) {
        const { id, size } = args as { id: string; size: number };
        await db.query('INSERT INTO items (id, size) VALUES ($1, $2)', [id, size]);
        return textResult('added');
      },
    },
    {
      name: 'since',
      inputSchema: object({ day: { type: 'string' } }),
      async handler(args) {
        const { day } = args as { day: string };
        const r = await db.query('SELECT count(*) FROM items WHERE made >= $1::date', [day]);
        return textResult(JSON.stringify(r.rows[0]));
      },
    },
  ];
}

async function serve(url: string, searchPath?: string): Promise<RunningServer> {
  const db = await openDatabase(url, searchPath ? { searchPath } : {});
  await db.query(
    'CREATE TABLE IF NOT EXISTS items (id text PRIMARY KEY, size integer, made date DEFAULT now())',
  );
  const running = await listen(
    createMcpEndpoint({
      serverInfo: { name: 'naive', version: '1' },
      tools: naiveTools(db),
      authenticate: bearerAuthenticator(new Map([['tok-alice-refusal', 'alice']])),
      onError: () => {},
    }),
  );
  cleanup.push(
    () => db.close(),
    () => running.close(),
  );
  return running;
}

const cases: [string, string, Record<string, unknown>, string][] = [
  ['U+0000 in text', 'find', { id: 'a\u0000b' }, '22021'],
  ['an integer beyond the column', 'add', { id: 'big', size: 2 ** 40 }, '22003'],
  ['a day that is not a date', 'since', { day: 'yesterday-ish' }, '22007'],
  ['a row that exists', 'add', { id: 'twice', size: 1 }, '23505'],
];

const backends: [string, string, string | undefined][] = [['PGlite', 'memory://', undefined]];
if (reachable) backends.push(['PostgreSQL', POSTGRES_URL, schema]);

describe.each(backends)('%s', (_, url, searchPath) => {
  let server: Promise<RunningServer> | undefined;
  it.each(
    cases,
  )('%s gets -32602 naming SQLSTATE, never a 500', async (_label, tool, args, state) => {
    server ??= serve(url, searchPath);
    const { url: endpoint } = await server;
    if (state === '23505') await callTool(endpoint, 'tok-alice-refusal', tool, args);
    const r = await callTool(endpoint, 'tok-alice-refusal', tool, args);
    expect(r.status).toBe(200);
    expect(r.body.error.code).toBe(-32602);
    expect(r.body.error.data).toEqual({ sqlstate: state });
    // The server still answers, and the tool works with good input.
    const fine = await callTool(endpoint, 'tok-alice-refusal', 'find', { id: 'fine' });
    expect(fine.body.result.content[0].text).toBe('0 found');
  });
});
