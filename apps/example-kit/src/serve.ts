import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener, RequestError } from '@hono/node-server';
import { SECURITY_HEADERS } from '@mrtr/approval-page';
import { createHttpServer, toNodeHandler } from '@mrtr/node';
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

/** Where {@link listenApp} publishes {@link Served.jwks} (RFC 8615 well-known path; RFC 7517 §5 set). */
export const JWKS_PATH = '/.well-known/jwks.json';

/** How long a client may cache the published JWKS, seconds: a rotation adds the next key this long before it signs. */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * What an example server serves: the MCP endpoint at `/mcp`, its approval
 * page under `/approve/`, and the public keys of its approval receipts at
 * {@link JWKS_PATH}.
 */
export interface Served {
  endpoint: McpEndpoint;
  page?: (request: Request) => Promise<Response>;
  /** The JWKS to publish (e.g. `ReceiptSigner#jwks()` of `@mrtr/receipt`): public keys only. */
  jwks?: () => { keys: object[] };
}

/**
 * Answer `GET`/`HEAD` of the JWKS: `application/json`, cacheable for
 * {@link JWKS_MAX_AGE_SECONDS}; any other method gets 405 with `Allow`.
 */
function serveJwks(jwks: () => { keys: object[] }, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: 'method_not_allowed' }));
    return;
  }
  const body = JSON.stringify(jwks());
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': `public, max-age=${JWKS_MAX_AGE_SECONDS}`,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
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
 * `http://host:port` as bound), and serve the MCP endpoint at `/mcp`, the
 * approval page under `/approve/` and the receipt keys at {@link JWKS_PATH}.
 * @throws when the port cannot be bound, or `build` throws (the port is released).
 */
export async function listenApp(
  build: (origin: string) => Promise<Served> | Served,
  options: ListenOptions = {},
): Promise<RunningServer> {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    // Still starting (the database, the page): a JSON-RPC answer like every other, and a retry hint.
    const body = {
      jsonrpc: '2.0',
      error: {
        code: -32603,
        message: 'Service unavailable: the server is starting. Retry in a moment.',
      },
    };
    res
      .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
      .end(JSON.stringify(body));
  };
  // Every answer has a JSON-RPC body, even to a request Node or no route would serve
  // (`createHttpServer` of `@mrtr/node`); HTTP/1.0 without `Host` is answered by the endpoint.
  const server = createHttpServer((req, res) => handle(req, res));
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
  // A request the conversion cannot make a web Request of (HTTP/1.0 without Host): still the
  // page's headers, and a body that says why, rather than an empty 400.
  const page =
    served.page &&
    getRequestListener(served.page, {
      errorHandler: (error) => {
        const bad = error instanceof RequestError;
        const text = bad ? `Bad Request: ${error.message}` : 'Internal error';
        const headers = { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' };
        return new Response(text, { status: bad ? 400 : 500, headers });
      },
    });
  const { jwks } = served;
  handle = (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (jwks && path === JWKS_PATH) serveJwks(jwks, req, res);
    else if (page && (req.url ?? '').startsWith(`${APPROVAL_BASE_PATH}/`)) void page(req, res);
    else void mcp(req, res);
  };
  return {
    server,
    url: `${origin.replace(/\/$/, '')}/mcp`,
    origin,
    close: () => close().then(() => options.onClose?.()),
  };
}
