/**
 * @mrtr/wire: zod schemas and types for the MCP 2026-07-28 messages a
 * confirmation gate and a stateless server send and read, named as in the
 * protocol's `schema.json`: the JSON-RPC envelopes, request `_meta`,
 * `ClientCapabilities`, the Multi Round-Trip Request types
 * (`InputRequiredResult`, `InputRequests`, `InputResponses`), results with
 * `resultType` and caching hints, the error codes with their `data`, and the
 * form-mode `requestedSchema` subset with a builder and a validator, and the
 * Streamable HTTP header encoding client and server share (Base64 sentinel,
 * `x-mcp-header` annotations).
 *
 * @example
 * ```ts
 * import { CallToolRequestParamsSchema, ErrorCode, McpError, MetaKey, field, formSchema,
 *   supportsFormElicitation, validateFormContent } from '@mrtr/wire';
 *
 * declare const request: { params?: unknown }; // a tools/call request as received
 * const params = CallToolRequestParamsSchema.parse(request.params);
 * if (!supportsFormElicitation(params._meta[MetaKey.clientCapabilities]))
 *   throw new McpError(ErrorCode.MissingRequiredClientCapability, 'form elicitation required');
 * const requestedSchema = formSchema({ confirm: field.boolean({ title: 'Delete it?' }) }, { required: ['confirm'] });
 * const check = validateFormContent(requestedSchema, { confirm: true }); // {ok: true, value: {confirm: true}}
 * ```
 * @module @mrtr/wire
 * @packageDocumentation
 */

export * from './checks.js';
export * from './content.js';
export * from './database-refusal.js';
export * from './errors.js';
export * from './form.js';
export * from './form-builder.js';
export * from './headers.js';
export * from './jsonrpc.js';
export * from './meta.js';
export * from './mrtr.js';
export * from './requests.js';
export * from './results.js';
export * from './unavailable.js';
