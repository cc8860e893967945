#!/usr/bin/env node
import { startConformanceServer } from './app.js';

/** `mrtr-conformance-server [--port N] [--host H]`; `PORT` and `HOST` work too (default 127.0.0.1:3100). */
function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main() {
  const rawPort = option('port') ?? process.env.PORT ?? '3100';
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`port must be an integer 0..65535, got "${rawPort}"`);
  const running = await startConformanceServer({
    host: option('host') ?? process.env.HOST ?? '127.0.0.1',
    port,
  });
  // The runner waits for this line and reads the URL from it.
  console.log(`conformance-server listening on ${running.url}`);
  const stop = async () => {
    await running.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(
    `conformance-server failed to start: ${error instanceof Error ? error.message : error}`,
  );
  process.exit(1);
});
