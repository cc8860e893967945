import { afterEach, describe, expect, it } from 'vitest';
import { inspectUrl, McpClient } from '../src/index.js';
import { done, type Reply, scriptedAnswerer, scriptedServer } from './helpers.js';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function serve(script: (body: any, n: number) => Reply) {
  const s = await scriptedServer(script);
  servers.push(s);
  return s;
}
const urlRequest = (url: string, message = 'Connect your account') => ({
  method: 'elicitation/create',
  params: { mode: 'url', message, url },
});
const askOnce = (inputRequests: Record<string, unknown>) =>
  serve((_b, n) =>
    n === 0
      ? { result: { resultType: 'input_required', inputRequests, requestState: 'u' } }
      : done(),
  );

describe('inspectUrl (client/elicitation, "Safe URL Handling")', () => {
  const server = new URL('https://mcp.example.com/mcp');

  it('gives the full URL and the host of a plain https URL, with no warnings', () => {
    const r = inspectUrl('https://mcp.example.com/connect?x=1#y', server);
    expect(r).toEqual({
      ok: true,
      facts: {
        url: 'https://mcp.example.com/connect?x=1#y',
        host: 'mcp.example.com',
        protocol: 'https:',
        warnings: [],
      },
    });
  });

  it('warns about Punycode, plain http, user info, IP hosts and another site', () => {
    const r = inspectUrl('http://mcp.example.com@xn--pple-43d.com/login', server);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.facts.host).toBe('xn--pple-43d.com');
    const text = r.facts.warnings.join('\n');
    expect(text).toMatch(/Punycode/);
    expect(text).toMatch(/plain http/);
    expect(text).toMatch(/user name before the host/);
    expect(text).toMatch(/not to the MCP server's host mcp\.example\.com/);
    const ip = inspectUrl('https://10.0.0.1/x', server);
    expect(ip.ok && ip.facts.warnings.join()).toMatch(/IP address/);
  });

  it('warns when the URL leads to another port of the same host, not for the same host and port', () => {
    const local = new URL('http://127.0.0.1:3000/mcp');
    const other = inspectUrl('http://127.0.0.1:8080/approve', local);
    expect(other.ok && other.facts.warnings).toEqual([
      'the host is a bare IP address, not a name',
      "the URL leads to 127.0.0.1:8080, not to the MCP server's host 127.0.0.1:3000",
    ]);
    const same = inspectUrl('http://127.0.0.1:3000/approve', local);
    expect(same.ok && same.facts.warnings).toEqual(['the host is a bare IP address, not a name']);
    // A default port written out is the same port.
    expect(inspectUrl('https://mcp.example.com:443/a', server)).toMatchObject({
      ok: true,
      facts: { warnings: [] },
    });
    expect(inspectUrl('https://mcp.example.com:8443/a', server)).toMatchObject({
      ok: true,
      facts: {
        warnings: [expect.stringMatching(/mcp\.example\.com:8443, not to .* mcp\.example\.com$/)],
      },
    });
  });

  it('refuses what it must not open', () => {
    expect(inspectUrl('javascript:alert(1)', server).ok).toBe(false);
    expect(inspectUrl('file:///etc/passwd', server).ok).toBe(false);
    expect(inspectUrl('/relative', server).ok).toBe(false);
    expect(inspectUrl(42, server).ok).toBe(false);
  });
});

describe('URL-mode elicitation', () => {
  it('shows the full URL and host, and opens it only after consent', async () => {
    const s = await askOnce({ link: urlRequest('https://auth.example.com/connect?id=7') });
    const urls = { answers: [{ action: 'accept' as const }], opened: [] as string[] };
    let openedBeforeAsk = -1;
    const { answerer, questions } = scriptedAnswerer([], urls);
    const ask = answerer.url?.ask.bind(answerer.url);
    if (answerer.url && ask)
      answerer.url.ask = async (q) => {
        openedBeforeAsk = urls.opened.length;
        return ask(q);
      };
    await new McpClient({ url: s.url, answerer }).callTool('connect');
    expect(openedBeforeAsk).toBe(0);
    expect(urls.opened).toEqual(['https://auth.example.com/connect?id=7']);
    const q = questions[0] as any;
    expect(q.mode).toBe('url');
    expect(q.url).toBe('https://auth.example.com/connect?id=7');
    expect(q.host).toBe('auth.example.com');
    expect(q.message).toBe('Connect your account');
    expect(q.warnings.join()).toMatch(/not to the MCP server's host/);
    // URL mode: accept carries no content; requestState is echoed.
    expect(s.requests[1]?.body.params).toMatchObject({
      inputResponses: { link: { action: 'accept' } },
      requestState: 'u',
    });
    expect(s.requests[1]?.body.params.inputResponses.link).not.toHaveProperty('content');
  });

  it('never opens a URL the person declined or dismissed', async () => {
    const s = await askOnce({
      a: urlRequest('https://a.example/'),
      b: urlRequest('https://b.example/'),
    });
    const urls = {
      answers: [{ action: 'decline' as const }, { action: 'cancel' as const }],
      opened: [] as string[],
    };
    await new McpClient({ url: s.url, answerer: scriptedAnswerer([], urls).answerer }).callTool(
      't',
    );
    expect(urls.opened).toEqual([]);
    expect(s.requests[1]?.body.params.inputResponses).toEqual({
      a: { action: 'decline' },
      b: { action: 'cancel' },
    });
  });

  it('declines, without asking, a URL it must not open or a URL mode it never declared', async () => {
    const s = await askOnce({ js: urlRequest('javascript:alert(1)') });
    const urls = { answers: [], opened: [] as string[] };
    const out = await new McpClient({
      url: s.url,
      answerer: scriptedAnswerer([], urls).answerer,
    }).callTool('t');
    expect(s.requests[1]?.body.params.inputResponses).toEqual({ js: { action: 'decline' } });
    expect(out.autoDeclined[0]).toMatchObject({ key: 'js', mode: 'url' });

    const s2 = await askOnce({ u: urlRequest('https://a.example/') });
    const formOnly = scriptedAnswerer([]);
    const out2 = await new McpClient({ url: s2.url, answerer: formOnly.answerer }).callTool('t');
    expect(formOnly.questions).toHaveLength(0);
    expect(out2.autoDeclined[0]?.reasons).toEqual(['this client did not declare URL elicitation']);
  });

  it('sends cancel when the URL cannot be opened after consent', async () => {
    const s = await askOnce({ u: urlRequest('https://a.example/') });
    const answerer = {
      url: {
        ask: async () => ({ action: 'accept' as const }),
        open: () => {
          throw new Error('no browser');
        },
      },
    };
    const out = await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(s.requests[1]?.body.params.inputResponses).toEqual({ u: { action: 'cancel' } });
    expect(out.events).toContainEqual({
      type: 'open-failed',
      key: 'u',
      request: { method: 'tools/call', target: 't', arguments: {} },
      round: 1,
      reason: 'no browser',
    });
  });

  it('lets an open() wait for the person past answerTimeoutMs, and stops it with the call', async () => {
    const s = await askOnce({ u: urlRequest('https://a.example/') });
    const person = {
      url: {
        ask: async () => ({ action: 'accept' as const }),
        // Done on the page after longer than answerTimeoutMs: signing in takes time.
        open: () => new Promise<void>((resolve) => setTimeout(resolve, 120)),
      },
    };
    await new McpClient({ url: s.url, answerer: person, answerTimeoutMs: 50 }).callTool('t');
    expect(s.requests[1]?.body.params.inputResponses).toEqual({ u: { action: 'accept' } });

    const again = await askOnce({ u: urlRequest('https://a.example/') });
    const seen: AbortSignal[] = [];
    const call = new AbortController();
    const leaves = {
      url: {
        ask: async () => ({ action: 'accept' as const }),
        // Waits for "done on the page" that never comes; the person leaves once it is open
        // (a fixed delay from the call's start could fire before open() on a loaded machine).
        open: (_url: string, signal: AbortSignal) => {
          seen.push(signal);
          setTimeout(() => call.abort(new Error('the person left')), 30);
          return new Promise<void>(() => {});
        },
      },
    };
    const stopped = new McpClient({ url: again.url, answerer: leaves }).callTool(
      't',
      {},
      { signal: call.signal },
    );
    await expect(stopped).rejects.toMatchObject({ name: 'AbortedError' });
    expect(seen[0]?.aborted).toBe(true);
    expect(again.requests).toHaveLength(1);
  });
});
