/**
 * A small SDK server for the tests: `delete_record {id}` gated with
 * `registerGatedTool`, next to `pick_color`, an SDK-native multi-round tool
 * whose `requestState` is the SDK's own HMAC codec (the server's
 * `requestState.verify`), and `list_records`. Two instances share the
 * records, the ticket key and the replay store, as two replicas would.
 */
import { randomBytes } from 'node:crypto';
import {
  Client,
  type ElicitRequestFormParams,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import {
  type AuthInfo,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  McpServer,
  type ServerOptions,
} from '@modelcontextprotocol/server';
import { ConfirmationGate, confirm, withoutAsking } from '@mrtr/gate';
import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer, type TicketSealerOptions } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { z } from 'zod';
import { type BothErasHandler, registerGatedTool, serveBothEras } from '../src/index.js';

export interface Shared {
  records: Map<string, string>;
  secret: Uint8Array;
  store: MemoryReplayStore;
  codecKey: Uint8Array;
}

export function shared(ids: string[] = []): Shared {
  return {
    records: new Map(ids.map((id) => [id, `owner of ${id}`])),
    secret: new Uint8Array(randomBytes(32)),
    store: new MemoryReplayStore(),
    codecKey: new Uint8Array(randomBytes(32)),
  };
}

/** What {@link instance} may change: the ticket sealer's options, the `McpServer`'s. */
export interface InstanceOptions {
  ticket?: Omit<TicketSealerOptions, 'keys'>;
  server?: ServerOptions;
}

/** One server instance: the factory both eras build their `McpServer`s with. */
export function instance(s: Shared, audit: unknown[] = [], options: InstanceOptions = {}) {
  const gate = new ConfirmationGate({
    sealer: new TicketSealer({ ...options.ticket, keys: [{ kid: 'k1', secret: s.secret }] }),
    store: s.store,
    audit: (event) => {
      audit.push(event);
    },
  });
  const codec = createRequestStateCodec<{ asked: string }>({
    key: s.codecKey,
    bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ''}`,
  });
  const factory = () => {
    const server = new McpServer(
      { name: 'records', version: '1.0.0' },
      { ...options.server, requestState: { verify: codec.verify } },
    );
    server.registerTool(
      'list_records',
      { description: 'List the records.', inputSchema: z.object({}) },
      () => ({ content: [{ type: 'text', text: [...s.records.keys()].sort().join(',') }] }),
    );
    // An SDK-native two-round tool on the server's codec: it must keep working beside the gate.
    server.registerTool(
      'pick_color',
      { description: 'Ask for a color, then say it.', inputSchema: z.object({}) },
      async (_args, ctx) => {
        const state = ctx.mcpReq.requestState<{ asked: string }>();
        if (state === undefined)
          return inputRequired({
            inputRequests: {
              color: inputRequired.elicit({
                message: 'Which color?',
                requestedSchema: {
                  type: 'object',
                  properties: { color: { type: 'string' } },
                  required: ['color'],
                },
              }),
            },
            requestState: await codec.mint({ asked: 'color' }, ctx),
          });
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'color');
        const color = answer.kind === 'elicit' ? answer.content?.color : undefined;
        return { content: [{ type: 'text', text: `${state.asked}: ${String(color)}` }] };
      },
    );
    registerGatedTool(server, gate, {
      name: 'delete_record',
      description: 'Delete a record; a person confirms first.',
      args: z.object({ id: z.string() }),
      form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
      async ask({ args }) {
        if (!s.records.has(args.id)) return withoutAsking(textResult(`No record ${args.id}.`));
        return { message: `Delete record ${args.id}? This cannot be undone.`, view: args.id };
      },
      perform: async ({ view }) => {
        s.records.delete(view);
        return textResult(`Deleted ${view}.`, { structuredContent: { deleted: view } });
      },
    });
    return server;
  };
  return { factory, handler: serveBothEras(factory) };
}

/** Bearer tokens of the tests' principals. */
/** A 2025-era `initialize` that declares form elicitation, as a raw JSON-RPC body. */
export const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: { elicitation: { form: {} } },
    clientInfo: { name: 'raw', version: '0' },
  },
};

export const TOKENS: Record<string, string> = { alice: 'tok-alice', bob: 'tok-bob' };

/** The `authInfo` a token verifier would hand over for `request`. */
export function authInfoOf(request: Request): AuthInfo | undefined {
  const token = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
  const who = Object.entries(TOKENS).find(([, t]) => t === token)?.[0];
  return who ? { token: token as string, clientId: who, scopes: [] } : undefined;
}

/** Every body a {@link fetchFor} carried: requests as sent, responses to them as read (SSE as text). */
export class Wire {
  readonly sent: string[] = [];
  readonly #received: Promise<string>[] = [];
  record(response: Response): void {
    // Not awaited: a 2025-era SSE stream stays open until the client answers what it carries.
    this.#received.push(response.clone().text());
  }
  /** The response bodies, once their streams ended. */
  received(): Promise<string[]> {
    return Promise.all(this.#received);
  }
  /** The `requestState` of every `input_required` result received so far (2026-07-28 JSON bodies). */
  async tickets(): Promise<string[]> {
    return (await this.received()).flatMap((text) => {
      const found = /"requestState":"([^"]+)"/.exec(text);
      return found ? [found[1] as string] : [];
    });
  }
}

/** A `fetch` that serves requests in process with `handler`, as an HTTP front end would. */
export function fetchFor(handler: BothErasHandler, wire?: Wire): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    if (typeof init?.body === 'string') wire?.sent.push(init.body);
    const authInfo = authInfoOf(request);
    if (!authInfo) return new Response(null, { status: 401 });
    const response = await handler.fetch(request, { authInfo });
    // The 2025-era standalone GET stream stays open as long as the session: not recorded.
    if (request.method === 'POST') wire?.record(response);
    return response;
  };
}

/** A JSON-RPC outcome: the result, or the error's code, message and data. */
export type Outcome =
  | { result: Record<string, unknown>; error?: undefined }
  | { error: { code: number; message: string; data?: unknown }; result?: undefined };

/** Await `call` as an {@link Outcome} (JSON-RPC errors caught, others rethrown). */
export async function outcome(call: Promise<unknown>): Promise<Outcome> {
  try {
    return { result: (await call) as Record<string, unknown> };
  } catch (error) {
    const e = error as { code?: unknown; message: string; data?: unknown };
    if (typeof e.code !== 'number') throw error;
    return { error: { code: e.code, message: e.message, data: e.data } };
  }
}

/**
 * `tools/call` as the client sends it, with `requestState` and
 * `inputResponses` in the params when given; an `input_required` result is
 * returned, not fulfilled (the official client's manual mode).
 */
export function callTool(client: Client, params: Record<string, unknown>): Promise<Outcome> {
  return outcome(
    client.request(
      { method: 'tools/call', params: params as { name: string } },
      { allowInputRequired: true },
    ),
  );
}

/** The text of a complete result's content. */
export function textOf(result: Record<string, unknown> | undefined): string {
  const content = (result?.content ?? []) as { text?: string }[];
  return content.map((c) => c.text ?? '').join('\n');
}

export type Person = (params: ElicitRequestFormParams) => ElicitResult | Promise<ElicitResult>;

/**
 * The official client as `who`, on 2026-07-28 (`modern`, pinned; `auto`,
 * probed) or the default 2025-era negotiation (`legacy`), answering each form with `person`
 * (declaring form elicitation unless `person` is `undefined`).
 */
export async function officialClient(
  fetchImpl: typeof fetch,
  who: string,
  era: 'modern' | 'legacy' | 'auto',
  person: Person | undefined,
): Promise<Client> {
  const negotiation = {
    modern: { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const,
    auto: { versionNegotiation: { mode: 'auto' } } as const,
    legacy: {},
  }[era];
  const client = new Client(
    { name: 'sdk-bridge-test', version: '0.0.0' },
    { capabilities: person ? { elicitation: { form: {} } } : {}, ...negotiation },
  );
  if (person)
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params;
      if (params.mode === 'url') return { action: 'decline' };
      return person(params);
    });
  const transport = new StreamableHTTPClientTransport(new URL('http://records.test/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${TOKENS[who]}` } },
    fetch: fetchImpl,
  });
  await client.connect(transport);
  return client;
}
