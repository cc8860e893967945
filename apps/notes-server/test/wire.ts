/** Raw-HTTP helpers for driving an MCP 2026-07-28 endpoint in tests, without any SDK. */

export const PROTOCOL = '2026-07-28';

export type Capabilities = Record<string, unknown>;

let nextId = 1;

/** POST one JSON-RPC request with the headers Streamable HTTP requires. */
export async function rpc(
  url: string,
  token: string | undefined,
  method: string,
  params: Record<string, unknown> = {},
  options: {
    capabilities?: Capabilities;
    headers?: Record<string, string>;
    id?: number | string;
  } = {},
): Promise<{ status: number; body: any }> {
  const body = {
    jsonrpc: '2.0',
    id: options.id ?? nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL,
        'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '0.0.0' },
        'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {
          elicitation: { form: {} },
        },
      },
    },
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL,
    'mcp-method': method,
  };
  if (typeof params.name === 'string') headers['mcp-name'] = params.name;
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, ...options.headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** `tools/call` and return the JSON-RPC response body. */
export async function callTool(
  url: string,
  token: string,
  name: string,
  args: Record<string, unknown>,
  extra: { inputResponses?: unknown; requestState?: string; capabilities?: Capabilities } = {},
) {
  const params: Record<string, unknown> = { name, arguments: args };
  if (extra.inputResponses !== undefined) params.inputResponses = extra.inputResponses;
  if (extra.requestState !== undefined) params.requestState = extra.requestState;
  const opts = extra.capabilities ? { capabilities: extra.capabilities } : {};
  return rpc(url, token, 'tools/call', params, opts);
}
