/**
 * Chromium for the page tests: Debian's `/usr/bin/chromium` driven by
 * playwright-core (never a browser download), and the page served over
 * `node:http` on 127.0.0.1.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether Chromium is installed. Under `CI=true` a missing Chromium throws:
 * CI must never go green without the browser tests (`.ci/run` installs it).
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (process.env.CI === 'true')
    throw new Error(`${why}: the browser tests cannot run under CI=true`);
  console.warn(`skipping the Chromium tests: ${why}`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: 60_000 });
}

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
