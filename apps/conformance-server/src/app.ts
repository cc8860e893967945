/**
 * The conformance server: every tool, prompt and resource the server
 * scenarios of the official MCP conformance suite (requirement set
 * 2026-07-28) call, served by `@mrtr/server` on `node:http` with no
 * authentication (every request is principal `conformance`).
 *
 * @example
 * ```ts
 * import { startConformanceServer } from '@mrtr/conformance-server';
 * const running = await startConformanceServer({ port: 0 });
 * console.log(running.url); // http://127.0.0.1:<port>/mcp
 * await running.close();
 * ```
 * @packageDocumentation
 */
import { randomBytes } from 'node:crypto';
import { listen, type RunningServer } from '@mrtr/example-kit';
import { ConfirmationGate } from '@mrtr/gate';
import { MemoryReplayStore } from '@mrtr/replay';
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import { completeArgument, prompts, resources, resourceTemplates } from './catalog.js';
import { mrtrTools } from './mrtr-tools.js';
import { plainTools } from './tools.js';

/** The one principal of this unauthenticated fixture server. */
export const CONFORMANCE_PRINCIPAL = { id: 'conformance' } as const;

/**
 * Build the endpoint. Tickets are sealed under `secret` (at least 32 bytes;
 * default: random, so state dies with the process).
 */
export function createConformanceEndpoint(options: { secret?: Uint8Array } = {}): McpEndpoint {
  const sealer = new TicketSealer({
    keys: [{ kid: 'c1', secret: options.secret ?? randomBytes(32) }],
  });
  const gate = new ConfirmationGate({ sealer, store: new MemoryReplayStore() });
  return createMcpEndpoint({
    serverInfo: { name: 'mrtr-conformance-server', version: '0.0.0' },
    instructions: 'Fixtures for the official MCP conformance suite.',
    tools: [...plainTools(), ...mrtrTools(gate, sealer)],
    prompts,
    resources,
    resourceTemplates,
    complete: completeArgument,
    authenticate: () => CONFORMANCE_PRINCIPAL,
    onError: (error) => console.error('[conformance-server] handler error', error),
  });
}

/** A running conformance server (`server`, `url`, `close()`). */
export type RunningConformanceServer = RunningServer;

/** Start on `host:port` (default `127.0.0.1`, port 0 picks a free one) at path `/mcp`. */
export function startConformanceServer(
  options: { host?: string; port?: number } = {},
): Promise<RunningConformanceServer> {
  return listen(createConformanceEndpoint(), options);
}
