/**
 * The notes server over real HTTP (its own listener, `@mrtr/example-kit`'s
 * `listen`) against inputs of the classes that used to reach the gate or the
 * socket unchecked: undeclared and invalid arguments, a burst of tool calls,
 * a 2025-era client, a request Node's HTTP parser refuses.
 */
import { connect } from 'node:net';
import { JsonLinesAuditSink } from '@mrtr/audit';
import { callTool, rpc } from '@mrtr/spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { notesLeft, seedWorkspace } from './confirm.js';

const TOKEN = 'tok-dana';
let db: Database;
let server: RunningServer;
const lines: string[] = [];

beforeAll(async () => {
  db = await openDatabase('memory://');
  const audit = new JsonLinesAuditSink({ destination: { write: (line) => lines.push(line) } });
  server = await startNotesServer({
    db,
    tokens: new Map([[TOKEN, 'dana']]),
    secret: randomSecret(),
    audit,
  });
});
afterAll(async () => {
  await server.close();
  await db.close();
});

/** Send raw bytes to the server and read the whole answer (the server closes the connection). */
function raw(request: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.end(request);
  });
}

describe('notes server: arguments are checked before the gate sees them', () => {
  it('a 900 KB undeclared argument is -32602 naming it: no question, no audit record, nothing deleted', async () => {
    const { uri } = await seedWorkspace(db, 'dana');
    const before = lines.length;
    const blob = 'z'.repeat(900_000);
    const r = await callTool(server.url, TOKEN, 'notes_delete', {
      workspaceUri: uri,
      title: 'Dup',
      blob,
    });
    expect(r.status).toBe(200);
    expect(r.body.error).toMatchObject({ code: -32602, data: { argument: 'blob' } });
    expect(JSON.stringify(r.body).length).toBeLessThan(1000);
    expect(lines.length).toBe(before);
    expect(await notesLeft(db, uri)).toHaveLength(3);
  });

  it('an invalid value is -32602 naming the argument, without its value', async () => {
    const { uri } = await seedWorkspace(db, 'dana');
    const long = 'T'.repeat(5000);
    const r = await callTool(server.url, TOKEN, 'notes_delete', { workspaceUri: uri, title: long });
    expect(r.body.error).toMatchObject({ code: -32602, data: { argument: 'title' } });
    expect(r.body.error.message).not.toContain('TTTT');
  });
});

describe('notes server: protocol rules', () => {
  it('discover declares logging; a structured result also carries it as JSON text', async () => {
    const d = await rpc(server.url, TOKEN, 'server/discover');
    expect(d.body.result.capabilities.logging).toEqual({});
    const created = await callTool(server.url, TOKEN, 'notes_create', {
      workspaceUri: 'notes://dana-structured',
      title: 'Plan',
    });
    const { content, structuredContent } = created.body.result;
    expect(content.at(-1)).toEqual({ type: 'text', text: JSON.stringify(structuredContent) });
  });

  it('an unknown cursor is -32602, not the first page again', async () => {
    const r = await rpc(server.url, TOKEN, 'tools/list', { cursor: 'not-issued' });
    expect(r.body.error.code).toBe(-32602);
  });

  it('a 2025-era initialize, with or without MCP headers, gets -32022 naming 2026-07-28', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'legacy', version: '1' },
      },
    });
    const base = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKEN}`,
    };
    for (const headers of [base, { ...base, 'mcp-protocol-version': '2025-11-25' }]) {
      const res = await fetch(server.url, { method: 'POST', headers, body });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({
        code: -32022,
        data: { requested: '2025-11-25', supported: ['2026-07-28'] },
      });
    }
  });

  it('tool calls are rate limited per principal: past the limit, 429 with Retry-After', async () => {
    // 50 an hour, not the default 300 a minute: on a loaded host 400 calls took over 20 s to
    // arrive, and the default's refill (5 a second) absorbed the overflow.
    const own = await startNotesServer({
      db,
      tokens: new Map([
        ['tok-busy', 'busy'],
        ['tok-calm', 'calm'],
      ]),
      secret: randomSecret(),
      rateLimit: { limit: 50, windowMs: 3_600_000 },
    });
    try {
      const list = (token: string) =>
        fetch(own.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${token}`,
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'notes_list',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name: 'notes_list',
              arguments: { workspaceUri: 'notes://team' },
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            },
          }),
        });
      // 80 calls at once: the bucket (50, one regained every 72 s) runs dry before they are done.
      const answers = await Promise.all(Array.from({ length: 80 }, () => list('tok-busy')));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(50);
      const over = answers.filter((a) => a.status === 429);
      expect(over.length).toBeGreaterThan(0);
      expect(over.length + statuses.filter((s) => s === 200).length).toBe(80);
      for (const a of over) {
        expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect((await a.json()).error.code).toBe(-31429);
      }
      // Another principal is not affected.
      expect((await list('tok-calm')).status).toBe(200);
    } finally {
      await own.close();
    }
  });

  it('a request Node cannot parse (a control byte in Mcp-Name) gets a JSON-RPC body', async () => {
    const { host } = new URL(server.url);
    const answer = await raw(
      `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Mcp-Name: notes\x01delete\r\nContent-Length: 2\r\n\r\n{}`,
    );
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(body).error.code).toBe(-32600);
  });
});
