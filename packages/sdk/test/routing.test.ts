/**
 * `registerGatedTool` on an `McpServer` as applications build them: tools
 * registered before and after it, listing, arguments, the `RegisteredTool`
 * it returns, the principal, and errors that are not refusals.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/server';
import { ConfirmationGate, confirm, type FormFields, type GatedToolDeclaration } from '@mrtr/gate';
import { MemoryReplayStore, type ReplayStore, ReplayStoreUnavailableError } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type GatedToolOptions, registerGatedTool, serveBothEras } from '../src/index.js';
import { callTool, fetchFor, officialClient, textOf } from './harness.js';

const yes = () => ({ action: 'accept', content: { confirm: true } }) as const;
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of opened.splice(0).reverse()) await x.close();
});

function gateOn(store: ReplayStore = new MemoryReplayStore()) {
  return new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: new Uint8Array(randomBytes(32)) }] }),
    store,
  });
}

function deleting(
  records: Set<string>,
  name = 'delete_record',
  perform?: () => Promise<never>,
): GatedToolDeclaration<{ id: string }, string, FormFields, void> {
  return {
    name,
    title: 'Delete a record',
    description: 'Delete a record; a person confirms first.',
    args: z.object({ id: z.string().max(8) }),
    form: { confirm: confirm({ title: 'Yes' }) },
    ask: async ({ args, principal }) => ({
      message: `${principal}: delete ${args.id}?`,
      view: args.id,
    }),
    perform:
      perform ?? (async ({ view }) => textResult(`Deleted ${view}: ${records.delete(view)}.`)),
  };
}

/** A server built by `build`, served for both eras; a client of it as alice. */
async function serve(
  build: (server: McpServer) => void,
  era: 'modern' | 'legacy' = 'modern',
  person: (() => ReturnType<typeof yes>) | undefined = yes,
) {
  const handler = serveBothEras(() => {
    const server = new McpServer({ name: 'routing', version: '0' });
    build(server);
    return server;
  });
  opened.push(handler);
  const client: Client = await officialClient(fetchFor(handler), 'alice', era, person);
  opened.push(client);
  return client;
}

function echo(server: McpServer) {
  server.registerTool(
    'echo',
    { description: 'Echo', inputSchema: z.object({ say: z.string() }) },
    ({ say }) => ({ content: [{ type: 'text', text: say }] }),
  );
}

describe('registration', () => {
  it.each([
    'before',
    'after',
  ] as const)('tools registered %s the gated tool keep working, in both eras', async (order) => {
    for (const era of ['modern', 'legacy'] as const) {
      const records = new Set(['r1']);
      const gate = gateOn();
      const client = await serve((server) => {
        if (order === 'before') echo(server);
        registerGatedTool(server, gate, deleting(records));
        if (order === 'after') echo(server);
      }, era);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { say: 'hi' } }))).toBe('hi');
      expect(
        textOf(await client.callTool({ name: 'delete_record', arguments: { id: 'r1' } })),
      ).toBe('Deleted r1: true.');
      // Unknown tools are still the SDK's JSON-RPC error.
      expect((await callTool(client, { name: 'nope', arguments: {} })).error?.code).toBe(-32602);
    }
  });

  it("lists the declaration's inputSchema, title and annotations", async () => {
    const client = await serve((server) =>
      registerGatedTool(server, gateOn(), deleting(new Set())),
    );
    const [tool] = (await client.listTools()).tools;
    expect(tool).toMatchObject({
      name: 'delete_record',
      title: 'Delete a record',
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string', maxLength: 8 } },
        required: ['id'],
        additionalProperties: false,
      },
      annotations: { destructiveHint: true, idempotentHint: false },
    });
  });

  it('invalid or undeclared arguments are an isError result naming the argument', async () => {
    const records = new Set(['r1']);
    const client = await serve((server) => registerGatedTool(server, gateOn(), deleting(records)));
    const tooLong = await callTool(client, {
      name: 'delete_record',
      arguments: { id: 'x'.repeat(9) },
    });
    expect(tooLong.result?.isError).toBe(true);
    expect(textOf(tooLong.result)).toMatch(/^Invalid arguments for tool delete_record: id: /);
    const extra = await callTool(client, {
      name: 'delete_record',
      arguments: { id: 'r1', force: true },
    });
    expect(textOf(extra.result)).toMatch(/force: is not an argument of this tool/);
    expect(records.has('r1')).toBe(true);
  });

  it('registering the same name twice throws', () => {
    const server = new McpServer({ name: 'twice', version: '0' });
    const gate = gateOn();
    registerGatedTool(server, gate, deleting(new Set()));
    expect(() => registerGatedTool(server, gate, deleting(new Set()))).toThrow(
      /already registered/,
    );
  });

  it('several gated tools on one server each keep their own confirmation', async () => {
    const records = new Set(['r1', 'r2']);
    const gate = gateOn();
    const client = await serve((server) => {
      registerGatedTool(server, gate, deleting(records, 'delete_a'));
      registerGatedTool(server, gate, deleting(records, 'delete_b'));
    });
    const asked = await callTool(client, { name: 'delete_a', arguments: { id: 'r1' } });
    const elsewhere = await callTool(client, {
      name: 'delete_b',
      arguments: { id: 'r1' },
      requestState: asked.result?.requestState,
      inputResponses: { confirm: yes() },
    });
    expect(elsewhere.error?.code).toBe(-32602);
    expect(textOf(await client.callTool({ name: 'delete_b', arguments: { id: 'r2' } }))).toBe(
      'Deleted r2: true.',
    );
    expect([...records]).toEqual(['r1']);
  });
});

describe('the RegisteredTool', () => {
  it('disable, enable, rename and remove', async () => {
    const records = new Set(['r1', 'r2']);
    const gate = gateOn();
    let registered: RegisteredTool | undefined;
    // On a 2025-era session one instance serves every call: the one this RegisteredTool belongs to.
    const client = await serve((server) => {
      registered = registerGatedTool(server, gate, deleting(records));
    }, 'legacy');
    const call = (name: string, id: string) => callTool(client, { name, arguments: { id } });
    registered?.disable();
    expect((await call('delete_record', 'r1')).error?.message).toMatch(/disabled/);
    registered?.enable();
    expect(textOf((await call('delete_record', 'r1')).result)).toBe('Deleted r1: true.');
    registered?.update({ name: 'remove_record' });
    expect((await call('delete_record', 'r2')).error?.message).toMatch(/not found/);
    expect(textOf((await call('remove_record', 'r2')).result)).toBe('Deleted r2: true.');
    registered?.remove();
    expect((await call('remove_record', 'r2')).error?.message).toMatch(/not found/);
    expect(() =>
      registered?.update({ callback: () => ({ content: [{ type: 'text', text: 'bypass' }] }) }),
    ).toThrow(TypeError);
  });
});

describe('principal and errors', () => {
  async function gatedWith(
    options: GatedToolOptions,
    declaration = deleting(new Set(['r1'])),
    store?: ReplayStore,
  ) {
    const gate = gateOn(store);
    return serve((server) => registerGatedTool(server, gate, declaration, options));
  }

  it('the principal comes from authInfo, or from the hook', async () => {
    const fromAuth = await gatedWith({});
    const asked = await callTool(fromAuth, { name: 'delete_record', arguments: { id: 'r1' } });
    const form = (asked.result?.inputRequests as Record<string, { params: { message: string } }>)
      .confirm;
    expect(form?.params.message).toBe('alice: delete r1?');
    const hooked = await gatedWith({ principal: (ctx) => `team/${ctx.http?.authInfo?.clientId}` });
    const again = await callTool(hooked, { name: 'delete_record', arguments: { id: 'r1' } });
    expect(JSON.stringify(again.result)).toContain('team/alice: delete r1?');
  });

  it('a call without a principal is refused with -32603, nothing asked', async () => {
    const client = await gatedWith({ principal: () => undefined });
    const refused = await callTool(client, { name: 'delete_record', arguments: { id: 'r1' } });
    expect(refused.error?.code).toBe(-32603);
    expect(refused.error?.message).toMatch(/needs an authenticated principal/);
  });

  it('what the tool throws is -32603 "Internal error" for the client, the error for onError', async () => {
    const seen: unknown[] = [];
    const secret = new Error('connection to db-7.internal refused');
    const client = await gatedWith(
      { onError: (e) => seen.push(e) },
      deleting(new Set(['r1']), 'delete_record', async () => {
        throw secret;
      }),
    );
    const failed = await client.callTool({ name: 'delete_record', arguments: { id: 'r1' } }).then(
      () => undefined,
      (e: { code: number; message: string }) => e,
    );
    expect(failed?.code).toBe(-32603);
    expect(failed?.message).toBe('Internal error');
    expect(seen).toEqual([secret]);
  });

  it('a database the tool reads that cannot be reached is -32603 saying so, never its own text', async () => {
    const seen: unknown[] = [];
    const refused = Object.assign(new Error('connect ECONNREFUSED db-7.internal:5432'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    const client = await gatedWith(
      { onError: (e) => seen.push(e) },
      deleting(new Set(['r1']), 'delete_record', async () => {
        throw refused;
      }),
    );
    const failed = await client.callTool({ name: 'delete_record', arguments: { id: 'r1' } }).then(
      () => undefined,
      (e: { code: number; message: string }) => e,
    );
    expect(failed?.code).toBe(-32603);
    expect(failed?.message).toContain('could not be reached. Retry later.');
    expect(failed?.message).not.toContain('db-7');
    expect(failed?.message).not.toContain('ECONNREFUSED');
    expect(seen).toEqual([refused]);
  });

  it('a database refusing a value of the request is -32602 naming the SQLSTATE, as on @mrtr/server', async () => {
    const conflict = Object.assign(
      new Error('duplicate key value (id)=(r1-secret) violates "pk"'),
      {
        code: '23505',
        severity: 'ERROR',
      },
    );
    const client = await gatedWith(
      {},
      deleting(new Set(['r1']), 'delete_record', async () => {
        throw conflict;
      }),
    );
    const failed = await client.callTool({ name: 'delete_record', arguments: { id: 'r1' } }).then(
      () => undefined,
      (e: { code: number; message: string; data?: unknown }) => e,
    );
    expect(failed?.code).toBe(-32602);
    expect(failed?.message).toContain('SQLSTATE 23505');
    expect(failed?.message).not.toContain('r1-secret');
    expect(failed?.data).toEqual({ sqlstate: '23505' });
  });

  it('an unavailable replay store is -32603 saying nothing was changed, and onError hears why', async () => {
    const records = new Set(['r1']);
    const cause = new ReplayStoreUnavailableError('redis: connection refused');
    const down: ReplayStore = {
      once: async () => {
        throw cause;
      },
    };
    const seen: unknown[] = [];
    const client = await gatedWith({ onError: (e) => seen.push(e) }, deleting(records), down);
    const failed = await client.callTool({ name: 'delete_record', arguments: { id: 'r1' } }).then(
      () => undefined,
      (e: { code: number; message: string }) => e,
    );
    expect(failed?.code).toBe(-32603);
    expect(failed?.message).toMatch(/This request changed nothing/);
    expect(failed?.message).not.toMatch(/redis/);
    expect(records.has('r1')).toBe(true);
    // The client is told little; the operator gets the gate's error with its cause.
    expect(seen).toHaveLength(1);
    expect((seen[0] as { code?: number }).code).toBe(-32603);
    expect((seen[0] as Error).cause).toBe(cause);
  });
});

describe('other methods', () => {
  /** A 2025-era session on a server built by `build`: `rpc(body)` answers its response text. */
  async function session(build: (server: McpServer) => void) {
    const handler = serveBothEras(() => {
      const server = new McpServer({ name: 'other', version: '0' });
      build(server);
      return server;
    });
    opened.push(handler);
    let id: string | null = null;
    const rpc = async (method: string, params: Record<string, unknown> = {}) => {
      const response = await handler.fetch(
        new Request('http://records.test/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(id ? { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } : {}),
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        }),
        { authInfo: { token: 't', clientId: 'alice', scopes: [] } },
      );
      id ??= response.headers.get('mcp-session-id');
      return response.text();
    };
    const info = { name: 'raw', version: '0' };
    await rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: info });
    return rpc;
  }

  it('an unknown method is still -32601', async () => {
    const rpc = await session((server) => registerGatedTool(server, gateOn(), deleting(new Set())));
    expect(await rpc('acme/ping')).toContain('"code":-32601');
  });

  it('a fallback handler the server had keeps answering other methods', async () => {
    const seen: string[] = [];
    const rpc = await session((server) => {
      server.server.fallbackRequestHandler = async (request) => {
        seen.push(request.method);
        if (request.method === 'acme/ping') return { pong: true };
        throw new Error('not mine');
      };
      registerGatedTool(server, gateOn(), deleting(new Set()));
    });
    expect(await rpc('acme/ping')).toContain('"pong":true');
    expect(await rpc('acme/other')).toContain('not mine');
    expect(seen).toEqual(['acme/ping', 'acme/other']);
  });
});

describe('hostile input', () => {
  it('odd requestState and arguments get JSON-RPC answers, never HTTP 500, and delete nothing', async () => {
    const records = new Set(['r1']);
    const gate = gateOn();
    const handler = serveBothEras(() => {
      const server = new McpServer({ name: 'hostile', version: '0' });
      registerGatedTool(server, gate, deleting(records));
      return server;
    });
    opened.push(handler);
    // Raw JSON: a nesting this deep is past what JSON.stringify itself can write.
    const deep = `${'['.repeat(20_000)}"x"${']'.repeat(20_000)}`;
    const cases: [string, RegExp][] = [
      ['"arguments":{"id":"r1"},"requestState":42', /"code":-32602/],
      ['"arguments":{"id":"r1"},"requestState":{"forged":true}', /"code":-32602/],
      [`"arguments":{"id":"r1"},"requestState":"v1.k1.${'A'.repeat(1_000_000)}"`, /"code":-32602/],
      ['"arguments":{"id":"r1"},"requestState":"v1.k1.\\u0000\\ud800"', /"code":-32602/],
      ['"arguments":{"id":"\\ud800\\u0000"}', /"code":-32602|"isError":true/],
      [`"arguments":{"id":"r1","deep":${deep}}`, /"isError":true|"code":-326/],
      [`"arguments":{"id":${deep}}`, /"isError":true|"code":-326/],
      ['"arguments":"r1"', /"code":-32602/],
      [
        `"arguments":{"id":"r1"},"inputResponses":{"confirm":${deep}}`,
        /"code":-326|input_required/,
      ],
    ];
    const meta =
      '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}';
    for (const [params, answer] of cases) {
      const response = await handler.fetch(
        new Request('http://records.test/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'delete_record',
          },
          body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_record",${params},${meta}}}`,
        }),
        { authInfo: { token: 't', clientId: 'alice', scopes: [] } },
      );
      const label = params.slice(0, 80);
      expect(response.status, label).toBeLessThan(500);
      expect(await response.text(), label).toMatch(answer);
    }
    expect(records.has('r1')).toBe(true);
  });
});
