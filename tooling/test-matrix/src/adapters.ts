/**
 * The ways the matrix serves an app's web-standard endpoint on real HTTP,
 * each the way an application on that framework would:
 * - `node`: `node:http` with `@mrtr/node`'s `toNodeHandler`; the endpoint's
 *   own `authenticate` (the app's bearer tokens) finds the principal.
 * - `sdk`: the app built on the official SDK's `McpServer` through
 *   `@mrtr/sdk` (`serveBothEras`: 2026-07-28 per request, 2025-era on
 *   sessions), on `node:http` like `node`; it authenticates the app's bearer
 *   tokens and hands the principal to the SDK as `authInfo`. Only apps with
 *   an SDK entry point have this row.
 * - `express`: Express 5, a router at `/api`, a small auth middleware that
 *   puts the principal on `res.locals`, and `@mrtr/express`'s `mcpHandler`.
 * - `hono`: Hono 4 on `@hono/node-server`, a middleware that sets the
 *   principal on the context, and `@mrtr/hono`'s `mcpHandler`.
 * For express and hono the app is built with no tokens of its own, so a
 * request succeeds only with the principal the middleware handed over.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { mcpHandler as expressHandler } from '@mrtr/express';
import { mcpHandler as honoHandler } from '@mrtr/hono';
import { toNodeHandler } from '@mrtr/node';
import type { McpEndpoint, Principal } from '@mrtr/server';
import express from 'express';
import { Hono } from 'hono';

/** The adapters under test. */
export const ADAPTERS = ['node', 'express', 'hono', 'sdk'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

/** One server instance listening on 127.0.0.1. */
export interface Listening {
  /** The MCP endpoint URL. */
  url: string;
  close(): Promise<void>;
}

/** Whether the app itself must authenticate (node), or gets the principal from the framework. */
export const appAuthenticates = (adapter: AdapterName): boolean =>
  adapter === 'node' || adapter === 'sdk';

/** `Authorization: Bearer <token>` → principal, as an application's auth middleware would. */
function principalOf(
  header: string | undefined,
  tokens: Map<string, string>,
): Principal | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  const id = m ? tokens.get(m[1] as string) : undefined;
  return id ? { id } : undefined;
}

async function listening(server: Server, path: string): Promise<Listening> {
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.once('listening', () => resolve());
    });
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Serve `endpoint` with `adapter` on a free port of 127.0.0.1.
 * @param tokens bearer token → principal id, for the express and hono auth middleware
 * @throws when the port cannot be bound
 */
export async function serveWith(
  adapter: AdapterName,
  endpoint: McpEndpoint,
  tokens: Map<string, string>,
): Promise<Listening> {
  switch (adapter) {
    case 'node':
    case 'sdk': {
      const server = createServer(toNodeHandler(endpoint, { path: '/mcp' }));
      server.listen(0, '127.0.0.1');
      return listening(server, '/mcp');
    }
    case 'express': {
      const app = express();
      app.use((req, res, next) => {
        const principal = principalOf(req.get('authorization'), tokens);
        if (principal) res.locals.principal = principal;
        next();
      });
      const router = express.Router();
      router.all(
        '/mcp',
        expressHandler(endpoint, { principal: (_req, res) => res.locals.principal }),
      );
      app.use('/api', router);
      return listening(app.listen(0, '127.0.0.1'), '/api/mcp');
    }
    case 'hono': {
      type AppEnv = { Variables: { principal: Principal | undefined } };
      const app = new Hono<AppEnv>();
      app.use('/mcp', async (c, next) => {
        c.set('principal', principalOf(c.req.header('authorization'), tokens));
        await next();
      });
      app.all('/mcp', honoHandler<AppEnv>(endpoint, { principal: (c) => c.get('principal') }));
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
      return listening(server, '/mcp');
    }
  }
}
