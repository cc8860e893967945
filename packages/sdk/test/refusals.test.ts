/**
 * What `serveBothEras` answers before a request reaches a tool: error bodies
 * without an id omit `id` (2026-07-28 `JSONRPCErrorResponse.id` is an
 * optional `RequestId`, never `null`), and a body in a charset other than
 * UTF-8 or under a `Content-Encoding` is refused with 415, as
 * `@mrtr/server` refuses it (RFC 9110 §8.4: a coding the server does not
 * apply is never ignored). Every body is checked against the official schema.
 */
import { createMcpEndpoint } from '@mrtr/server';
import { assertValidMessage } from '@mrtr/spec-schema';
import { afterEach, describe, expect, it } from 'vitest';
import { type BothErasOptions, serveBothEras } from '../src/index.js';
import { authInfoOf, initialize, instance, shared, TOKENS } from './harness.js';

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of opened.splice(0).reverse()) await x.close();
});

const URL_ = 'http://localhost/mcp';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** A 2026-07-28 `tools/call` of `list_records`, a tool that answers at once. */
const listCall = {
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'list_records', arguments: {}, _meta: META },
};

/** A 2026-07-28 POST of `body` (text as is), with `headers` over the usual ones. */
function modern(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKENS.alice}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'list_records',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A 2025-era POST of `body` (text or bytes as they are), on `session` when given. */
function legacy(body: unknown, headers: Record<string, string> = {}, session?: string): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKENS.alice}`,
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
      ...headers,
    },
    body:
      typeof body === 'string' || body instanceof Uint8Array
        ? (body as BodyInit)
        : JSON.stringify(body),
  });
}

function bridge(options: BothErasOptions = {}) {
  const h = serveBothEras(instance(shared(['r1'])).factory, options);
  opened.push(h);
  return (request: Request) => h.fetch(request, { authInfo: authInfoOf(request) });
}

/** The one JSON-RPC message of a 2025-era answer, sent as JSON or as one SSE event. */
async function messageOf(response: Response) {
  const text = await response.text();
  const json = text.startsWith('{') ? text : (/^data: (\{.*)$/m.exec(text)?.[1] ?? '{}');
  return JSON.parse(json) as Record<string, unknown> & {
    error?: { code: number; message: string; data?: unknown };
    result?: Record<string, unknown>;
  };
}

/** A 2025-era session opened on `fetch` (initialize, then initialized): its id. */
async function openedSession(fetch: (request: Request) => Promise<Response>): Promise<string> {
  const opening = await fetch(legacy(initialize));
  expect(opening.status).toBe(200);
  await opening.body?.cancel();
  const session = opening.headers.get('mcp-session-id') as string;
  const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
  expect((await fetch(legacy(initialized, {}, session))).status).toBe(202);
  return session;
}

/** The body of an error response, checked against the 2026-07-28 schema. */
async function errorBody(response: Response) {
  const body = (await response.json()) as Record<string, unknown> & {
    error: { code: number; message: string };
  };
  assertValidMessage(body);
  return body;
}

describe('an error to a request whose id is unknown omits id', () => {
  it('a body that is not JSON: empty, blank, truncated (-32700)', async () => {
    const fetchAs = bridge();
    for (const text of ['', '   ', '\n', '{"jsonrpc":"2.0","id":1,', '{']) {
      const response = await fetchAs(legacy(text));
      expect([text, response.status]).toEqual([text, 400]);
      const body = await errorBody(response);
      expect(body).not.toHaveProperty('id');
      expect(body.error.code).toBe(-32700);
    }
  });

  it('a body that is not UTF-8 (-32700), in either era, as @mrtr/server answers it; one BOM is dropped, two are no JSON', async () => {
    const fetchAs = bridge();
    const text = JSON.stringify(listCall);
    const at = text.indexOf('list_records');
    const bytes = (...insert: number[]) => {
      const head = Buffer.from(text.slice(0, at));
      return new Uint8Array([...head, ...insert, ...Buffer.from(text.slice(at))]);
    };
    const asBody = (b: Uint8Array<ArrayBuffer>, era: typeof modern) => {
      const request = era('');
      return new Request(request.url, {
        method: 'POST',
        headers: request.headers,
        body: b,
      });
    };
    // A lone continuation byte, an overlong `/`, a surrogate's bytes, one cut at the very end.
    for (const body of [bytes(0xff), bytes(0xc0, 0xaf), bytes(0xed, 0xa0, 0x80)])
      for (const era of [modern, legacy]) {
        const response = await fetchAs(asBody(body, era));
        expect(response.status).toBe(400);
        expect(await errorBody(response)).toEqual({
          jsonrpc: '2.0',
          error: { code: -32700, message: 'Parse error: body is not valid JSON' },
        });
      }
    const cut = new Uint8Array([...Buffer.from(text), 0xe2, 0x82]);
    expect((await fetchAs(asBody(cut, modern))).status).toBe(400);
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(text)]);
    expect((await fetchAs(asBody(bom, modern))).status).toBe(200);
    // Two: UTF-8 drops one and JSON has no place for the other (undici's Request.json() dropped
    // both, and the era classifier one, so the SDK answered "send initialize first").
    const boms = new Uint8Array([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, ...Buffer.from(text)]);
    for (const era of [modern, legacy]) {
      const response = await fetchAs(asBody(boms, era));
      expect(response.status).toBe(400);
      expect((await errorBody(response)).error).toEqual({
        code: -32700,
        message: 'Parse error: body is not valid JSON',
      });
    }
  });

  it('a body nested past maxBodyDepth (-32600), in either era', async () => {
    const fetchAs = bridge();
    const nested = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`;
    for (const request of [modern(nested), legacy(nested)]) {
      const response = await fetchAs(request);
      expect(response.status).toBe(400);
      const body = await errorBody(response);
      expect(body).toEqual({
        jsonrpc: '2.0',
        error: {
          code: -32600,
          message: 'Invalid Request: the body is nested deeper than 65 levels',
        },
      });
    }
  });

  it('an unknown session (404 -32001), no session (400 -32000), too many sessions (503)', async () => {
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const fetchAs = bridge();
    const unknown = await fetchAs(legacy(list, {}, crypto.randomUUID()));
    expect(unknown.status).toBe(404);
    expect(await errorBody(unknown)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Session not found' },
    });
    const none = await fetchAs(legacy(list));
    expect(none.status).toBe(400);
    expect(await errorBody(none)).not.toHaveProperty('id');
    const full = await bridge({ maxSessions: 0 })(legacy(initialize));
    expect(full.status).toBe(503);
    expect(await errorBody(full)).not.toHaveProperty('id');
  });

  it("the SDK's own refusals on the 2026-07-28 leg: id omitted, status and headers kept", async () => {
    const fetchAs = bridge();
    const wrongType = await fetchAs(modern(listCall, { 'content-type': 'text/plain' }));
    expect(wrongType.status).toBe(415);
    expect(wrongType.headers.get('content-type')).toMatch(/^application\/json/);
    const typeBody = await errorBody(wrongType);
    expect(typeBody).not.toHaveProperty('id');
    expect(typeBody.error).toMatchObject({ code: -32000, message: /Content-Type/ });
    const batch = await fetchAs(modern([listCall, { ...listCall, id: 8 }]));
    expect(batch.status).toBeGreaterThanOrEqual(400);
    expect(await errorBody(batch)).not.toHaveProperty('id');
    // An id that is no RequestId is not echoed either (the SDK echoed 1.5).
    for (const id of [null, 1.5, {}]) {
      const invalid = await fetchAs(modern({ ...listCall, id }));
      expect(invalid.status).toBe(400);
      expect(await errorBody(invalid)).not.toHaveProperty('id');
    }
    // Nor an integer past 2^53, which JSON.parse rounds: echoed, it would name another request.
    const big = JSON.stringify({ ...listCall, id: 0 }).replace('"id":0', '"id":9007199254740993');
    const rounded = await fetchAs(modern(big, { 'mcp-name': 'nope' }));
    expect(rounded.status).toBe(400);
    expect(await errorBody(rounded)).not.toHaveProperty('id');
  });

  it('an error to a request whose id was read keeps it', async () => {
    const fetchAs = bridge();
    const mismatch = await fetchAs(modern(listCall, { 'mcp-name': 'delete_record' }));
    expect(mismatch.status).toBe(400);
    const body = await errorBody(mismatch);
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32020);
  });

  it("quotes what a client sent in the SDK's errors with controls as U+FFFD, bounded", async () => {
    const fetchAs = bridge();
    // Mcp-Name as RFC 2047-style Base64 of U+202E, ESC [2J, NUL: the SDK quoted it decoded, raw.
    const hostile = Buffer.from('\u202e\u001b[2J\u0000').toString('base64');
    const named = await fetchAs(modern(listCall, { 'mcp-name': `=?base64?${hostile}?=` }));
    expect(named.status).toBe(400);
    const namedBody = await errorBody(named);
    expect(namedBody.id).toBe(7);
    expect(namedBody.error.code).toBe(-32020);
    const version = '\u001b[2J\ud800\u202e\u2028';
    const meta = await fetchAs(
      modern({
        ...listCall,
        params: {
          ...listCall.params,
          _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': version },
        },
      }),
    );
    const long = await fetchAs(modern(listCall, { 'mcp-method': 'x'.repeat(16_000) }));
    for (const body of [namedBody, await errorBody(meta), await errorBody(long)]) {
      const said = JSON.stringify(body.error);
      expect(said).not.toMatch(/\\u001b|\\u0000|\\ud800|\u202e|\u2028|\\u2028/);
      expect(said.length).toBeLessThan(5000);
    }
    expect(namedBody.error.message).toContain('\ufffd\ufffd[2J\ufffd');
    // An unknown tool is an error the SDK answers with 200: screened as well.
    const tool = `x\u202e\u001b[2J\u2028${'A'.repeat(3000)}`;
    const unknown = await fetchAs(
      modern(
        { ...listCall, params: { ...listCall.params, name: tool } },
        { 'mcp-name': `=?base64?${Buffer.from(tool).toString('base64')}?=` },
      ),
    );
    const unknownBody = await errorBody(unknown);
    expect(unknownBody.id).toBe(7);
    expect(unknownBody.error.message).not.toMatch(/[\p{Cc}\u202e\u2028]/u);
    expect(unknownBody.error.message.length).toBeLessThanOrEqual(513);
  });

  it('refuses a _meta of more than 1,000 members before the SDK reads it (its check grows with their square)', async () => {
    const fetchAs = bridge();
    const form = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
    const list = { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} };
    const huge = await fetchAs(
      modern(
        {
          ...list,
          params: {
            _meta: {
              ...META,
              'io.modelcontextprotocol/clientCapabilities': { elicitation: { form } },
            },
          },
        },
        { 'mcp-method': 'tools/list', 'mcp-name': '' },
      ),
    );
    expect(huge.status).toBe(400);
    expect((await errorBody(huge)).error).toEqual({
      code: -32600,
      message: 'Invalid Request: params._meta holds more than 1000 members and elements',
    });
    // Array elements count too.
    const elements = await fetchAs(
      modern(
        {
          ...list,
          params: { _meta: { ...META, list: Array.from({ length: 1001 }, (_, i) => i) } },
        },
        { 'mcp-method': 'tools/list', 'mcp-name': '' },
      ),
    );
    expect(elements.status).toBe(400);
    // Many members outside _meta (arguments) are the tool's business: not refused here.
    const args = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`a${i}`, i]));
    const wide = await fetchAs(
      modern({ ...listCall, params: { ...listCall.params, arguments: args } }),
    );
    expect(wide.status).not.toBe(400);
  });

  it('refuses a body of more members and elements than maxBodyItems before the SDK reads it', async () => {
    // 60,000 arguments (120,000 separators) within 4 MiB: past the default of 100,000.
    const args = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`a${i}`, 0]));
    const call = { ...listCall, params: { ...listCall.params, arguments: args } };
    const wide = await bridge()(modern(call));
    expect(wide.status).toBe(400);
    expect((await errorBody(wide)).error).toEqual({
      code: -32600,
      message:
        'Invalid Request: the body holds more than 100000 ":" and "," outside strings (about two per member, one per element)',
    });
    // Separators inside strings are text, not members; the bound is the server's to set.
    const text = { ...listCall, params: { ...listCall.params, arguments: { t: ':,'.repeat(9) } } };
    const outside = JSON.stringify(text)
      .replace(/"(?:[^"\\]|\\.)*"/g, '')
      .replace(/[^:,]/g, '').length;
    expect((await bridge({ maxBodyItems: outside })(modern(text))).status).not.toBe(400);
    const narrow = await bridge({ maxBodyItems: outside - 1 })(modern(text));
    expect(narrow.status).toBe(400);
    expect(() => bridge({ maxBodyItems: 0 })).toThrow(/maxBodyItems must be a positive integer/);
  });

  it("the 2025-era session's transport refusals carry the request's id, else no id (never null)", async () => {
    const fetchAs = bridge();
    const opening = await fetchAs(legacy(initialize));
    expect(opening.status).toBe(200);
    await opening.body?.cancel();
    const session = opening.headers.get('mcp-session-id') as string;
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };
    // A valid request, sent as JSON: its id, whatever the transport refuses it for.
    const withId: [string, Request, number, number][] = [
      ['version', legacy(list, { 'mcp-protocol-version': '1999-01-01' }, session), 400, -32022],
      ['accept', legacy(list, { accept: 'application/json' }, session), 406, -32000],
      ['initialize again', legacy({ ...initialize, id: 7 }, {}, session), 400, -32600],
    ];
    for (const [name, request, status, code] of withId) {
      const response = await fetchAs(request);
      expect(response.status, name).toBe(status);
      const body = await errorBody(response);
      expect(body.id, name).toBe(7);
      expect(body.error.code, name).toBe(code);
    }
    const quoted = await errorBody(
      await fetchAs(legacy(list, { 'mcp-protocol-version': '1999-01-01' }, session)),
    );
    expect(quoted.error.message).toMatch(
      /^Unsupported protocol version: 1999-01-01\. Supported: 2026-07-28, 2025-11-25/,
    );
    // No request whose id could be read: no `id` member at all.
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const withoutId: [string, Request][] = [
      ['another media type', legacy(list, { 'content-type': 'text/plain' }, session)],
      ['not JSON', legacy('{', {}, session)],
      ['a notification', legacy(notification, { 'mcp-protocol-version': '1999-01-01' }, session)],
      [
        'a response',
        legacy(
          { jsonrpc: '2.0', id: 4, result: {} },
          { 'mcp-protocol-version': '1999-01-01' },
          session,
        ),
      ],
      [
        'an id that is no RequestId',
        legacy({ ...list, id: null }, { 'mcp-protocol-version': '1999-01-01' }, session),
      ],
    ];
    for (const [name, request] of withoutId) {
      const response = await fetchAs(request);
      expect(response.status, name).toBeGreaterThanOrEqual(400);
      const body = await errorBody(response);
      expect(body, name).not.toHaveProperty('id');
    }
    const stream = await fetchAs(
      new Request(URL_, {
        headers: {
          authorization: `Bearer ${TOKENS.alice}`,
          accept: 'text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': '1999-01-01',
        },
      }),
    );
    expect(stream.status).toBe(400);
    expect(await errorBody(stream)).not.toHaveProperty('id');
  });
});

// helper-150 F1: a later date or a word was read as the modern era: "-32602 missing _meta", no versions.
describe('an MCP-Protocol-Version neither leg serves', () => {
  it('is 400 -32022 naming the versions served, in either era, with the id when one was read', async () => {
    const fetchAs = bridge();
    const session = await openedSession(fetchAs);
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };
    const cases: [string, Request, string][] = [
      [
        'a later date, no _meta',
        modern(list, { 'mcp-protocol-version': '2099-01-01' }),
        '2099-01-01',
      ],
      [
        'a later date with a 2026-07-28 _meta',
        modern(listCall, { 'mcp-protocol-version': '2099-01-01' }),
        '2099-01-01',
      ],
      [
        'a word, on a 2025-era session',
        legacy(list, { 'mcp-protocol-version': 'bogus' }, session),
        'bogus',
      ],
      [
        'an escape, no session',
        legacy(list, { 'mcp-protocol-version': '2099\u0001' }),
        '2099\ufffd',
      ],
    ];
    for (const [name, request, requested] of cases) {
      const response = await fetchAs(request);
      expect(response.status, name).toBe(400);
      const body = (await errorBody(response)) as Record<string, any>;
      expect(body.id, name).toBe(7);
      expect(body.error.code, name).toBe(-32022);
      expect(body.error.data, name).toEqual({
        requested,
        supported: [
          '2026-07-28',
          '2025-11-25',
          '2025-06-18',
          '2025-03-26',
          '2024-11-05',
          '2024-10-07',
        ],
      });
    }
    // helper-156 M2: a repeated header (joined with ", ") named no version at all.
    for (const [name, request] of [
      ['modern', modern(list, { 'mcp-protocol-version': '2026-07-28, 2026-07-28' })],
      ['session', legacy(list, { 'mcp-protocol-version': '2025-11-25, 2025-11-25' }, session)],
    ] as const) {
      const response = await fetchAs(request);
      expect(response.status, name).toBe(400);
      const body = (await errorBody(response)) as Record<string, any>;
      expect(body.id, name).toBe(7);
      expect(body.error, name).toEqual({
        code: -32020,
        message: 'Header mismatch: MCP-Protocol-Version must be sent once, with one version',
      });
    }
    // The versions served still are, in each era.
    expect((await fetchAs(modern(listCall))).status).toBe(200);
    expect((await fetchAs(legacy(list, {}, session))).status).toBe(200);
  });
});

// helper-150 F3: the SDK's session transport served batches, which 2025-06-18 removed.
describe('a JSON-RPC batch on a 2025-era session', () => {
  it('is 400 -32600 under a version from 2025-06-18 on, and still served under 2025-03-26', async () => {
    const fetchAs = bridge();
    const session = await openedSession(fetchAs);
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ];
    for (const version of ['2025-11-25', '2025-06-18']) {
      const response = await fetchAs(legacy(batch, { 'mcp-protocol-version': version }, session));
      expect(response.status, version).toBe(400);
      const body = await errorBody(response);
      expect(body.error.code, version).toBe(-32600);
      expect(body.error.message, version).toMatch(/batches are not part of protocol version/);
      expect(body, version).not.toHaveProperty('id');
    }
    // With a BOM and white space before it: still a batch.
    const spaced = legacy(`\ufeff \n${JSON.stringify(batch)}`, {}, session);
    expect((await fetchAs(spaced)).status).toBe(400);
    // helper-158 L4: UTF-16 text is no JSON batch, but no JSON at all (-32700), as without a version.
    const notJson = await fetchAs(
      legacy(Buffer.from(JSON.stringify(batch), 'utf16le'), {}, session),
    );
    expect(notJson.status).toBe(400);
    expect((await errorBody(notJson)).error.code).toBe(-32700);
    const old = await fetchAs(legacy(batch, { 'mcp-protocol-version': '2025-03-26' }, session));
    expect(old.status).toBe(200);
    await old.body?.cancel();
  });
});

describe('a body in another charset or under a Content-Encoding is refused with 415', () => {
  const CHARSETS = [
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/json; charset=utf-32',
    'application/json; charset=utf-7',
    'application/json; charset="utf-16"',
    'APPLICATION/JSON; CHARSET=LATIN1',
  ];
  const CODINGS = ['gzip', 'br2', 'GZIP', 'identity, gzip', 'gzip, identity'];

  it('is never read as UTF-8 or as an uncompressed body, in either era', async () => {
    const fetchAs = bridge();
    const refused: Request[] = [
      ...CHARSETS.map((type) => modern(listCall, { 'content-type': type })),
      ...CODINGS.map((coding) => modern(listCall, { 'content-encoding': coding })),
      legacy(initialize, { 'content-encoding': 'gzip' }),
      legacy(initialize, { 'content-type': 'application/json; charset=utf-16' }),
    ];
    for (const request of refused) {
      const label = `${request.headers.get('content-type')} / ${request.headers.get('content-encoding')}`;
      const response = await fetchAs(request);
      expect([label, response.status]).toEqual([label, 415]);
      expect(response.headers.get('accept-encoding')).toBe('identity');
      const body = await errorBody(response);
      expect(body).not.toHaveProperty('id');
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toMatch(/^Content-(Type charset|Encoding) .+ is not supported: /);
    }
  });

  it('UTF-8 in any spelling @mrtr/server takes, and identity, are served', async () => {
    const fetchAs = bridge();
    const types = [
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json;charset=Utf-8',
      'application/json; charset="utf-8"',
      'application/json; charset=UTF8',
      'application/json; charset=utf8',
    ];
    const served = [
      ...types.map((type) => modern(listCall, { 'content-type': type })),
      ...['identity', 'IDENTITY', ' identity ', ''].map((coding) =>
        modern(listCall, { 'content-encoding': coding }),
      ),
    ];
    for (const request of served) {
      const label = `${request.headers.get('content-type')} / ${request.headers.get('content-encoding')}`;
      const response = await fetchAs(request);
      expect([label, response.status]).toEqual([label, 200]);
      expect(await response.text()).toContain('"text":"r1"');
    }
    const opening = await fetchAs(
      legacy(initialize, { 'content-type': 'application/json; charset=UTF-8' }),
    );
    expect(opening.status).toBe(200);
    await opening.body?.cancel();
  });

  it('answers as @mrtr/server does for the same Content-Type and Content-Encoding', async () => {
    const fetchAs = bridge();
    const endpoint = createMcpEndpoint({
      serverInfo: { name: 'records', version: '1.0.0' },
      tools: [],
      authenticate: () => ({ id: 'alice' }),
    });
    const types = [
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=UTF8',
      'application/json; charset="utf-8"',
      'application/json; charset=',
      'application/json; charset=utf-8; charset=latin1',
      'application/json; charset=latin1; charset=utf-8',
      'application/json;',
      ...CHARSETS,
    ];
    const codings = [null, 'identity', '', ...CODINGS, 'x'.repeat(80)];
    for (const type of types)
      for (const coding of codings) {
        const headers = {
          'content-type': type,
          ...(coding === null ? {} : { 'content-encoding': coding }),
        };
        const ours = await fetchAs(modern(listCall, headers));
        const theirs = await endpoint(modern(listCall, headers));
        const label = `${type} / ${coding}`;
        if (theirs.status !== 415) {
          expect([label, ours.status]).not.toEqual([label, 415]);
          await ours.body?.cancel();
          await theirs.body?.cancel();
          continue;
        }
        expect([label, ours.status, ours.headers.get('accept-encoding')]).toEqual([
          label,
          415,
          theirs.headers.get('accept-encoding'),
        ]);
        expect(await errorBody(ours)).toEqual(await theirs.json());
      }
  });
});

describe('retry fields of the wrong type on a gated 2026-07-28 call', () => {
  it('are -32602 naming the field (the SDK read them as absent and asked again), and use nothing up', async () => {
    const s = shared(['r1']);
    const h = serveBothEras(instance(s).factory);
    opened.push(h);
    const meta = {
      ...META,
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    };
    const call = async (fields: Record<string, unknown>) => {
      const request = modern(
        {
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { name: 'delete_record', arguments: { id: 'r1' }, _meta: meta, ...fields },
        },
        { 'mcp-name': 'delete_record' },
      );
      const text = await (await h.fetch(request, { authInfo: authInfoOf(request) })).text();
      const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
      return JSON.parse(json) as {
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      };
    };
    const requestState = (await call({})).result?.requestState as string;
    expect(typeof requestState).toBe('string');
    const cases: [Record<string, unknown>, string][] = [
      [{ inputResponses: null }, 'inputResponses'],
      [{ inputResponses: [] }, 'inputResponses'],
      [{ inputResponses: { confirm: null } }, 'inputResponses.confirm'],
      [{ inputResponses: { confirm: 'accept' } }, 'inputResponses.confirm'],
    ];
    for (const [fields, param] of cases) {
      const r = await call({ requestState, ...fields });
      const problem = 'must be a JSON object';
      // The data of @mrtr/server's endpoint: `path` dotted from params, `param` kept.
      expect(r.error, param).toEqual({
        code: -32602,
        message: `Invalid tools/call params: ${param} ${problem}`,
        data: { path: `params.${param}`, param, problem },
      });
    }
    // A retry with malformed answers in an envelope the SDK would serve.
    const envelope = {
      jsonrpc: '2.0',
      id: 11,
      method: 'tools/call',
      params: {
        name: 'delete_record',
        arguments: { id: 'r1' },
        _meta: meta,
        requestState,
        inputResponses: null,
      },
    };
    // Read as the SDK reads a body: a leading BOM does not get past the check.
    const bom = modern(`\ufeff${JSON.stringify(envelope)}`, { 'mcp-name': 'delete_record' });
    const bomText = await (await h.fetch(bom, { authInfo: authInfoOf(bom) })).text();
    expect(JSON.parse(bomText).error?.code).toBe(-32602);
    // What the SDK refuses on other grounds, it still answers itself.
    const { id: _none, ...notification } = envelope;
    const others: [unknown, Record<string, string>, number][] = [
      [notification, { 'mcp-name': 'delete_record' }, 202],
      [envelope, { 'mcp-name': 'delete_record', 'mcp-protocol-version': '2099-01-01' }, 400],
      [envelope, { 'mcp-name': 'list_records' }, 400],
      [{ ...envelope, id: 1.5 }, { 'mcp-name': 'delete_record' }, 400],
    ];
    for (const [body, headers, status] of others) {
      const request = modern(body, headers);
      const response = await h.fetch(request, { authInfo: authInfoOf(request) });
      expect(response.status, JSON.stringify(headers)).toBe(status);
      const text = await response.text();
      if (text) expect(text).not.toContain('Invalid tools/call params');
    }
    expect(s.records.has('r1')).toBe(true);
    const done = await call({
      requestState,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect(done.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(s.records.has('r1')).toBe(false);
  });
});

describe('a list request whose cursor is not a string', () => {
  it('is -32602 naming cursor, not the SDK’s -32603 with its parse issues; a string cursor is served', async () => {
    const fetch = bridge();
    const list = (cursor: unknown, method = 'tools/list') => {
      const params = cursor === undefined ? { _meta: META } : { cursor, _meta: META };
      return fetch(
        modern({ jsonrpc: '2.0', id: 3, method, params }, { 'mcp-method': method, 'mcp-name': '' }),
      );
    };
    for (const [cursor, method] of [
      [5, 'tools/list'],
      [null, 'tools/list'],
      [{ page: 2 }, 'resources/list'],
      [['x'], 'prompts/list'],
    ] as const) {
      const response = await list(cursor, method);
      const body = await errorBody(response);
      expect(response.status).toBe(200);
      expect(body.id).toBe(3);
      expect(body.error).toEqual({
        code: -32602,
        message: `Invalid ${method} params: cursor must be a string`,
        data: { path: 'params.cursor', param: 'cursor', problem: 'must be a string' },
      });
    }
    const served = await (await list(undefined)).json();
    expect(served.result.tools.map((t: { name: string }) => t.name)).toContain('list_records');
  });

  it('is the same -32602, id echoed, on a 2025-era session (the SDK answered -32603 with its zod issues)', async () => {
    const fetch = bridge();
    const session = await openedSession(fetch);
    const list = (id: number | string, method: string, params: Record<string, unknown>) =>
      fetch(legacy({ jsonrpc: '2.0', id, method, params }, {}, session));
    for (const [id, cursor, method] of [
      [3, 5, 'tools/list'],
      ['page-2', null, 'tools/list'],
      [4, { page: 2 }, 'resources/list'],
      [5, ['x'], 'prompts/list'],
      [6, true, 'resources/templates/list'],
    ] as const) {
      const response = await list(id, method, { cursor });
      expect(response.status).toBe(200);
      const body = await messageOf(response);
      assertValidMessage(body);
      expect(body.id).toBe(id);
      expect(body.error).toEqual({
        code: -32602,
        message: `Invalid ${method} params: cursor must be a string`,
        // `path` as @mrtr/server's endpoint names a member; `param` kept for clients that read it.
        data: { path: 'params.cursor', param: 'cursor', problem: 'must be a string' },
      });
    }
    // A string cursor, or none, is still the SDK's to serve on the session.
    const served = await messageOf(await list(7, 'tools/list', {}));
    expect(served.id).toBe(7);
    expect((served.result?.tools as { name: string }[]).map((t) => t.name)).toContain(
      'list_records',
    );
    // Refusals the SDK makes on other grounds come first: a wrong session is still its 404.
    const stranger = await fetch(
      legacy({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { cursor: 5 } }, {}, 'nope'),
    );
    expect(stranger.status).toBe(404);
    await stranger.body?.cancel();
  });
});

describe('text that is not well-formed Unicode (a lone surrogate)', () => {
  /** `listCall` as text with `member` (raw JSON, escapes kept) put in `where`: "id", "_meta", "arguments" or "params". */
  const spliced = (where: 'id' | '_meta' | 'arguments' | 'params', member: string) => {
    const text = JSON.stringify(listCall);
    if (where === 'id') return text.replace('"id":7', `"id":${member}`);
    if (where === 'params') return text.replace('"params":{', `"params":{${member},`);
    if (text.includes(`"${where}":{}`))
      return text.replace(`"${where}":{}`, `"${where}":{${member}}`);
    return text.replace(`"${where}":{`, `"${where}":{${member},`);
  };

  it('in the id is -32600 with no id, as @mrtr/server answers it (the SDK served it and echoed the id)', async () => {
    const fetchAs = bridge();
    for (const id of ['"\\ud800"', '"r-\\udc00"', '"\\ude00\\ud83d"']) {
      const response = await fetchAs(modern(spliced('id', id)));
      expect([id, response.status]).toEqual([id, 400]);
      const body = await errorBody(response);
      expect(body).not.toHaveProperty('id');
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toMatch(/id is not well-formed Unicode/);
    }
  });

  it('in params, a value or a member name, is -32602 naming it with the id (the SDK served it)', async () => {
    const fetchAs = bridge();
    for (const [where, member, path] of [
      ['_meta', '"example.com/x\\udc00":1', 'params._meta.example.com/x\ufffd'],
      ['_meta', '"example.com/x":"\\ud800"', 'params._meta.example.com/x'],
      ['_meta', '"example.com/x":[1,{"y":"\\udfff"}]', 'params._meta.example.com/x.1.y'],
      ['arguments', '"\\udc00":1', 'params.arguments.\ufffd'],
      ['params', '"\\udc00":1', 'params.\ufffd'],
    ] as const) {
      const response = await fetchAs(modern(spliced(where, member)));
      expect([member, response.status]).toEqual([member, 400]);
      const body = await errorBody(response);
      expect(body.id).toBe(7);
      expect(body.error).toEqual({
        code: -32602,
        message: `Invalid params: ${path} is not well-formed Unicode (a lone surrogate)`,
        data: { path, problem: 'ill-formed-unicode' },
      });
    }
  });

  it('is refused on a 2025-era session too; a pair written as two escapes, and an answer of the client, are not', async () => {
    const fetch = bridge();
    const session = await openedSession(fetch);
    const onSession = (text: string) => fetch(legacy(text, {}, session));
    const call = (args: string) =>
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_records","arguments":{${args}}}}`;
    const refused = await onSession(call('"x":"\\ud800"'));
    const body = await messageOf(refused);
    expect([refused.status, body.id, body.error?.code]).toEqual([400, 7, -32602]);
    const pair = await messageOf(await onSession(call('"x":"\\ud83d\\ude00"')));
    expect(pair.error).toBeUndefined();
    expect(pair.id).toBe(7);
    // In a batch: refused whole, without an id (the SDK echoed the id of each answer).
    const batch = await onSession(
      `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"x\\udfff","method":"ping"}]`,
    );
    const batchBody = await messageOf(batch);
    expect([batch.status, batchBody.error?.code, 'id' in batchBody]).toEqual([400, -32600, false]);
    // A notification is not answered but 202, as @mrtr/server answers one.
    const notification = await onSession(
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"\\ud800"}}',
    );
    expect(notification.status).toBe(202);
    await notification.body?.cancel();
    // A JSON-RPC response (an elicitation answer) is the client's answer, for its reader to judge.
    const answer = await onSession(
      '{"jsonrpc":"2.0","id":99,"result":{"action":"accept","content":{"x":"\\ud800"}}}',
    );
    expect(answer.status).not.toBe(400);
    await answer.body?.cancel();
  });
});

describe('a method the server does not implement', () => {
  it('is 404 with -32601 on 2026-07-28, as streamable-http requires (the SDK answered 200); 200 on a 2025-era session, where 404 would mean the session is gone', async () => {
    const fetch = bridge();
    for (const method of ['acme/ping', 'resources/list']) {
      const response = await fetch(
        modern(
          { jsonrpc: '2.0', id: 9, method, params: { _meta: META } },
          { 'mcp-method': method, 'mcp-name': '' },
        ),
      );
      expect(response.status, method).toBe(404);
      const body = await errorBody(response);
      expect(body.id).toBe(9);
      expect((body.error as { code: number }).code).toBe(-32601);
    }
    const session = await openedSession(fetch);
    const old = await fetch(
      legacy({ jsonrpc: '2.0', id: 10, method: 'acme/ping', params: {} }, {}, session),
    );
    expect(old.status).toBe(200);
    expect((await messageOf(old)).error?.code).toBe(-32601);
  });
});

describe('a tools/call whose name is missing or not a string', () => {
  it('is -32602 naming params.name with HTTP 400 on 2026-07-28, as @mrtr/server says it (the SDK dumped its zod issues)', async () => {
    const fetch = bridge();
    const { name: _name, ...unnamed } = listCall.params;
    const cases: Record<string, unknown>[] = [
      unnamed,
      { ...unnamed, name: 5 },
      { ...unnamed, name: null },
    ];
    for (const params of cases) {
      const response = await fetch(modern({ ...listCall, params }, { 'mcp-name': 'list_records' }));
      expect(response.status, JSON.stringify(params.name)).toBe(400);
      const body = await errorBody(response);
      expect(body.id).toBe(7);
      expect(body.error).toEqual({
        code: -32602,
        message: 'Invalid params: params.name must be a string',
        data: { path: 'params.name', param: 'name', problem: 'must be a string' },
      });
    }
  });
});

describe('tools/call arguments that are not a JSON object', () => {
  const ARGS: unknown[] = [[1], null, 'x', 5, true];
  const expected = {
    code: -32602,
    message: 'Invalid tools/call params: arguments must be a JSON object',
    data: { path: 'params.arguments', param: 'arguments', problem: 'must be a JSON object' },
  };

  it('are -32602 naming arguments on 2026-07-28, as @mrtr/server says it (the SDK dumped its zod issues)', async () => {
    const fetch = bridge();
    for (const [name, args] of ARGS.flatMap((a) => [
      ['list_records', a],
      ['delete_record', a],
    ])) {
      const response = await fetch(
        modern(
          { ...listCall, params: { ...listCall.params, name, arguments: args } },
          { 'mcp-name': name as string },
        ),
      );
      expect(response.status, JSON.stringify(args)).toBe(200);
      const body = await errorBody(response);
      expect(body.id).toBe(7);
      expect(body.error, `${name} ${JSON.stringify(args)}`).toEqual(expected);
    }
    // An absent `arguments` is still served (the tool has no required ones).
    const { arguments: _none, ...noArgs } = listCall.params;
    const served = await (await fetch(modern({ ...listCall, params: noArgs }))).json();
    expect(served.result?.content?.[0]?.text).toBe('r1');
  });

  it('are the same -32602, id echoed, on a 2025-era session', async () => {
    const fetch = bridge();
    const session = await openedSession(fetch);
    let id = 10;
    for (const args of ARGS) {
      id++;
      const call = {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'list_records', arguments: args },
      };
      const response = await fetch(legacy(call, {}, session));
      expect(response.status).toBe(200);
      const body = await messageOf(response);
      assertValidMessage(body);
      expect(body.id).toBe(id);
      expect(body.error, JSON.stringify(args)).toEqual(expected);
    }
    // Absent or an object: still the SDK's to serve.
    for (const params of [{ name: 'list_records' }, { name: 'list_records', arguments: {} }]) {
      const served = await messageOf(
        await fetch(legacy({ jsonrpc: '2.0', id: 30, method: 'tools/call', params }, {}, session)),
      );
      expect(served.result?.content).toEqual([{ type: 'text', text: 'r1' }]);
    }
  });
});

describe('a 2026-07-28 request the SDK classifies as 2025-era traffic', () => {
  const modernHeaders = {
    authorization: `Bearer ${TOKENS.alice}`,
    'mcp-protocol-version': '2026-07-28',
    accept: 'application/json, text/event-stream',
  };

  it('that is not a POST gets 405, Allow: POST, as @mrtr/node answers it (not "send initialize first")', async () => {
    const fetch = bridge();
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const response = await fetch(new Request(URL_, { method, headers: modernHeaders }));
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      const body = await errorBody(response);
      expect(body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Method not allowed: use POST' },
      });
    }
  });

  it('that posts a JSON-RPC response gets -32600 saying a request has no result member, id kept', async () => {
    const fetch = bridge();
    const post = (body: unknown) =>
      fetch(
        new Request(URL_, {
          method: 'POST',
          headers: { ...modernHeaders, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
    const cases: [unknown, 'result' | 'error', unknown][] = [
      [{ jsonrpc: '2.0', id: 1, result: {} }, 'result', 1],
      [{ jsonrpc: '2.0', id: 'a', result: { content: [] } }, 'result', 'a'],
      [{ jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'x' } }, 'error', 2],
      [{ jsonrpc: '2.0', error: { code: -32700, message: 'x' } }, 'error', undefined],
      // An id no client could read back as its own is not echoed.
      [{ jsonrpc: '2.0', id: 'a\ud800', result: {} }, 'result', undefined],
    ];
    for (const [sent, member, id] of cases) {
      const response = await post(sent);
      expect(response.status, JSON.stringify(sent)).toBe(400);
      const body = await errorBody(response);
      expect(body.id).toBe(id);
      expect('id' in body).toBe(id !== undefined);
      expect(body.error).toEqual({
        code: -32600,
        message: `Invalid JSON-RPC request: a request has no ${member} member (JSON-RPC 2.0 §4): with one it is a response, which a client does not send`,
      });
    }
  });

  it('leaves 2025-era traffic as it was: a stream and an end on a session, advice without one', async () => {
    const fetch = bridge();
    const opening = await fetch(legacy(initialize));
    await opening.body?.cancel();
    const session = opening.headers.get('mcp-session-id') as string;
    const legacyHeaders = {
      authorization: `Bearer ${TOKENS.alice}`,
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': session,
    };
    const stream = await fetch(
      new Request(URL_, {
        method: 'GET',
        headers: { ...legacyHeaders, accept: 'text/event-stream' },
      }),
    );
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    await stream.body?.cancel();
    const end = await fetch(new Request(URL_, { method: 'DELETE', headers: legacyHeaders }));
    expect(end.status).toBe(200);
    const gone = await fetch(new Request(URL_, { method: 'DELETE', headers: legacyHeaders }));
    expect(gone.status).toBe(404);
    await gone.body?.cancel();
    // No 2026-07-28 header, no session: the 2025-era advice, as before.
    const bare = await fetch(
      new Request(URL_, { method: 'GET', headers: { authorization: `Bearer ${TOKENS.alice}` } }),
    );
    expect(bare.status).toBe(400);
    expect((await errorBody(bare)).error.message).toBe(
      'Bad Request: no valid Mcp-Session-Id; send initialize first',
    );
  });
});
