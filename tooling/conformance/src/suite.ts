/**
 * The pinned official conformance suite and the Node 22 it runs under, as
 * both legs of the run (server and client) use them.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** Folder of the installed `@modelcontextprotocol/conformance`. */
export const suiteDir = dirname(require.resolve('@modelcontextprotocol/conformance/package.json'));
/** Its version (pinned in package.json). */
export const suiteVersion = (
  JSON.parse(readFileSync(join(suiteDir, 'package.json'), 'utf8')) as { version: string }
).version;
/** The Node 22 binary of the pinned `node` package. */
export const node22 = join(dirname(require.resolve('node/package.json')), 'bin', 'node');

/** The suite's requirements YAML for a revision (`requirements/<revision>.yaml`). */
export function requirementsYaml(revision: string): string {
  return readFileSync(join(suiteDir, 'requirements', `${revision}.yaml`), 'utf8');
}

/** Print `conformance: <message>` and exit 2: the run itself could not be made. */
export function fail(message: string): never {
  console.error(`conformance: ${message}`);
  process.exit(2);
}

/** `node --version` of {@link node22}; exits 2 unless it is a Node 22. */
export async function node22Version(): Promise<string> {
  const version = await new Promise<string>((resolve) => {
    const c = spawn(node22, ['--version']);
    let v = '';
    c.stdout.on('data', (d: Buffer) => {
      v += d.toString();
    });
    c.once('error', () => resolve(''));
    c.once('exit', () => resolve(v.trim()));
  });
  if (!version.startsWith('v22.')) fail(`${node22} is ${version || 'not runnable'}, not Node 22`);
  return version;
}

/** Run the suite's CLI under Node 22, echoing its output into `log`; resolve with its exit code. */
export function runSuite(args: string[], log: string[]): Promise<number | null> {
  const child = spawn(node22, [join(suiteDir, 'dist', 'index.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => log.push(chunk.toString());
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}
