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
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfirmationGate } from '@mrtr/gate';
import { toNodeHandler } from '@mrtr/node';
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

/** A running conformance server. */
export interface RunningConformanceServer {
  server: Server;
  /** The MCP endpoint URL, e.g. `http://127.0.0.1:3100/mcp`. */
  url: string;
  close(): Promise<void>;
}

/** Start on `host:port` (default `127.0.0.1`, port 0 picks a free one) at path `/mcp`. */
export async function startConformanceServer(
  options: { host?: string; port?: number } = {},
): Promise<RunningConformanceServer> {
  const server = createServer(toNodeHandler(createConformanceEndpoint(), { path: '/mcp' }));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    url: `http://${shown}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
