import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { handleClientError, toNodeHandler } from '@mrtr/node';
import type { McpEndpoint } from '@mrtr/server';
import { APPROVAL_BASE_PATH } from './approvals.js';

/** A running example server. */
export interface RunningServer {
  server: Server;
  /** The MCP endpoint URL, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** The origin the server is reached at, e.g. `http://127.0.0.1:3000`. */
  origin: string;
  /** Stop listening, drop open connections, then run `onClose`. */
  close(): Promise<void>;
}

/** What an example server serves: the MCP endpoint at `/mcp`, and its approval page under `/approve/`. */
export interface Served {
  endpoint: McpEndpoint;
  page?: (request: Request) => Promise<Response>;
}

/** Where and how {@link listen} and {@link listenApp} serve. */
export interface ListenOptions {
  host?: string;
  /** Port to bind (0, the default, picks a free one). */
  port?: number;
  /** The origin people reach the server at, when not `http://host:port` (behind a proxy). */
  publicOrigin?: string;
  onClose?: () => void | Promise<void>;
}

/**
 * Serve `endpoint` at `/mcp` on `host:port` with `node:http` (port 0 picks a
 * free one). Every answer has a JSON-RPC body, even to a request Node's HTTP
 * parser refuses (`createMcpHttpServer` of `@mrtr/node`).
 * @throws when the port cannot be bound.
 */
export function listen(endpoint: McpEndpoint, options: ListenOptions = {}): Promise<RunningServer> {
  return listenApp(() => ({ endpoint }), options);
}

/**
 * Bind `host:port`, then build what to serve once the origin is known (the
 * approval page's URLs and checks need it: `publicOrigin`, else
 * `http://host:port` as bound), and serve the MCP endpoint at `/mcp` and the
 * approval page under `/approve/`.
 * @throws when the port cannot be bound, or `build` throws (the port is released).
 */
export async function listenApp(
  build: (origin: string) => Promise<Served> | Served,
  options: ListenOptions = {},
): Promise<RunningServer> {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(503).end();
  };
  // Every answer has a JSON-RPC body, even to a request Node's HTTP parser refuses
  // (`handleClientError` of `@mrtr/node`); a missing `Host` is answered by the endpoint.
  const server = createServer({ requireHostHeader: false }, (req, res) => handle(req, res));
  server.on('clientError', handleClientError);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  const origin = options.publicOrigin ?? `http://${shown}:${port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  let served: Served;
  try {
    served = await build(origin);
  } catch (error) {
    await close();
    throw error;
  }
  const mcp = toNodeHandler(served.endpoint, { path: '/mcp' });
  const page = served.page && getRequestListener(served.page);
  handle = (req, res) => {
    if (page && (req.url ?? '').startsWith(`${APPROVAL_BASE_PATH}/`)) void page(req, res);
    else void mcp(req, res);
  };
  return {
    server,
    url: `${origin.replace(/\/$/, '')}/mcp`,
    origin,
    close: () => close().then(() => options.onClose?.()),
  };
}
