import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { handleClientError } from '@mrtr/node';
import type { McpEndpoint } from '@mrtr/server';
import { describeAdapterContract } from '@mrtr/server/adapter-contract-tests';
import { Hono } from 'hono';
import { mcpHandler } from '../src/index.js';

/** Serve through Hono on `@hono/node-server`, with or without a middleware that reads the body first. */
function serveHono(peek: boolean) {
  return async (endpoint: McpEndpoint) => {
    const app = new Hono();
    if (peek)
      app.use('/mcp', async (c, next) => {
        // A tolerant body-reading middleware (a logger, a router on a body field).
        await c.req.json().catch(() => undefined);
        await next();
      });
    app.all('/mcp', mcpHandler(endpoint));
    let server!: Server;
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () =>
        resolve(),
      ) as Server;
    });
    server.on('clientError', handleClientError);
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/mcp`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  };
}

// @hono/node-server's serve() answers a request without Host (an empty 400) before the app runs.
const missingHost = false;
describeAdapterContract('hono', { serve: serveHono(false), missingHost });
describeAdapterContract('hono behind a body-reading middleware', {
  serve: serveHono(true),
  bodyReadByMiddleware: true,
  missingHost,
});
