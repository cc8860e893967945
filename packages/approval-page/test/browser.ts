/**
 * Chromium for the page tests (`@mrtr/test-services/browser`: Debian's
 * `/usr/bin/chromium` driven by playwright-core, never a browser download),
 * and the page served over `node:http` on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';

export { chromiumAvailable, launchChromium } from '@mrtr/test-services/browser';

/** An HTTP server on 127.0.0.1 whose handler is set once its port is known. */
export async function serve(): Promise<{
  server: Server;
  port: number;
  origin: string;
  use(handler: (request: Request) => Promise<Response> | Response): void;
  close(): Promise<void>;
}> {
  let listener: ReturnType<typeof getRequestListener> | undefined;
  const server = createServer((req, res) => {
    if (listener) void listener(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    use: (handler) => {
      listener = getRequestListener(handler);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
