/**
 * Raw-HTTP helpers (re-exported by the package index) for driving an MCP 2026-07-28 endpoint in tests, without
 * any SDK. Every request sent and every response body received is checked
 * against the official schema.json (`@mrtr/spec-schema`): a violation throws
 * `SpecSchemaError`. A test that sends a deliberately malformed request says
 * so with `invalid: true`, which skips the request check only.
 */
import { assertValidMessage } from './index.js';

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
    /** The request is malformed on purpose: do not check it against the schema. */
    invalid?: boolean;
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
  if (!options.invalid) assertValidMessage(body);
  if (typeof params.name === 'string') headers['mcp-name'] = params.name;
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, ...options.headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : undefined;
  // Whatever was sent, what the server answers must be valid MCP.
  if (parsed !== undefined) assertValidMessage(parsed, { method });
  return { status: res.status, body: parsed };
}

/** `tools/call` and return the JSON-RPC response body. */
export async function callTool(
  url: string,
  token: string,
  name: string,
  args: Record<string, unknown>,
  extra: {
    inputResponses?: unknown;
    requestState?: string;
    capabilities?: Capabilities;
    /** The request is malformed on purpose (e.g. an `ElicitResult` with an unknown action). */
    invalid?: boolean;
  } = {},
) {
  const params: Record<string, unknown> = { name, arguments: args };
  if (extra.inputResponses !== undefined) params.inputResponses = extra.inputResponses;
  if (extra.requestState !== undefined) params.requestState = extra.requestState;
  const opts = {
    ...(extra.capabilities ? { capabilities: extra.capabilities } : {}),
    ...(extra.invalid ? { invalid: true } : {}),
  };
  return rpc(url, token, 'tools/call', params, opts);
}
