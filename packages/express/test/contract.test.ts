import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpEndpoint } from '@mrtr/server';
import { describeAdapterContract } from '@mrtr/server/adapter-contract-tests';
import express from 'express';
import { handleClientError, keepRawBody, mcpErrorHandler, mcpHandler } from '../src/index.js';

/**
 * Serve through Express: alone, behind `express.json()` (the adapter passes the parsed body on
 * re-serialized), or behind `express.json({ verify: keepRawBody })` (the bytes as sent).
 */
function serveExpress(bodyParser: false | 'parsed' | 'raw') {
  return async (endpoint: McpEndpoint) => {
    const app = express();
    if (bodyParser === 'parsed') app.post('/mcp', express.json(), mcpHandler(endpoint));
    else if (bodyParser === 'raw')
      app.all('/mcp', express.json({ verify: keepRawBody }), mcpHandler(endpoint));
    else app.all('/mcp', mcpHandler(endpoint));
    app.use('/mcp', mcpErrorHandler());
    // As the README recommends: Node's own missing-Host check off (the adapter answers it), parser errors as JSON-RPC.
    const server = createServer({ requireHostHeader: false }, app);
    server.on('clientError', handleClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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

describeAdapterContract('express', { serve: serveExpress(false) });
describeAdapterContract('express behind express.json()', {
  serve: serveExpress('parsed'),
  bodyReadByMiddleware: true,
});
describeAdapterContract('express behind express.json({ verify: keepRawBody })', {
  serve: serveExpress('raw'),
  bodyReadByMiddleware: true,
});
