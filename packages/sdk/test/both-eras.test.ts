/**
 * `serveBothEras`: 2026-07-28 per request, 2025-era clients on sessions that
 * belong to the principal that opened them; and why a 2025-era client needs
 * a session to be asked anything.
 */
import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { serveBothEras } from '../src/index.js';
import {
  authInfoOf,
  callTool,
  initialize,
  instance,
  officialClient,
  shared,
  TOKENS,
} from './harness.js';

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of opened.splice(0).reverse()) await x.close();
});

function post(body: unknown, who: string, session?: string): Request {
  return new Request('http://records.test/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKENS[who]}`,
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
    },
    body: JSON.stringify(body),
  });
}

describe('2025-era sessions', () => {
  function handler(options: Parameters<typeof serveBothEras>[1] = {}) {
    const h = serveBothEras(instance(shared(['r1'])).factory, options);
    opened.push(h);
    const fetchAs = (request: Request) => h.fetch(request, { authInfo: authInfoOf(request) });
    return { h, fetchAs };
  }

  async function open(fetchAs: (r: Request) => Promise<Response>, who = 'alice') {
    const response = await fetchAs(post(initialize, who));
    expect(response.status).toBe(200);
    await response.body?.cancel();
    return response.headers.get('mcp-session-id') as string;
  }

  it('belong to the principal that opened them', async () => {
    const { h, fetchAs } = handler();
    const session = await open(fetchAs);
    expect(h.sessions).toBe(1);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const asBob = await fetchAs(post(list, 'bob', session));
    expect(asBob.status).toBe(404);
    const asAlice = await fetchAs(post(list, 'alice', session));
    expect(asAlice.status).toBe(200);
    expect(await asAlice.text()).toContain('delete_record');
  });

  it('an unknown session is 404, a request without one that is not initialize is 400', async () => {
    const { fetchAs } = handler();
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    expect((await fetchAs(post(list, 'alice', crypto.randomUUID()))).status).toBe(404);
    expect((await fetchAs(post(list, 'alice'))).status).toBe(400);
    // A body that is not JSON at all is a parse error, not a missing session.
    for (const text of ['{', '']) {
      const broken = new Request(post(list, 'alice'), { body: text });
      const answer = await fetchAs(broken);
      expect([text, answer.status, (await answer.json()).error.code]).toEqual([text, 400, -32700]);
    }
  });

  it('idle sessions are closed; at most maxSessions are open', async () => {
    let now = 1_000_000;
    const { h, fetchAs } = handler({ sessionIdleMs: 60_000, maxSessions: 2, now: () => now });
    const first = await open(fetchAs);
    await open(fetchAs, 'bob');
    expect((await fetchAs(post(initialize, 'alice'))).status).toBe(503);
    now += 61_000;
    await open(fetchAs); // sweeps both idle sessions first
    expect(h.sessions).toBe(1);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    expect((await fetchAs(post(list, 'alice', first))).status).toBe(404);
  });

  it('one principal cannot take every session: its own least recently used one closes', async () => {
    const { h, fetchAs } = handler({ maxSessions: 3, maxSessionsPerPrincipal: 2 });
    const bobs: string[] = [];
    for (let i = 0; i < 5; i++) bobs.push(await open(fetchAs, 'bob'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.sessions).toBe(2);
    // Alice still gets in, though bob asked for more than maxSessions.
    const alices = await open(fetchAs, 'alice');
    expect(h.sessions).toBe(3);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    expect((await fetchAs(post(list, 'alice', alices))).status).toBe(200);
    expect((await fetchAs(post(list, 'bob', bobs[0]))).status).toBe(404);
    for (const recent of bobs.slice(3))
      expect((await fetchAs(post(list, 'bob', recent))).status).toBe(200);
  });

  it('a principal whose sessions are all busy still opens a new one: its least recently used goes', async () => {
    const { fetchAs } = handler({ maxSessionsPerPrincipal: 2 });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const older = await open(fetchAs, 'bob');
    const newer = await open(fetchAs, 'bob');
    // Responses left unread: both sessions have a call in progress.
    const held = [await fetchAs(post(list, 'bob', older)), await fetchAs(post(list, 'bob', newer))];
    const third = await fetchAs(post(initialize, 'bob'));
    expect(third.status).toBe(200);
    await third.body?.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    const opened = third.headers.get('mcp-session-id') as string;
    expect((await fetchAs(post(list, 'bob', opened))).status).toBe(200);
    expect((await fetchAs(post(list, 'bob', older))).status).toBe(404);
    for (const r of held) await r.body?.cancel();
  });

  it('a response stream its reader cancels no longer counts its session as busy', async () => {
    const { fetchAs } = handler({ maxSessionsPerPrincipal: 2 });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const busy = await open(fetchAs, 'bob');
    const abandoned = await open(fetchAs, 'bob');
    const held = await fetchAs(post(list, 'bob', busy));
    // Used after `busy`, so the more recent; its stream then abandoned by the client.
    await (await fetchAs(post(list, 'bob', abandoned))).body?.cancel();
    const third = await fetchAs(post(initialize, 'bob'));
    expect(third.status).toBe(200);
    await third.body?.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    // The idle one goes first, though used more recently; the one with a call in progress stays.
    expect((await fetchAs(post(list, 'bob', abandoned))).status).toBe(404);
    const still = await fetchAs(post(list, 'bob', busy));
    expect(still.status).toBe(200);
    await still.body?.cancel();
    await held.body?.cancel();
  });

  it('concurrent initializes of one principal all open: none closes another still being opened', async () => {
    const { h, fetchAs } = handler({ maxSessionsPerPrincipal: 2 });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    await open(fetchAs, 'bob');
    await open(fetchAs, 'bob');
    const answers = await Promise.all([0, 1, 2].map(() => fetchAs(post(initialize, 'bob'))));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    for (const r of answers) await r.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Once all are open the share holds again: the least recently used go, the older ones first.
    expect(h.sessions).toBe(2);
    let usable = 0;
    for (const r of answers) {
      const used = await fetchAs(post(list, 'bob', r.headers.get('mcp-session-id') as string));
      if (used.status === 200) usable++;
      await used.body?.cancel();
    }
    expect(usable).toBe(2);
  });

  it('a standalone GET stream does not make a session busy; a call in progress does', async () => {
    const { fetchAs } = handler({ maxSessionsPerPrincipal: 2 });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const calling = await open(fetchAs, 'bob');
    const listening = await open(fetchAs, 'bob');
    const held = await fetchAs(post(list, 'bob', calling));
    const stream = await fetchAs(
      new Request('http://records.test/mcp', {
        method: 'GET',
        headers: {
          accept: 'text/event-stream',
          authorization: `Bearer ${TOKENS.bob}`,
          'mcp-session-id': listening,
          'mcp-protocol-version': '2025-11-25',
        },
      }),
    );
    expect(stream.status).toBe(200);
    const third = await fetchAs(post(initialize, 'bob'));
    await third.body?.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await fetchAs(post(list, 'bob', listening))).status).toBe(404);
    const still = await fetchAs(post(list, 'bob', calling));
    expect(still.status).toBe(200);
    await still.body?.cancel();
    await held.body?.cancel();
    await stream.body?.cancel();
  });

  it('a call whose client went away (its request aborted) no longer counts as busy', async () => {
    const { fetchAs } = handler({ maxSessionsPerPrincipal: 2 });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const busy = await open(fetchAs, 'bob');
    const gone = await open(fetchAs, 'bob');
    const held = await fetchAs(post(list, 'bob', busy));
    // Used after `busy`; its client's socket then closes, which aborts the request's signal.
    const abort = new AbortController();
    const left = await fetchAs(new Request(post(list, 'bob', gone), { signal: abort.signal }));
    expect(left.status).toBe(200);
    abort.abort();
    const third = await fetchAs(post(initialize, 'bob'));
    await third.body?.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await fetchAs(post(list, 'bob', gone))).status).toBe(404);
    const still = await fetchAs(post(list, 'bob', busy));
    expect(still.status).toBe(200);
    await still.body?.cancel();
    await held.body?.cancel();
  });

  it('maxSessions holds against concurrent initializes', async () => {
    const { h, fetchAs } = handler({ maxSessions: 2 });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => fetchAs(post(initialize, i % 2 ? 'alice' : 'bob'))),
    );
    for (const r of answers) await r.body?.cancel();
    expect(answers.filter((r) => r.status === 200)).toHaveLength(2);
    expect(answers.filter((r) => r.status === 503)).toHaveLength(6);
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.sessions).toBe(2);
  });

  it.each([
    { maxSessions: Number.NaN },
    { maxSessions: -1 },
    { maxSessions: 1.5 },
    { sessionIdleMs: Number.NaN },
    { sessionIdleMs: 0 },
  ])('refuses %o: an unset environment variable read as a number must not lift a bound', (bad) => {
    expect(() => serveBothEras(instance(shared(['r1'])).factory, bad)).toThrow(TypeError);
  });

  it('callers without a principal are not counted as one (only maxSessions holds)', async () => {
    const { h } = handler({ maxSessionsPerPrincipal: 2 });
    for (let i = 0; i < 5; i++) {
      const response = await h.fetch(post(initialize, 'alice'), {});
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.sessions).toBe(5);
  });

  it('close() ends every session', async () => {
    const { h, fetchAs } = handler();
    await open(fetchAs);
    await open(fetchAs, 'bob');
    await h.close();
    expect(h.sessions).toBe(0);
  });
});

describe('why 2025-era clients need a session', () => {
  it("the SDK's stateless 2025 serving has no client capabilities, so the gated tool refuses", async () => {
    const s = shared(['r1']);
    const stateless = createMcpHandler(instance(s).factory); // legacy: 'stateless', the SDK's default
    opened.push(stateless);
    const asked: string[] = [];
    const client = await officialClient(
      async (input, init) => {
        const request = new Request(input, init);
        return stateless.fetch(request, { authInfo: authInfoOf(request) });
      },
      'alice',
      'legacy',
      ({ message }) => {
        asked.push(message);
        return { action: 'accept', content: { confirm: true } };
      },
    );
    opened.push(client);
    const refused = await callTool(client, { name: 'delete_record', arguments: { id: 'r1' } });
    expect(refused.error?.code).toBe(-32021);
    expect(refused.error?.message).toMatch(/did not declare at initialize/);
    expect(asked).toEqual([]);
    expect(s.records.has('r1')).toBe(true);
  });
});

describe('bodies nested past maxBodyDepth', () => {
  /** A marker the body text replaces: JSON.stringify itself would overflow on such nesting. */
  const NESTED = '"@@nested@@"';
  const nested = (levels: number) => `${'{"a":'.repeat(levels)}"x"${'}'.repeat(levels)}`;
  const call = (form: unknown, extra?: unknown) => ({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: {
      name: 'delete_record',
      arguments: { id: 'r1', ...(extra === undefined ? {} : { note: extra }) },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { elicitation: { form } },
      },
    },
  });
  const modern = (body: unknown, inner?: string) =>
    new Request('http://records.test/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKENS.alice}`,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'delete_record',
      },
      body: JSON.stringify(body).replace(NESTED, inner ?? NESTED),
    });

  it('are refused with -32600 before the SDK reads them (its validation overflowed the stack)', async () => {
    const h = serveBothEras(instance(shared(['r1'])).factory);
    opened.push(h);
    for (const levels of [200, 5_000, 50_000]) {
      const response = await h.fetch(modern(call(JSON.parse(NESTED)), nested(levels)), {
        authInfo: authInfoOf(modern({})),
      });
      expect(response.status, `${levels}`).toBe(400);
      expect((await response.json()).error.code).toBe(-32600);
    }
    // Brackets inside strings are text, not nesting.
    const text = await h.fetch(modern(call({}, '[{'.repeat(10_000))), {
      authInfo: authInfoOf(modern({})),
    });
    expect(text.status).not.toBe(400);
    await text.body?.cancel();
  });

  it('takes 65 levels and refuses 66 (envelope, params, _meta, capabilities, elicitation: 5 above the form)', async () => {
    const h = serveBothEras(instance(shared(['r1'])).factory);
    opened.push(h);
    const authInfo = authInfoOf(modern({}));
    const at = await h.fetch(modern(call(JSON.parse(NESTED)), nested(60)), { authInfo });
    expect(at.status).not.toBe(400);
    await at.body?.cancel();
    const past = await h.fetch(modern(call(JSON.parse(NESTED)), nested(61)), { authInfo });
    expect(past.status).toBe(400);
    expect((await past.json()).error.message).toContain('nested deeper than 65');
  });

  it("reads no more of a body than the SDK's maxRequestBodySize: a larger one is the SDK's 413", async () => {
    const bound = 64 * 1024;
    const h = serveBothEras(instance(shared(['r1'])).factory, {
      modern: { maxRequestBodySize: bound },
    });
    opened.push(h);
    let pulled = 0;
    const chunk = new TextEncoder().encode('1,'.repeat(512));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"a":['));
        if (sent >= 1024) {
          controller.enqueue(new TextEncoder().encode('1]}'));
          return controller.close();
        }
        sent++;
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const request = new Request('http://records.test/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await h.fetch(request, { authInfo: authInfoOf(modern({})) });
    expect(response.status).toBe(413);
    // 1 MiB offered; read up to the bound, and a few chunks the streams pull ahead.
    expect(pulled).toBeLessThan(4 * bound);
  });

  it('maxBodyDepth sets the limit, and must be a positive integer', async () => {
    const h = serveBothEras(instance(shared(['r1'])).factory, { maxBodyDepth: 3 });
    opened.push(h);
    const response = await h.fetch(modern(call({})), { authInfo: authInfoOf(modern({})) });
    expect(response.status).toBe(400);
    expect(() => serveBothEras(instance(shared(['r1'])).factory, { maxBodyDepth: 0 })).toThrow(
      TypeError,
    );
  });
});
