/**
 * @mrtr/sdk: gate destructive tools of an official-SDK `McpServer`
 * (`@modelcontextprotocol/server` 2.4) with `@mrtr/gate`'s confirmation flow
 * (MCP 2026-07-28 `basic/patterns/mrtr`, `client/elicitation`), for
 * 2026-07-28 clients and, through the SDK's shim on a session, for 2025-era
 * clients, with the same guarantees: a ticket bound to principal, tool and
 * arguments, single use across instances, decline and cancel.
 *
 * @example
 * ```ts
 * import { McpServer } from '@modelcontextprotocol/server';
 * import { type ConfirmationGate, confirm } from '@mrtr/gate';
 * import { registerGatedTool, serveBothEras } from '@mrtr/sdk';
 * import { textResult } from '@mrtr/wire';
 * import { z } from 'zod';
 *
 * declare const gate: ConfirmationGate; // sealer and replay store: see @mrtr/gate
 * const handler = serveBothEras(() => {
 *   const server = new McpServer({ name: 'records', version: '1.0.0' });
 *   registerGatedTool(server, gate, {
 *     name: 'delete_record',
 *     description: 'Delete a record; a person confirms first.',
 *     args: z.object({ id: z.string().regex(/^[\w-]{1,64}$/) }), // an id: nothing a database can't keep
 *     form: { confirm: confirm({ title: 'Yes, delete it' }) },
 *     ask: async ({ args }) => ({ message: `Delete ${args.id}? This cannot be undone.`, view: args.id }),
 *     perform: async ({ view }) => textResult(`Deleted ${view}.`),
 *   });
 *   return server;
 * });
 * // handler.fetch(request, { authInfo }), or toNodeHandler(handler) of @modelcontextprotocol/node
 * ```
 * @module @mrtr/sdk
 * @packageDocumentation
 */
export { type BothErasHandler, type BothErasOptions, serveBothEras } from './both-eras.js';
export { type PrincipalOf, principalFromAuthInfo, principalOfAuthInfo } from './principal.js';
export { type GatedToolOptions, registerGatedTool } from './register.js';
