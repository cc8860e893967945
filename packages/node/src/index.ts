/**
 * @mrtr/node: mount an `@mrtr/server` endpoint on `node:http`.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createMcpEndpoint } from '@mrtr/server';
 * import { toNodeHandler } from '@mrtr/node';
 *
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools, authenticate });
 * createServer(toNodeHandler(endpoint, { path: '/mcp' })).listen(3000, '127.0.0.1');
 * ```
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import type { McpEndpoint, Principal } from '@mrtr/server';

/** Options of {@link toNodeHandler}. */
export interface NodeHandlerOptions {
  /** The MCP endpoint path (default `/mcp`); other paths get 404. */
  path?: string;
  /**
   * The principal the host already authenticated for this request (e.g. set
   * by a reverse proxy or earlier middleware on `req`). When it returns
   * `undefined`, the endpoint's own `authenticate` decides.
   */
  principal?: (req: IncomingMessage) => Principal | undefined | Promise<Principal | undefined>;
}

/**
 * Adapt an MCP endpoint to a `node:http` request listener. Request and
 * response conversion is `@hono/node-server`'s.
 * @returns `(req, res) => Promise<void>` for `http.createServer`.
 */
export function toNodeHandler(
  endpoint: McpEndpoint,
  options: NodeHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const path = options.path ?? '/mcp';
  const principalOf = options.principal;
  const listener = getRequestListener(
    async (request: Request, env: HttpBindings | { incoming: unknown }) => {
      // The raw request-target equal to the path (query aside) needs no URL parse: the common case.
      const target = (env.incoming as IncomingMessage).url;
      const direct = target === path || target?.startsWith(`${path}?`);
      if (!direct && new URL(request.url).pathname !== path) {
        return new Response('Not Found', { status: 404 });
      }
      const principal = principalOf
        ? await principalOf(env.incoming as IncomingMessage)
        : undefined;
      return endpoint(request, principal ? { principal } : {});
    },
  );
  return async (req, res) => {
    await listener(req, res);
  };
}
