import type { AddressInfo } from 'node:net';
import { describeAdapterContract } from '@mrtr/server/adapter-contract-tests';
import { createMcpHttpServer } from '../src/index.js';

describeAdapterContract('node (createMcpHttpServer)', {
  async serve(endpoint) {
    const server = createMcpHttpServer(endpoint, { path: '/mcp' });
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
