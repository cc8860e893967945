/**
 * Small scripted MCP servers for the terminal tests: each asks one question
 * and answers with what it received.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JSON-RPC request as the scripted servers read it. */
type Incoming = { id: unknown; method: string; params: any };

/**
 * Listen on a free port of 127.0.0.1 and answer every POST with the JSON text
 * `reply` makes of the request: the body reading and the listening the
 * scripted servers share.
 */
export async function listenJsonRpc(reply: (message: Incoming) => string) {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = reply(JSON.parse(raw) as Incoming);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    host: `127.0.0.1:${port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

/**
 * A server whose one tool, `ask`, returns `question` (an elicitation/create params object)
 * under key `q`, then answers with the inputResponses it received.
 */
export async function askingServer(question: Record<string, unknown>) {
  const { url, close } = await listenJsonRpc(({ id, method, params }) => {
    let result: Record<string, unknown>;
    if (method === 'server/discover') {
      result = {
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {} },
        ttlMs: 0,
        cacheScope: 'private',
      };
    } else if (method === 'tools/list') {
      result = {
        resultType: 'complete',
        tools: [{ name: 'ask', inputSchema: { type: 'object' } }],
        ttlMs: 0,
        cacheScope: 'private',
      };
    } else if (!params.inputResponses) {
      result = {
        resultType: 'input_required',
        inputRequests: { q: { method: 'elicitation/create', params: question } },
        requestState: 'st',
      };
    } else {
      const declared = params._meta?.['io.modelcontextprotocol/clientCapabilities']?.elicitation;
      const text = `got ${JSON.stringify(params.inputResponses)} with ${params.requestState}, declared ${JSON.stringify(declared)}`;
      result = { resultType: 'complete', content: [{ type: 'text', text }] };
    }
    return JSON.stringify({ jsonrpc: '2.0', id, result });
  });
  return { url, close };
}

/** What {@link rawServer} answers, as raw JSON text: values nested 20,000 deep cannot be stringified. */
export interface RawScript {
  /** `serverInfo.name` in `server/discover` (default `raw`). */
  name?: string;
  /** The `tools` array of `tools/list`, as JSON text (default one tool `t`). */
  tools?: string;
  /**
   * The `tools/call` reply: `{result}` or `{error}` members as JSON text (`"result":{…}`), for the
   * `n`th call (0-based) with these params.
   */
  call?(params: any, n: number): string;
}

/** A server answering from raw JSON text; `calls` records every `tools/call` params. */
export async function rawServer(script: RawScript) {
  const calls: any[] = [];
  const listening = await listenJsonRpc(({ id, method, params }) => {
    let member: string;
    if (method === 'server/discover') {
      member = `"result":${JSON.stringify({
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {} },
        _meta: {
          'io.modelcontextprotocol/serverInfo': { name: script.name ?? 'raw', version: '1' },
        },
      })}`;
    } else if (method === 'tools/list') {
      member = `"result":{"resultType":"complete","tools":${script.tools ?? '[{"name":"t","inputSchema":{"type":"object"}}]'}}`;
    } else {
      calls.push(params);
      member = script.call?.(params, calls.length - 1) ?? '"result":{"content":[]}';
    }
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},${member}}`;
  });
  return { ...listening, calls };
}
