/**
 * @mrtr/wire: zod schemas and types for the subset of MCP 2026-07-28 that a
 * confirmation gate sends and reads.
 *
 * @example
 * ```ts
 * import { CallToolRequestParamsSchema, supportsFormElicitation, MetaKey } from '@mrtr/wire';
 * const params = CallToolRequestParamsSchema.parse(request.params);
 * const caps = params._meta?.[MetaKey.clientCapabilities];
 * if (!supportsFormElicitation(caps)) throw new McpError(-32021, 'form elicitation required');
 * ```
 * @packageDocumentation
 */

export * from './errors.js';
export * from './form.js';
export * from './jsonrpc.js';
export * from './meta.js';
export * from './mrtr.js';
export * from './results.js';
