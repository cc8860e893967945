import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHttpServer } from '@mrtr/node';
import type { McpEndpoint } from '@mrtr/server';

/** A running example server. */
export interface RunningServer {
  server: Server;
  /** The MCP endpoint URL, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Stop listening, drop open connections, then run `onClose`. */
  close(): Promise<void>;
}

/**
 * Serve `endpoint` at `/mcp` on `host:port` with `node:http` (port 0 picks a
 * free one). Every answer has a JSON-RPC body, even to a request Node's HTTP
 * parser refuses (`createMcpHttpServer` of `@mrtr/node`).
 * @throws when the port cannot be bound.
 */
export async function listen(
  endpoint: McpEndpoint,
  options: { host?: string; port?: number; onClose?: () => void | Promise<void> } = {},
): Promise<RunningServer> {
  const server = createMcpHttpServer(endpoint, { path: '/mcp' });
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
      }).then(() => options.onClose?.()),
  };
}
