import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/** An example server started as its own process, the way `pnpm start` runs it. */
export interface ServerProcess {
  /** The MCP endpoint URL it printed (`… listening on <url>`). */
  url: string;
  /** Everything it printed on stdout so far. */
  stdout(): string;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  child: ChildProcess;
}

/**
 * Start `entry` (default `src/main.ts`) of the app in `appDir` through its
 * own `tsx`, with `env` over the current environment, and wait for its
 * `listening on <url>` line.
 * @throws when the process exits first (the message carries its stderr).
 */
export async function startServerProcess(
  appDir: string,
  env: Record<string, string>,
  entry = 'src/main.ts',
): Promise<ServerProcess> {
  const child = spawn(join(appDir, 'node_modules/.bin/tsx'), [entry], {
    cwd: appDir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { url, stdout: () => out, stderr: () => err, child };
}
