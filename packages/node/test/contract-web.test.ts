import type { AddressInfo } from 'node:net';
import { describeAdapterContract } from '@mrtr/server/adapter-contract-tests';
import { createMcpHttpServer } from '../src/index.js';

// The converted path (@hono/node-server) under the same contract as the direct path of contract.test.ts.
describeAdapterContract('node (createMcpHttpServer, webStandard)', {
  async serve(endpoint) {
    const server = createMcpHttpServer(endpoint, { path: '/mcp', webStandard: true });
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
  },
});
