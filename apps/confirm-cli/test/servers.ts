/**
 * Small scripted MCP servers for the terminal tests: each asks one question
 * and answers with what it received.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A server whose one tool, `ask`, returns `question` (an elicitation/create params object)
 * under key `q`, then answers with the inputResponses it received.
 */
export async function askingServer(question: Record<string, unknown>) {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const { id, method, params } = JSON.parse(raw);
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
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((r) => server.close(r)) };
}
