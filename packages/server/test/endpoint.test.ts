import { JSONRPCRequestSchema, McpError, SERVICE_UNAVAILABLE, textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import { createMcpEndpoint, type ToolDefinition } from '../src/index.js';

const echo: ToolDefinition = {
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  handler: (args) => textResult(String(args.text)),
};
const asks: ToolDefinition = {
  name: 'asks',
  inputSchema: { type: 'object' },
  handler: () => ({
    resultType: 'input_required',
    inputRequests: {
      q: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'ok?',
          requestedSchema: { type: 'object', properties: {} },
        },
      },
    },
  }),
};
const throws: ToolDefinition = {
  name: 'throws',
  inputSchema: { type: 'object' },
  handler: () => {
    throw new Error('secret detail');
  },
};
const typed: ToolDefinition = {
  name: 'typed',
  inputSchema: { type: 'object' },
  handler: () => {
    throw new McpError(-32602, 'bad input', { field: 'x' });
  },
};

/** A result whose `then` getter throws: reading it to tell a promise from a value must not escape. */
function trappedThen<T extends object>(result: T): T {
  return Object.defineProperty(result, 'then', {
    get() {
      throw new Error('secret detail');
    },
  });
}
const trapThen: ToolDefinition = {
  name: 'trap_then',
  inputSchema: { type: 'object' },
  handler: () => trappedThen({ resultType: 'complete' as const, content: [] }),
};

const unavailable: ToolDefinition = {
  name: 'unavailable',
  inputSchema: { type: 'object' },
  handler: () => {
    throw new McpError(-32603, 'Nothing was changed: the store is unavailable. Retry later.');
  },
};

const endpoint = createMcpEndpoint({
  serverInfo: { name: 'test', version: '1.0.0' },
  tools: [echo, asks, throws, typed, unavailable, trapThen],
  authenticate: (req) =>
    req.headers.get('authorization') === 'Bearer t' ? { id: 'alice' } : undefined,
  onError: () => {},
});

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

function post(
  body: unknown,
  headers: Record<string, string | undefined> = {},
  init: { method?: string } = {},
): Request {
  const b = body as { method?: string; params?: { name?: string; uri?: string } };
  const base: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: 'Bearer t',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': b?.method,
    'mcp-name': b?.params?.name ?? b?.params?.uri,
  };
  const merged = Object.fromEntries(
    Object.entries({ ...base, ...headers }).filter(
      (e): e is [string, string] => e[1] !== undefined,
    ),
  );
  return new Request('http://127.0.0.1/mcp', {
    method: init.method ?? 'POST',
    headers: merged,
    ...(init.method === 'GET'
      ? {}
      : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

const call = (
  name: string,
  args: Record<string, unknown> = {},
  meta: Record<string, unknown> = META,
) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name, arguments: args, _meta: meta },
});

async function send(req: Request) {
  const res = await endpoint(req);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

describe('createMcpEndpoint', () => {
  it('answers server/discover with supported versions and serverInfo', async () => {
    const r = await send(
      post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } }),
    );
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'test', version: '1.0.0' } },
    });
    expect(r.body.result.ttlMs).toBeGreaterThanOrEqual(0);
  });

  it('lists tools without their handlers, with ttlMs and cacheScope', async () => {
    const r = await send(
      post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } }),
    );
    expect(r.body.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'echo',
      'asks',
      'throws',
      'typed',
      'unavailable',
      'trap_then',
    ]);
    expect(r.body.result.tools[0].handler).toBeUndefined();
    expect(r.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
  });

  it('calls a tool and echoes the request id', async () => {
    const r = await send(post(call('echo', { text: 'hi' })));
    expect(r.body).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'hi' }],
        isError: false,
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'test', version: '1.0.0' } },
      },
    });
  });

  it('rejects GET and DELETE with 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await endpoint(new Request('http://127.0.0.1/mcp', { method }));
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('rejects a foreign Origin with 403 and accepts loopback origins', async () => {
    expect((await send(post(call('echo'), { origin: 'https://evil.example' }))).status).toBe(403);
    expect((await send(post(call('echo'), { origin: 'http://localhost:5173' }))).status).toBe(200);
  });

  it('requires a principal: 401 without one', async () => {
    const r = await send(post(call('echo'), { authorization: undefined }));
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('uses the principal an adapter passes, without authenticate', async () => {
    let seen: string | undefined;
    const e = createMcpEndpoint({
      serverInfo: { name: 't', version: '1' },
      tools: [
        {
          name: 'who',
          inputSchema: { type: 'object' },
          handler: (_a, ctx) => {
            seen = ctx.principal.id;
            return textResult(seen);
          },
        },
      ],
    });
    const res = await e(post(call('who'), { authorization: undefined }), {
      principal: { id: 'carol' },
    });
    expect(res.status).toBe(200);
    expect(seen).toBe('carol');
    expect((await e(post(call('who'), { authorization: undefined }))).status).toBe(401);
  });

  it('answers malformed JSON with -32700 and a non-request with -32600', async () => {
    const parse = await send(post('{"jsonrpc":'));
    expect(parse.status).toBe(400);
    expect(parse.body.error.code).toBe(-32700);
    const invalid = await send(post({ jsonrpc: '1.0', id: 1, method: 'tools/list' }));
    expect(invalid.body.error.code).toBe(-32600);
    const batch = await send(post([call('echo')]));
    expect(batch.body.error.code).toBe(-32600);
  });

  it('refuses exactly the envelopes JSONRPCRequestSchema refuses, with -32600', async () => {
    const good = call('echo') as Record<string, unknown>;
    const envelopes: Record<string, unknown>[] = [
      good,
      { ...good, id: 'a-string' },
      { ...good, id: 0 },
      { ...good, id: 1.5 },
      { ...good, id: 2 ** 53 },
      { ...good, id: -(2 ** 53) },
      { ...good, id: null },
      { ...good, id: true },
      { ...good, jsonrpc: 2 },
      { ...good, method: 7 },
      { ...good, params: [] },
      { ...good, params: null },
      { ...good, params: 'x' },
      { jsonrpc: '2.0', id: 9, method: 'tools/list' },
    ];
    for (const envelope of envelopes) {
      const res = await send(post(envelope));
      const refused = res.body.error?.code === -32600;
      expect(refused, JSON.stringify(envelope)).toBe(
        !JSONRPCRequestSchema.safeParse(envelope).success,
      );
    }
  });

  it('accepts a notification with 202 and no body', async () => {
    const res = await endpoint(
      post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} }),
    );
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  it('enforces the protocol version header: missing → -32020, unsupported → -32022, mismatch → -32020', async () => {
    const missing = await send(post(call('echo'), { 'mcp-protocol-version': undefined }));
    expect([missing.status, missing.body.error.code]).toEqual([400, -32020]);
    const old = await send(post(call('echo'), { 'mcp-protocol-version': '2025-11-25' }));
    expect([old.status, old.body.error.code]).toEqual([400, -32022]);
    expect(old.body.error.data).toEqual({ requested: '2025-11-25', supported: ['2026-07-28'] });
    const body = call(
      'echo',
      {},
      { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
    );
    const mismatch = await send(post(body));
    expect([mismatch.status, mismatch.body.error.code]).toEqual([400, -32020]);
    // Sent twice, the fields arrive joined: a header mismatch, not an unknown version.
    for (const twice of ['2026-07-28, 2026-07-28', '2026-07-28,2025-11-25']) {
      const repeated = await send(post(call('echo'), { 'mcp-protocol-version': twice }));
      expect([repeated.status, repeated.body.error.code]).toEqual([400, -32020]);
      expect(repeated.body.error.message).toMatch(/sent once/);
    }
  });

  it('enforces Mcp-Method and Mcp-Name against the body', async () => {
    const method = await send(post(call('echo'), { 'mcp-method': 'tools/list' }));
    expect([method.status, method.body.error.code]).toEqual([400, -32020]);
    const name = await send(post(call('echo'), { 'mcp-name': 'asks' }));
    expect([name.status, name.body.error.code]).toEqual([400, -32020]);
    const missing = await send(post(call('echo'), { 'mcp-name': undefined }));
    expect(missing.body.error.code).toBe(-32020);
    const encoded = await send(
      post(call('echo'), { 'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=` }),
    );
    expect(encoded.status).toBe(200);
    // Sent twice with the right value (joined as `a, a`): said so, not called a mismatch.
    for (const [header, twice] of [
      ['mcp-method', 'tools/call, tools/call'],
      ['mcp-name', 'echo, echo'],
      ['mcp-name', `echo,=?base64?${Buffer.from('echo').toString('base64')}?=`],
      // The spaces next to a comma are dropped, however many (16 KiB of them took 0.2 s before).
      ['mcp-method', `x${' '.repeat(8000)},${' '.repeat(8000)}tools/call`],
      ['mcp-name', 'x   ,echo'],
    ] as const) {
      const r = await send(post(call('echo'), { [header]: twice }));
      expect([r.status, r.body.error.code], twice).toEqual([400, -32020]);
      expect(r.body.error.message).toMatch(
        /^Header mismatch: Mcp-(Method|Name) must be sent once$/,
      );
    }
    // Other white space next to a comma is kept, as before: a mismatch, not "sent twice".
    const tab = await send(post(call('echo'), { 'mcp-name': 'x,\techo' }));
    expect(tab.body.error.message).not.toMatch(/must be sent once/);
    // A sentinel whose Base64 is not canonical, or not UTF-8: said so, not called a mismatch.
    for (const bad of [
      '=?base64?ZWNobw?=',
      `=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`,
    ]) {
      const r = await send(post(call('echo'), { 'mcp-name': bad }));
      expect([r.status, r.body.error.code], bad).toEqual([400, -32020]);
      expect(r.body.error.message).toMatch(/^Header mismatch: Mcp-Name is not a valid value: /);
    }
    // Two different values, neither right: a mismatch as before.
    const other = await send(post(call('echo'), { 'mcp-name': 'asks, asks' }));
    expect(other.body.error.message).toBe('Header mismatch: Mcp-Name does not match params.name');
  });

  it('answers an unknown method with 404 and -32601, an unknown tool with -32602', async () => {
    const r = await send(
      post({ jsonrpc: '2.0', id: 3, method: 'nope/nothing', params: { _meta: META } }),
    );
    expect([r.status, r.body.error.code]).toEqual([404, -32601]);
    expect(r.body.error.message).toBe('Method not found: nope/nothing');
    const t = await send(post(call('missing')));
    expect(t.body.error.code).toBe(-32602);
  });

  it('quotes at most 64 characters of an unknown method name', async () => {
    const method = `x/${'y'.repeat(10_000)}`;
    const r = await send(post({ jsonrpc: '2.0', id: 4, method, params: { _meta: META } }));
    expect([r.status, r.body.error.code]).toEqual([404, -32601]);
    expect(r.body.error.message).toBe(`Method not found: ${method.slice(0, 64)}…`);
  });

  it('refuses to send an input request the client did not declare (-32021)', async () => {
    const ok = await send(post(call('asks')));
    expect(ok.body.result.resultType).toBe('input_required');
    const r = await send(
      post(call('asks', {}, { ...META, 'io.modelcontextprotocol/clientCapabilities': {} })),
    );
    expect([r.status, r.body.error.code]).toEqual([400, -32021]);
    expect(r.body.error.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
  });

  it('hides unexpected handler errors behind -32603 and keeps McpError codes', async () => {
    const r = await send(post(call('throws')));
    expect([r.status, r.body.error.code]).toEqual([500, -32603]);
    expect(JSON.stringify(r.body)).not.toContain('secret detail');
    // A -32603 thrown on purpose (a service it needs is down) is 503 and keeps its message.
    const down = await send(post(call('unavailable')));
    expect([down.status, down.body.error.code]).toEqual([503, -32603]);
    expect(down.body.error.message).toMatch(/^Nothing was changed/);
    const t = await send(post(call('typed')));
    expect(t.body.error).toEqual({ code: -32602, message: 'bad input', data: { field: 'x' } });
    // A throwing `then` getter on the result is the handler's bug too: -32603 with the request's id.
    const trap = await send(post(call('trap_then')));
    expect([trap.status, trap.body.id, trap.body.error.code]).toEqual([500, 7, -32603]);
    expect(JSON.stringify(trap.body)).not.toContain('secret detail');
    // The same from completion/complete, whose result the dispatcher reads directly.
    const completing = createMcpEndpoint({
      serverInfo: { name: 'test', version: '1.0.0' },
      complete: () => trappedThen({ resultType: 'complete' as const, completion: { values: [] } }),
      authenticate: () => ({ id: 'alice' }),
      onError: () => {},
    });
    const params = {
      ref: { type: 'ref/prompt', name: 'x' },
      argument: { name: 'a', value: '' },
      _meta: META,
    };
    const c = await completing(
      post({ jsonrpc: '2.0', id: 9, method: 'completion/complete', params }),
    );
    const body = await c.json();
    expect([c.status, body.id, body.error.code]).toEqual([500, 9, -32603]);
  });

  it('answers a database refusing what the request carried with -32602 naming the SQLSTATE only, never 500', async () => {
    /** Errors shaped as drivers throw them: node-postgres and PGlite (`code` + `severity`), mysql2 (`sqlState`). */
    const pgError = (code: string) =>
      Object.assign(new Error('invalid byte sequence: secret row text'), {
        code,
        severity: 'ERROR',
      });
    const thrown: [string, unknown, number | undefined][] = [
      ['22021', pgError('22021'), -32602],
      ['22P02', pgError('22P02'), -32602],
      ['23505', pgError('23505'), -32602],
      [
        'mysql 22001',
        Object.assign(new Error('secret'), { code: 'ER_DATA_TOO_LONG', sqlState: '22001' }),
        -32602,
      ],
      ['wrapped 22003', new Error('query failed', { cause: pgError('22003') }), -32602],
      // Not the caller's data (a lost connection is 503, tested below): a syntax error of the tool, a code without
      // severity, and data exceptions a server causes itself (division by zero, an exhausted
      // sequence, a NOT NULL column its SQL forgot).
      ['22012', pgError('22012'), undefined],
      ['2200H', pgError('2200H'), undefined],
      ['23502', pgError('23502'), undefined],
      ['42601', pgError('42601'), undefined],
      ['22021 without severity', Object.assign(new Error('x'), { code: '22021' }), undefined],
      ['a string', '22021', undefined],
    ];
    const errors: unknown[] = [];
    const db = createMcpEndpoint({
      serverInfo: { name: 'test', version: '1.0.0' },
      tools: thrown.map(([, error], i) => ({
        name: `t${i}`,
        inputSchema: { type: 'object' as const },
        handler: () => Promise.reject(error),
      })),
      authenticate: () => ({ id: 'alice' }),
      onError: (e) => errors.push(e),
    });
    for (const [i, [label, , code]] of thrown.entries()) {
      const r = await db(post(call(`t${i}`)));
      const body = await r.json();
      expect(JSON.stringify(body), label).not.toContain('secret');
      if (code === undefined) {
        expect([r.status, body.error.code], label).toEqual([500, -32603]);
        continue;
      }
      expect([r.status, body.error.code], label).toEqual([200, code]);
      const state = label.split(' ').at(-1);
      expect(body.error.message, label).toContain(`SQLSTATE ${state}`);
      expect(body.error.data, label).toEqual({ sqlstate: state });
    }
    // The operator still hears of every one.
    expect(errors).toHaveLength(thrown.length);
  });

  it("tells onError of a handler's own -32603 with its cause, and of no other McpError", async () => {
    const heard: unknown[] = [];
    const cause = new Error('ECONNREFUSED 127.0.0.1:6379');
    const faulty = createMcpEndpoint({
      serverInfo: { name: 'test', version: '1.0.0' },
      tools: [
        {
          name: 'store_down',
          inputSchema: { type: 'object' as const },
          handler: () => {
            // As the gate throws it: the cause set on the error, never sent.
            throw Object.defineProperty(
              new McpError(-32603, 'Nothing was changed: the store is unavailable.'),
              'cause',
              { value: cause },
            );
          },
        },
        {
          name: 'bad_input',
          inputSchema: { type: 'object' as const },
          handler: () => Promise.reject(new McpError(-32602, 'bad input')),
        },
      ],
      authenticate: () => ({ id: 'alice' }),
      onError: (e) => heard.push(e),
    });
    const down = await faulty(post(call('store_down')));
    expect((await down.json()).error.code).toBe(-32603);
    const bad = await faulty(post(call('bad_input')));
    expect((await bad.json()).error.code).toBe(-32602);
    expect(heard).toHaveLength(1);
    expect((heard[0] as McpError).code).toBe(-32603);
    expect((heard[0] as Error).cause).toBe(cause);
    // An onError that throws changes nothing the client reads.
    const throwing = createMcpEndpoint({
      serverInfo: { name: 'test', version: '1.0.0' },
      tools: [
        {
          name: 'store_down',
          inputSchema: { type: 'object' as const },
          handler: () => Promise.reject(new McpError(-32603, 'Nothing was changed: store down.')),
        },
      ],
      authenticate: () => ({ id: 'alice' }),
      onError: () => {
        throw new Error('log sink full');
      },
    });
    const answered = await throwing(post(call('store_down')));
    expect(answered.status).toBe(503);
    expect((await answered.json()).error.message).toBe('Nothing was changed: store down.');
  });

  it('answers a database or service that cannot be reached with -32603 and 503, saying nothing of the error', async () => {
    // A Node system error: `code` with a `syscall`, as sockets and DNS throw them.
    const socket = (code: string) =>
      Object.assign(new Error(`connect ${code} 10.0.0.7:5432 secret-host`), {
        code,
        syscall: 'connect',
      });
    const pgError = (code: string) =>
      Object.assign(new Error('terminating connection: secret'), { code, severity: 'FATAL' });
    const unreachable = 'could not be reached. Retry later.';
    const thrown: [string, unknown, string][] = [
      ['ECONNREFUSED', socket('ECONNREFUSED'), unreachable],
      ['ENOTFOUND', socket('ENOTFOUND'), unreachable],
      [
        'wrapped ECONNRESET',
        new Error('query failed', { cause: socket('ECONNRESET') }),
        unreachable,
      ],
      ['57P01', pgError('57P01'), unreachable],
      ['08006', pgError('08006'), unreachable],
      ['53300', pgError('53300'), unreachable],
      ['25006, a read-only standby', pgError('25006'), unreachable],
      // A new connection refused by the server's configuration: no such role, password, database.
      ['28000, no such role', pgError('28000'), unreachable],
      ['28P01, wrong password', pgError('28P01'), unreachable],
      ['3D000, no such database', pgError('3D000'), unreachable],
      // Any other FATAL ends the session, or refuses to start one: a database closed to
      // connections, no CONNECT privilege, an idle transaction's timeout.
      ['55000, not accepting connections', pgError('55000'), unreachable],
      ['42501 at the start of a session', pgError('42501'), unreachable],
      ['25P03, idle in transaction too long', pgError('25P03'), unreachable],
      [
        'a PANIC',
        Object.assign(new Error('secret'), { code: 'XX000', severity: 'PANIC' }),
        unreachable,
      ],
      [
        '55000 from a server in Russian',
        Object.assign(new Error('secret'), {
          code: '55000',
          severity: 'ВАЖНО',
          file: 'postinit.c',
        }),
        unreachable,
      ],
      // @mrtr/sql's NoConnectionError: the pool could not open a session at all.
      [
        'no connection (08004)',
        Object.assign(new Error('refused: secret'), { code: '08004' }),
        unreachable,
      ],
      // A server set to another language words the severity in it; the routine stays.
      [
        '3D000 from a server in Russian',
        Object.assign(new Error('secret'), {
          code: '3D000',
          severity: 'ВАЖНО',
          routine: 'InitPostgres',
        }),
        unreachable,
      ],
      [
        '28P01 from a server in Italian',
        Object.assign(new Error('secret'), { code: '28P01', severity: 'FATALE', file: 'auth.c' }),
        unreachable,
      ],
      [
        'pg, TLS asked of a server without it',
        new Error('The server does not support SSL connections'),
        unreachable,
      ],
      // A database that gave up and rolled back: a deadlock, a cancel or timeout, no room.
      ...['40001', '40P01', '55P03', '57014', '53100', '58030'].map(
        (code): [string, unknown, string] => [
          code,
          Object.assign(new Error('canceling statement: secret'), { code, severity: 'ERROR' }),
          'gave up on this request',
        ],
      ),
      ['pg without code', new Error('Connection terminated unexpectedly'), unreachable],
      [
        'pg-pool, every client busy',
        new Error('timeout exceeded when trying to connect'),
        unreachable,
      ],
      ['pg, query_timeout', new Error('Query read timeout'), unreachable],
      ['pg-pool ended', new Error('Cannot use a pool after calling end on the pool'), unreachable],
      // @mrtr/sql's ConnectionLostError: a SQLSTATE as code, no severity.
      [
        'lost before COMMIT',
        Object.assign(new Error('lost: secret'), { code: '08006' }),
        unreachable,
      ],
      [
        'lost at COMMIT',
        Object.assign(new Error('lost: secret'), { code: '08007' }),
        'may or may not',
      ],
      // pgPoolDriver's deadline (@mrtr/sql): an error of its own, branded.
      [
        'a deadline',
        Object.defineProperty(
          Object.assign(new Error('x'), { code: 'ETIMEDOUT' }),
          SERVICE_UNAVAILABLE,
          {
            value: true,
          },
        ),
        unreachable,
      ],
    ];
    const messageThrows = new (class extends Error {
      override get message(): string {
        throw new Error('no message');
      }
    })();
    const revoked = () => {
      const { proxy, revoke } = Proxy.revocable(new Error('x'), {});
      revoke();
      return proxy;
    };
    const prototypeThrows = new Proxy(new Error('x'), {
      getPrototypeOf() {
        throw new Error('no prototype');
      },
    });
    // Not an outage, or nothing that can be read as one: an internal error with its id.
    const others: unknown[] = [
      Object.assign(new Error('x'), { code: 'ERR_INVALID_ARG_TYPE' }),
      new Error('connect ECONNREFUSED 127.0.0.1:5432'),
      Object.assign(new Error('x'), { code: '42601', severity: 'ERROR' }),
      Object.assign(new Error('x'), { code: '57000', severity: 'ERROR' }),
      // 55000 of a statement (currval before nextval): its own error, not an outage.
      Object.assign(new Error('x'), { code: '55000', severity: 'ERROR', routine: 'currval_oid' }),
      Object.assign(new Error('x'), { code: '40002', severity: 'ERROR' }),
      Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), // no syscall: a tool's own
      { code: 'ECONNREFUSED', syscall: 'connect' }, // not an Error
      new Error('bad input', { cause: { code: 'ECONNREFUSED', syscall: 'connect' } }),
      Object.assign(new Error('x'), { code: '08<">', severity: 'FATAL' }),
      // 3D000 of a statement on a working connection (DROP DATABASE of no such name): its own error.
      Object.assign(new Error('database "x" does not exist'), { code: '3D000', severity: 'ERROR' }),
      Object.assign(new Error('x'), { code: '3D000', severity: 'ОШИБКА', routine: 'dropdb' }),
      // Class 28 raised on a working session: a function's RAISE, an extension's password check.
      Object.assign(new Error('x'), {
        code: '28000',
        severity: 'ERROR',
        routine: 'exec_stmt_raise',
      }),
      Object.assign(new Error('x'), { code: '28P01', severity: 'ERROR', file: 'passwordcheck.c' }),
      messageThrows,
      prototypeThrows,
      Object.defineProperty(new Error('x'), 'code', {
        get() {
          throw new Error('no code');
        },
      }),
      revoked(),
    ];
    const errors: unknown[] = [];
    const down = createMcpEndpoint({
      serverInfo: { name: 'test', version: '1.0.0' },
      tools: [...thrown.map(([, error]) => error), ...others].map((error, i) => ({
        name: `t${i}`,
        inputSchema: { type: 'object' as const },
        handler: () => Promise.reject(error),
      })),
      authenticate: () => ({ id: 'alice' }),
      onError: (e) => errors.push(e),
    });
    for (const [i, [label, , says]] of thrown.entries()) {
      const r = await down(post(call(`t${i}`)));
      const body = await r.json();
      expect([r.status, body.error.code], label).toEqual([503, -32603]);
      expect(body.error.message, label).toContain(says);
      for (const leak of ['secret', '10.0.0.7', 'ECONN', 'SQLSTATE'])
        expect(JSON.stringify(body), label).not.toContain(leak);
    }
    for (const i of others.keys()) {
      const r = await down(post(call(`t${thrown.length + i}`)));
      const body = await r.json();
      // With the request's id: the answer of this request, not the endpoint's last resort.
      expect([r.status, typeof body.id, body.error.message], String(i)).toEqual([
        500,
        'number',
        'Internal error',
      ]);
    }
    // The operator still hears of every one.
    expect(errors).toHaveLength(thrown.length + others.length);
  });

  it('requires application/json, the media type exactly', async () => {
    const r = await send(post(call('echo'), { 'content-type': 'text/plain' }));
    expect(r.status).toBe(415);
    // A longer type that begins the same, or a list: another media type, not JSON-RPC.
    for (const other of [
      'application/json-patch+json',
      'application/jsonx',
      'application/json, text/plain',
    ]) {
      const refused = await send(post(call('echo'), { 'content-type': other }));
      expect([other, refused.status, refused.body.error.code]).toEqual([other, 415, -32600]);
    }
    for (const same of ['Application/JSON', 'application/json ; charset="UTF-8"']) {
      const served = await send(post(call('echo', { text: 'y' }), { 'content-type': same }));
      expect([same, served.body.result.content[0].text]).toEqual([same, 'y']);
    }
  });

  it('refuses a body in another charset or a content coding (415), and says what it takes', async () => {
    for (const charset of ['utf-16', 'latin1', '"iso-8859-1"']) {
      const r = await send(
        post(call('echo'), { 'content-type': `application/json; charset=${charset}` }),
      );
      expect([r.status, r.body.error.code]).toEqual([415, -32600]);
      expect(r.body.error.message).toMatch(/send UTF-8/);
    }
    for (const ok of ['utf-8', 'UTF8', '"utf-8"']) {
      const r = await send(
        post(call('echo', { text: 'é' }), { 'content-type': `application/json; charset=${ok}` }),
      );
      expect(r.body.result.content[0].text).toBe('é');
    }
    const gz = await send(post(call('echo'), { 'content-encoding': 'gzip' }));
    expect([gz.status, gz.body.error.code]).toEqual([415, -32600]);
    expect(gz.headers.get('accept-encoding')).toBe('identity');
    const identity = await send(
      post(call('echo', { text: 'x' }), { 'content-encoding': 'identity' }),
    );
    expect(identity.body.result.content[0].text).toBe('x');
  });
});
