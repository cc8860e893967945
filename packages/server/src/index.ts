/**
 * @mrtr/server: a stateless MCP 2026-07-28 endpoint as a web-standard
 * `(Request) => Promise<Response>`, ready for any framework adapter
 * (`@mrtr/node`, `@mrtr/express`, `@mrtr/hono`).
 *
 * @example
 * ```ts
 * import { createMcpEndpoint } from '@mrtr/server';
 * const endpoint = createMcpEndpoint({
 *   serverInfo: { name: 'notes', version: '1.0.0' },
 *   tools: [{ name: 'ping_tool', inputSchema: { type: 'object' }, handler: () => textResult('pong') }],
 *   authenticate: (req) => (req.headers.get('authorization') === 'Bearer s3cret' ? { id: 'alice' } : undefined),
 * });
 * ```
 * @packageDocumentation
 */
export { createMcpEndpoint, SUPPORTED_PROTOCOL_VERSIONS } from './endpoint.js';
export { decodeHeaderValue } from './headers.js';
export type {
  AnyToolDefinition,
  McpEndpoint,
  McpEndpointOptions,
  Principal,
  RequestContext,
  ToolCallContext,
  ToolDefinition,
} from './types.js';
