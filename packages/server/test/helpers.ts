import { assertValidMessage } from '@mrtr/spec-schema';
import type { McpEndpoint } from '../src/index.js';

/** Request `_meta` with the two required keys. */
export const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/**
 * A POST as a conforming client sends it: JSON, both Accept types, and the
 * Streamable HTTP headers mirrored from the body. `headers` override (a value
 * of `undefined` removes one).
 */
export function post(
  body: unknown,
  headers: Record<string, string | undefined> = {},
  url = 'http://127.0.0.1/mcp',
): Request {
  const b = body as { method?: string; params?: { name?: string; uri?: string } };
  const base: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': b?.method,
    'mcp-name': b?.params?.name ?? b?.params?.uri,
  };
  const merged = Object.fromEntries(
    Object.entries({ ...base, ...headers }).filter(
      (e): e is [string, string] => e[1] !== undefined,
    ),
  );
  return new Request(url, {
    method: 'POST',
    headers: merged,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

let nextId = 1;
/** A JSON-RPC request with `_meta` (override it with `meta`). */
export function rpc(method: string, params: Record<string, unknown> = {}, meta: unknown = META) {
  return { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: meta } };
}

/**
 * Send through the endpoint and parse the JSON answer. A well-formed request
 * (`valid`, the default) and every response are checked against the official
 * schema.json: what our tests put on the wire must be valid MCP.
 */
export async function send(endpoint: McpEndpoint, req: Request, valid = true) {
  if (valid) assertValidMessage(JSON.parse(await req.clone().text()));
  const method = req.headers.get('mcp-method') ?? undefined;
  const res = await endpoint(req);
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  if (body !== undefined && res.headers.get('content-type')?.includes('application/json'))
    assertValidMessage(body, method ? { method } : {});
  return { status: res.status, body, headers: res.headers, text };
}
