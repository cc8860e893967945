/**
 * No code path answers on a person's behalf. The real guard is structural:
 * answers come only from the caller's answerer. These tests pin that down.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as api from '../src/index.js';
import { confirmSchema, done, formRequest, scriptedServer } from './helpers.js';

const SRC = join(import.meta.dirname, '../src');
const sources = readdirSync(SRC)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(join(SRC, f), 'utf8') }));

/** Every runtime export of the package, and why it cannot answer for a person. */
const EXPORTS: Record<string, string> = {
  McpClient: 'the client: every method is listed in CLIENT_METHODS',
  capabilitiesFor: 'says what an answerer can show; returns capabilities, never an answer',
  checkRenderable: 'checks a requestedSchema; returns the schema or reasons',
  inspectUrl: 'returns facts and warnings about a URL; opens nothing',
  paramHeaders: 'builds Mcp-Param headers from arguments',
  protocolHeaders: 'builds the protocol headers of a POST',
  McpClientError: 'an error class',
  JsonRpcError: 'an error class',
  TransportError: 'an error class',
  ProtocolError: 'an error class',
  RoundLimitError: 'an error class',
  InvalidAnswerError: 'an error class',
  AbortedError: 'an error class',
  LimitError: 'an error class',
  MAX_LIST_PAGES: 'a number',
  MAX_LISTED_TOOLS: 'a number',
  MAX_LISTING_BYTES: 'a number',
  MAX_KEPT_NOTIFICATIONS: 'a number',
  MAX_KEPT_NOTIFICATION_CHARS: 'a number',
  MAX_QUESTIONS_PER_ROUND: 'a number',
  MAX_FORM_FIELDS: 'a number',
  MAX_FIELD_CHOICES: 'a number',
  MAX_ERROR_MESSAGE_LENGTH: 'a number',
  MAX_RESPONSE_BYTES: 'a number',
  MAX_REDIRECTS: 'a number',
  MAX_REISSUES: 'a number',
};

/** Every method of McpClient.prototype (private ones included), and where its answers come from. */
const CLIENT_METHODS: Record<string, string> = {
  constructor: 'stores options; sends nothing',
  server: 'a getter of the server identity',
  discover: 'server/discover: an InputRequiredResult to it is a protocol error',
  listTools: 'tools/list: an InputRequiredResult to it is a protocol error',
  callTool: 'rounds answered by the answerer only (run)',
  getPrompt: 'rounds answered by the answerer only (run)',
  readResource: 'rounds answered by the answerer only (run)',
  request: 'refuses inputResponses and requestState',
  meta: 'builds _meta',
  send: 'sends params as given',
  run: 'the MRTR loop: inputResponses come from answerInputRequests, which asks the answerer',
};

/** Arguments tried on every exported function. */
const PROBES: unknown[][] = [
  [],
  [undefined],
  [{}],
  [confirmSchema],
  [{ form: async () => ({ action: 'decline' }) }],
  ['https://x.example/', new URL('https://x.example/mcp')],
  ['tools/call', { name: 't', _meta: {} }],
  [[{ name: 'confirm', path: ['confirm'] }], { confirm: true }],
  [{ resultType: 'input_required', inputRequests: { q: formRequest(confirmSchema) } }],
];

/** Every place in `value` that looks like an ElicitResult or an Answerer. */
function answersIn(value: unknown, path = '$', seen = new Set<unknown>()): string[] {
  if (typeof value !== 'object' || value === null || seen.has(value)) return [];
  seen.add(value);
  const found: string[] = [];
  const v = value as Record<string, unknown>;
  if (typeof v.action === 'string' && ['accept', 'decline', 'cancel'].includes(v.action))
    found.push(`${path}.action`);
  if (typeof v.form === 'function' || typeof v.url === 'object')
    found.push(`${path} (an answerer)`);
  for (const [k, child] of Object.entries(v)) found.push(...answersIn(child, `${path}.${k}`, seen));
  return found;
}

/** Answers every request with input wanted: a form, a URL, a nested form, a sampling request. */
const askingEverything = {
  result: {
    resultType: 'input_required',
    inputRequests: {
      form: formRequest(confirmSchema),
      url: {
        method: 'elicitation/create',
        params: { mode: 'url', message: 'go', url: 'https://x.example/' },
      },
      nested: formRequest({ type: 'object', properties: { a: { type: 'object' } } }),
    },
    requestState: 'again',
    tools: [],
  },
};

/** A person who never says yes. */
const refusing: api.Answerer = {
  form: async () => ({ action: 'decline' }),
  url: { ask: async () => ({ action: 'cancel' }), open: () => undefined },
};

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('no answering on a person’s behalf', () => {
  it('never writes an accept itself: every accept sent is the answerer’s own action', () => {
    for (const { file, text } of sources) {
      // Object literals such as {action: 'accept'} or {"action":"accept"} would be a made-up
      // consent (type declarations, `{ action: 'accept'; … }`, end in a semicolon and pass).
      expect(text, file).not.toMatch(/['"`]?action['"`]?\s*:\s*['"`]accept['"`]\s*[,}]/);
    }
  });

  it('exports no helper that approves, confirms or answers for someone', () => {
    const names = Object.keys(api);
    expect(
      names.filter((n) =>
        /auto.?(accept|approve|confirm|answer)|approve|answerFor|elicit/i.test(n),
      ),
    ).toEqual([]);
  });

  it('every export and every client method is one whose answers, if any, come from the answerer', () => {
    // A new export or method fails here until someone has checked it and said why it cannot answer.
    expect(Object.keys(api).sort()).toEqual(Object.keys(EXPORTS).sort());
    expect(Object.getOwnPropertyNames(api.McpClient.prototype).sort()).toEqual(
      Object.keys(CLIENT_METHODS).sort(),
    );
  });

  it('no exported function returns an answer or an answerer, whatever it is given', () => {
    for (const [name, value] of Object.entries(api)) {
      if (typeof value !== 'function' || /^[A-Z]/.test(name)) continue;
      for (const args of PROBES) {
        let out: unknown;
        try {
          out = (value as (...a: unknown[]) => unknown)(...args);
        } catch {
          continue; // refusing bad input is not answering
        }
        expect(answersIn(out), `${name}(${JSON.stringify(args)})`).toEqual([]);
      }
    }
  });

  it('no client method sends an accept the answerer did not give, whatever the server asks', async () => {
    const s = await scriptedServer(() => askingEverything);
    servers.push(s);
    const tool = { name: 't', inputSchema: { type: 'object' } };
    for (const answerer of [undefined, refusing]) {
      const client = new api.McpClient({
        url: s.url,
        ...(answerer ? { answerer } : {}),
        maxRounds: 3,
      });
      const calls: (() => Promise<unknown>)[] = [
        () => client.discover(),
        () => client.listTools(),
        () => client.callTool('t', {}, { tool }),
        () => client.getPrompt('p'),
        () => client.readResource('notes://x'),
        () => client.request('tools/call', { name: 't' }),
        () =>
          client.request('tools/call', { name: 't', inputResponses: { q: { action: 'accept' } } }),
      ];
      for (const call of calls) await call().catch(() => undefined);
    }
    expect(s.requests.length).toBeGreaterThan(10);
    expect(s.requests.filter((r) => r.raw.includes('"accept"'))).toEqual([]);
  });

  it('sends no accept when the answerer never accepts, whatever the server asks', async () => {
    const s = await scriptedServer((_b, n) =>
      n < 3
        ? {
            result: {
              resultType: 'input_required',
              inputRequests: {
                form: formRequest(confirmSchema),
                url: {
                  method: 'elicitation/create',
                  params: { mode: 'url', message: 'go', url: 'https://x.example/' },
                },
                nested: formRequest({ type: 'object', properties: { a: { type: 'object' } } }),
              },
              requestState: 'again',
            },
          }
        : done(),
    );
    servers.push(s);
    const opened: string[] = [];
    const answerer: api.Answerer = {
      form: async () => ({ action: 'decline' }),
      url: { ask: async () => ({ action: 'cancel' }), open: (u) => void opened.push(u) },
    };
    await new api.McpClient({ url: s.url, answerer }).callTool('t');
    expect(s.requests.length).toBe(4);
    expect(s.requests.map((r) => r.raw).join()).not.toMatch(/"accept"/);
    expect(opened).toEqual([]);
  });
});
