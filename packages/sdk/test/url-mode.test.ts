/**
 * URL mode through the bridge: a gated tool whose level is `url` (or
 * `form-or-url`) on a gate with an approvals channel, called by the official
 * client declaring only URL elicitation (`elicitation: { url: {} }`), on
 * 2026-07-28 and on a 2025-era session. The channel is a fake in memory
 * (`@mrtr/approval-page` is no dependency of this package) whose decisions
 * the test sets as the approval page would.
 */
import { randomBytes } from 'node:crypto';
import {
  Client,
  type ElicitRequestURLParams,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import {
  type ApprovalBinding,
  type ApprovalChannel,
  type ApprovalDecision,
  ConfirmationGate,
  confirm,
  type GateAuditEvent,
  type LevelPolicy,
  type PendingApproval,
} from '@mrtr/gate';
import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerGatedTool, serveBothEras } from '../src/index.js';
import { callTool, fetchFor, TOKENS, textOf, Wire } from './harness.js';

const TOOL = 'delete_record';
const ORIGIN = 'https://records.test/approve/';

/** An approval channel in memory, as `@mrtr/gate`'s own URL-mode test has it. */
class FakeChannel implements ApprovalChannel {
  readonly opened = new Map<string, PendingApproval>();
  readonly decided = new Map<string, ApprovalDecision>();
  async open(approval: PendingApproval): Promise<string> {
    this.opened.set(approval.id, approval);
    return this.url(approval.id);
  }
  url(id: string): string {
    return `${ORIGIN}${id}`;
  }
  async decision(id: string, binding: ApprovalBinding): Promise<ApprovalDecision> {
    const a = this.opened.get(id);
    if (!a) return { status: 'unknown' };
    for (const k of [
      'nonce',
      'principal',
      'operation',
      'argumentsDigest',
      'questionDigest',
    ] as const)
      if (a[k] !== binding[k]) return { status: 'unknown' };
    return this.decided.get(id) ?? { status: 'pending' };
  }
  async withdraw(id: string): Promise<void> {
    if (!this.decided.has(id)) this.decided.set(id, { status: 'denied', decidedAt: Date.now() });
  }
  /** What the person does on the page for the approval `url` names. */
  decide(url: string, status: 'approved' | 'denied'): void {
    const id = url.slice(ORIGIN.length);
    expect(this.opened.has(id)).toBe(true);
    this.decided.set(
      id,
      status === 'approved'
        ? { status, via: 'url', decidedAt: Date.now() }
        : { status, decidedAt: Date.now() },
    );
  }
}

/** A server whose `delete_record` has `level`, on a gate with the channel or without one. */
type Level = LevelPolicy | (() => LevelPolicy);

function setup(level: Level | undefined, withApprovals: boolean) {
  const errors: unknown[] = [];
  const records = new Set(['r1', 'r2']);
  const performed: string[] = [];
  const audit: GateAuditEvent[] = [];
  const channel = new FakeChannel();
  const gate = new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: randomBytes(32) }] }),
    store: new MemoryReplayStore(),
    ...(withApprovals ? { approvals: channel } : {}),
    audit: (event) => {
      audit.push(event);
    },
  });
  const factory = () => {
    const server = new McpServer({ name: 'records', version: '1.0.0' });
    registerGatedTool(
      server,
      gate,
      {
        name: TOOL,
        description: 'Delete a record; a person approves first.',
        args: z.object({ id: z.string() }),
        form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
        async ask({ args }) {
          return { message: `Delete record ${args.id}? This cannot be undone.`, view: args.id };
        },
        ...(level !== undefined ? { level } : {}),
        perform: async ({ view, confirmation }) => {
          performed.push(`${view}:${confirmation.level}`);
          records.delete(view);
          return textResult(`Deleted ${view}.`);
        },
      },
      { onError: (error) => void errors.push(error) },
    );
    return server;
  };
  return { records, performed, audit, errors, channel, handler: serveBothEras(factory) };
}

type Setup = ReturnType<typeof setup>;

/**
 * The official client as alice, declaring only URL elicitation (or only
 * `elicitation` as given), on 2026-07-28 (`modern`, pinned) or the 2025-era
 * default (`legacy`). The `elicitation/create` requests its handler gets (a
 * 2025-era session's, or the official client's own on 2026-07-28 when it
 * fulfils an `input_required` itself) go to `person` and are recorded.
 */
async function urlOnlyClient(
  t: Setup,
  era: 'modern' | 'legacy',
  person: (params: ElicitRequestURLParams) => ElicitResult = () => ({ action: 'accept' }),
  wire?: Wire,
  elicitation: { url: Record<string, never> } | { form: Record<string, never> } = { url: {} },
) {
  const client = new Client(
    { name: 'url-only', version: '0.0.0' },
    {
      capabilities: { elicitation },
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  );
  const asked: ElicitRequestURLParams[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params;
    if (params.mode !== 'url') throw new Error(`a form was asked: ${params.message}`);
    asked.push(params);
    return person(params);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://records.test/mcp'), {
      requestInit: { headers: { Authorization: `Bearer ${TOKENS.alice}` } },
      fetch: fetchFor(t.handler, wire),
    }),
  );
  clients.push(client);
  return { client, asked };
}

const clients: Client[] = [];
const handlers: Setup['handler'][] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const h of handlers.splice(0)) await h.close();
});
function server(level: Level | undefined, withApprovals = true): Setup {
  const t = setup(level, withApprovals);
  handlers.push(t.handler);
  return t;
}

const accept = { confirm: { action: 'accept' } };
const MESSAGE = 'Delete record r1? This cannot be undone.';
const PENDING =
  'Nothing was decided on the approval page yet: open the link, sign in, and approve or deny; then answer again.';

interface UrlRequest {
  method: string;
  params: { mode: string; message: string; url: string; elicitationId?: string };
}

describe('URL mode on 2026-07-28', () => {
  it.each([
    'url',
    'form-or-url',
  ] as const)('level %s: round 1 is a URL-mode question; approved, the retry deletes once', async (level) => {
    const t = server(level);
    const { client, asked } = await urlOnlyClient(t, 'modern');
    const first = await callTool(client, { name: TOOL, arguments: { id: 'r1' } });
    expect(first.result?.resultType).toBe('input_required');
    const request = (first.result?.inputRequests as Record<string, UrlRequest>).confirm;
    expect(request).toEqual({
      method: 'elicitation/create',
      params: { mode: 'url', message: MESSAGE, url: expect.stringMatching(ORIGIN) },
    });
    const url = request?.params.url as string;
    expect(url).toMatch(/\/approve\/[\w-]{22}$/);
    const retry = {
      name: TOOL,
      arguments: { id: 'r1' },
      requestState: first.result?.requestState,
      inputResponses: accept,
    };
    // Accepted before anything was decided on the page: the same URL and ticket again.
    const waiting = await callTool(client, retry);
    expect(waiting.result?.resultType).toBe('input_required');
    expect(waiting.result?.requestState).toBe(first.result?.requestState);
    expect((waiting.result?.inputRequests as Record<string, UrlRequest>).confirm?.params.url).toBe(
      url,
    );
    expect(t.performed).toEqual([]);

    t.channel.decide(url, 'approved');
    const done = await callTool(client, retry);
    expect(textOf(done.result)).toBe('Deleted r1.');
    expect(done.result?.isError).toBe(false);
    // The same accept again: the recorded result, nothing performed a second time.
    const again = await callTool(client, retry);
    expect(textOf(again.result)).toBe('Deleted r1.');
    expect(t.performed).toEqual(['r1:url']);
    expect(t.audit.find((e) => e.outcome === 'completed')?.confirmation).toBe('url');
    expect(asked).toEqual([]); // in-band on 2026-07-28: no server-to-client request
  });

  it("the official client's own retry loop: its elicitation/create handler sees the URL", async () => {
    const t = server('url');
    let round = 0;
    const { client, asked } = await urlOnlyClient(t, 'modern', (params) => {
      if (++round === 2) t.channel.decide(params.url, 'approved');
      return { action: 'accept' };
    });
    const result = await client.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(textOf(result)).toBe('Deleted r1.');
    expect(asked).toMatchObject([
      { mode: 'url', message: MESSAGE, url: expect.stringMatching(ORIGIN) },
      { mode: 'url', message: `${PENDING}\n\n${MESSAGE}`, url: asked[0]?.url },
    ]);
    expect(t.performed).toEqual(['r1:url']);
  });

  it('denied on the page: the retry deletes nothing, and the ticket is used up', async () => {
    const t = server('url');
    const { client } = await urlOnlyClient(t, 'modern');
    const first = await callTool(client, { name: TOOL, arguments: { id: 'r1' } });
    const url = (first.result?.inputRequests as Record<string, UrlRequest>).confirm?.params.url;
    t.channel.decide(url as string, 'denied');
    const retry = {
      name: TOOL,
      arguments: { id: 'r1' },
      requestState: first.result?.requestState,
      inputResponses: accept,
    };
    const denied = await callTool(client, retry);
    expect(denied.result).toMatchObject({
      content: [{ type: 'text', text: 'Declined. Nothing was changed.' }],
      isError: false,
    });
    // Approved afterwards: too late, the denial used the ticket up.
    t.channel.decide(url as string, 'approved');
    const late = await callTool(client, retry);
    expect(late.result?.isError).toBe(true);
    expect(textOf(late.result)).toMatch(/already used/);
    expect(t.performed).toEqual([]);
    expect(t.records.has('r1')).toBe(true);
  });
});

describe('URL mode on a 2025-era session', () => {
  it.each([
    'url',
    'form-or-url',
  ] as const)('level %s: the SDK sends elicitation/create in URL mode; approved, the tool deletes once', async (level) => {
    const t = server(level);
    const wire = new Wire();
    let round = 0;
    const { client, asked } = await urlOnlyClient(
      t,
      'legacy',
      (params) => {
        // Round 1: the person has not decided yet; round 2: approved on the page meanwhile.
        if (++round === 2) t.channel.decide(params.url, 'approved');
        return { action: 'accept' };
      },
      wire,
    );
    const result = await client.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Deleted r1.' }],
      isError: false,
    });
    expect(asked).toMatchObject([
      { mode: 'url', message: MESSAGE, url: expect.stringMatching(ORIGIN) },
      { mode: 'url', message: `${PENDING}\n\n${MESSAGE}`, url: asked[0]?.url },
    ]);
    // The SDK's shim adds the elicitationId 2025-era URL mode requires, a fresh one each time.
    const ids = asked.map((params) => params.elicitationId);
    expect(ids.every((id) => /^[\da-f-]{36}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(2);
    expect(t.performed).toEqual(['r1:url']);
    expect(t.audit.map((e) => e.outcome)).toEqual([
      'asked',
      'asked_again',
      'accepted',
      'completed',
    ]);
    // The ticket never leaves the server on a session.
    const traffic = [...wire.sent, ...(await wire.received())].join('\n');
    expect(traffic).not.toContain('"requestState"');
    expect(traffic).toContain('"mode":"url"');
    expect(traffic).not.toContain('notifications/elicitation/complete');
  });

  it('denied on the page: the tool deletes nothing', async () => {
    const t = server('url');
    const { client, asked } = await urlOnlyClient(t, 'legacy', (params) => {
      t.channel.decide(params.url, 'denied');
      return { action: 'accept' };
    });
    const result = await client.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Declined. Nothing was changed.' }],
      isError: false,
    });
    expect(asked).toHaveLength(1);
    expect(t.performed).toEqual([]);
    expect(t.records.has('r1')).toBe(true);
  });

  it("never decided: asked again up to the SDK's maxRounds (8), then an isError result; nothing runs", async () => {
    const t = server('url');
    const { client, asked } = await urlOnlyClient(t, 'legacy');
    const result = await client.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(result).toEqual({
      content: [
        {
          type: 'text',
          text: "Multi-round-trip request 'tools/call' still required input after 8 rounds (inputRequired.maxRounds)",
        },
      ],
      isError: true,
    });
    expect(asked).toHaveLength(8);
    expect(new Set(asked.map((params) => params.url)).size).toBe(1);
    // Approved afterwards: the ticket stayed in the finished call, so nothing can run it.
    t.channel.decide(asked[0]?.url as string, 'approved');
    expect(t.performed).toEqual([]);
    expect(t.records.has('r1')).toBe(true);
  });
});

describe.each(['modern', 'legacy'] as const)('URL mode on %s, refusals', (era) => {
  it("the client's decline deletes nothing and withdraws the approval", async () => {
    const t = server('url');
    const { client, asked } = await urlOnlyClient(t, era, () => ({ action: 'decline' }));
    const result = await client.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(result).toMatchObject({
      content: [{ type: 'text', text: 'Declined. Nothing was changed.' }],
      isError: false,
    });
    expect(asked).toHaveLength(1);
    // The page now refuses a decision: the channel recorded the withdrawal.
    expect([...t.channel.decided.values()]).toMatchObject([{ status: 'denied' }]);
    expect(t.performed).toEqual([]);
  });

  it('a client that declares only form elicitation gets -32021 naming URL elicitation', async () => {
    const t = server('url');
    const { client } = await urlOnlyClient(t, era, undefined, undefined, { form: {} });
    const refused = await callTool(client, { name: TOOL, arguments: { id: 'r1' } });
    expect(refused.error?.code).toBe(-32021);
    expect(refused.error?.data).toEqual({ requiredCapabilities: { elicitation: { url: {} } } });
    expect(t.channel.opened.size).toBe(0);
    expect(t.performed).toEqual([]);
  });
});

it('a gate without approvals cannot register a tool of level url or form-or-url (TypeError)', () => {
  const gate = new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: randomBytes(32) }] }),
    store: new MemoryReplayStore(),
  });
  for (const level of ['url', 'form-or-url'] as const) {
    const sdk = new McpServer({ name: 'records', version: '1.0.0' });
    expect(() =>
      registerGatedTool(sdk, gate, {
        name: TOOL,
        description: 'Delete a record.',
        args: z.object({ id: z.string() }),
        form: { confirm: confirm({ title: 'Yes' }) },
        ask: async ({ args }) => ({ message: `Delete ${args.id}?`, view: args.id }),
        level,
        perform: async () => textResult('Deleted.'),
      }),
    ).toThrow(/no approvals channel/);
  }
});

describe.each(['modern', 'legacy'] as const)('a gate without approvals, on %s', (era) => {
  it('a URL-only client calling a form-level tool gets -32021 naming form elicitation; nothing runs', async () => {
    const t = server(undefined, false);
    const { client, asked } = await urlOnlyClient(t, era);
    const refused = await callTool(client, { name: TOOL, arguments: { id: 'r1' } });
    expect(refused.error?.code).toBe(-32021);
    // On a session the bridge says where a 2025-era client declares (its data names the mode).
    expect(refused.error?.message).toBe(
      era === 'modern'
        ? 'delete_record needs a person to confirm it through form elicitation; declare elicitation.form in _meta clientCapabilities'
        : 'delete_record needs a person to confirm it through form elicitation, which this session did not declare at initialize',
    );
    expect(refused.error?.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
    expect(asked).toEqual([]);
    expect(t.performed).toEqual([]);
    expect(t.audit.map((e) => [e.outcome, e.reason])).toEqual([['refused', 'capability_missing']]);
  });

  it('a level chosen by a function that says url is a programming error: -32603, nothing runs', async () => {
    const t = server(() => 'url', false);
    const { client, asked } = await urlOnlyClient(t, era);
    const failed = await callTool(client, { name: TOOL, arguments: { id: 'r1' } });
    expect(failed.error).toEqual({ code: -32603, message: 'Internal error', data: undefined });
    expect(String(t.errors[0])).toBe(
      'TypeError: delete_record asks for URL-mode confirmation but the gate has no approvals channel',
    );
    expect(asked).toEqual([]);
    expect(t.performed).toEqual([]);
  });
});
