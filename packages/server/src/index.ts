/**
 * @mrtr/server: a stateless MCP 2026-07-28 endpoint as a web-standard
 * `(Request) => Promise<Response>`, ready for any framework adapter
 * (`@mrtr/node`, `@mrtr/express`, `@mrtr/hono`). It serves `server/discover`,
 * tools, prompts, resources and completions over Streamable HTTP and enforces
 * the transport's header, version, Host/Origin and body-size rules.
 *
 * @example
 * ```ts
 * import { createHash, timingSafeEqual } from 'node:crypto';
 * import { createMcpEndpoint } from '@mrtr/server';
 * import { textResult } from '@mrtr/wire';
 * const token = process.env.MCP_TOKEN; // alice's bearer token, never a default
 * if (!token) throw new Error('set MCP_TOKEN (make one with `openssl rand -base64 32`)');
 * // Constant time: `===` returns at the first differing character, so timing would leak the token.
 * const digest = (text: string) => createHash('sha256').update(text).digest();
 * const sameToken = (given: string | null, expected: string) =>
 *   timingSafeEqual(digest(given ?? ''), digest(expected));
 * const endpoint = createMcpEndpoint({
 *   serverInfo: { name: 'notes', version: '1.0.0' },
 *   tools: [{ name: 'ping_tool', description: 'Answers pong', inputSchema: { type: 'object' }, handler: () => textResult('pong') }],
 *   authenticate: (req) => (sameToken(req.headers.get('authorization'), `Bearer ${token}`) ? { id: 'alice' } : undefined),
 *   maxBodyBytes: 256 * 1024,
 * });
 * ```
 * @module @mrtr/server
 * @packageDocumentation
 */
export { compileTemplate } from './catalog.js';
export { createMcpEndpoint, SUPPORTED_PROTOCOL_VERSIONS } from './endpoint.js';
export type { HttpExchange, HttpReply } from './exchange.js';
export { checkHeaderParams, collectHeaderParams, type HeaderParam } from './headers.js';
export {
  absoluteTargetProblem,
  type BodyRead,
  bodyText,
  DEFAULT_MAX_BODY_BYTES,
  DISCARD_LIMIT_BYTES,
  DISCARD_TIMEOUT_MS,
  targetPath,
  validHost,
} from './http.js';
export { MRTR_METHODS } from './input-required.js';
export { DEFAULT_MAX_DEPTH } from './json-shape.js';
export { RATE_LIMITED, type RateLimitOptions } from './rate-limit.js';
export type {
  AnyToolDefinition,
  McpEndpoint,
  McpEndpointOptions,
  Principal,
  PromptDefinition,
  PromptGetContext,
  ReadResourceOutcome,
  RequestContext,
  ResourceDefinition,
  ResourceReadContext,
  ResourceTemplateDefinition,
  ToolCallContext,
  ToolDefinition,
} from './types.js';
