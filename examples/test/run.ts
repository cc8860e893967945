/**
 * Start a quick start as its reader would (`npx tsx <file>`), in a schema of
 * its own on the test database, and drive one confirmed deletion over HTTP
 * with the messages of MCP 2026-07-28 (`basic/patterns/mrtr`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const examplesDir = fileURLToPath(new URL('..', import.meta.url));
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(),
      );
    });
  });
}

/** A started quick start: its URL, its bearer token, and how to stop it. */
export interface Running {
  url: string;
  token: string;
  stop(): void;
}

/**
 * Run `file` (relative to `examples/`) with a fresh secret and token; a
 * `DATABASE_URL` whose `search_path` is `schema` keeps its tables apart.
 * @throws when the process exits or does not answer within 20 seconds.
 */
export async function start(file: string, schema?: string): Promise<Running> {
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const url = new URL(DATABASE_URL);
  if (schema) url.searchParams.set('options', `-c search_path=${schema}`);
  const child: ChildProcess = spawn(process.execPath, [tsx, file], {
    cwd: examplesDir,
    env: {
      ...process.env,
      PORT: String(port),
      TOKEN: token,
      MRTR_SECRET: randomBytes(32).toString('base64'),
      DATABASE_URL: url.href,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let exited: number | null = null;
  child.on('exit', (code) => {
    exited = code ?? -1;
  });
  const endpoint = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; ; i++) {
    if (exited !== null) throw new Error(`${file} exited with ${exited}`);
    const up = await fetch(endpoint, { method: 'POST' }).then(
      (r) => r.status === 401,
      () => false,
    );
    if (up) break;
    if (i > 400) {
      child.kill();
      throw new Error(`${file} did not start listening`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: endpoint, token, stop: () => child.kill() };
}

/** Run `file` without `MRTR_SECRET`: its exit code and what it wrote to stderr. */
export function runWithoutSecret(file: string): Promise<{ code: number | null; stderr: string }> {
  const tsx = createRequire(import.meta.url).resolve('tsx/cli');
  const { MRTR_SECRET: _none, ...env } = process.env;
  const child = spawn(process.execPath, [tsx, file], {
    cwd: examplesDir,
    env: { ...env, TOKEN: 'x', PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

const capabilities = { elicitation: { form: {} } };

/** One `tools/call delete_record` round, as a 2026-07-28 client sends it. */
export async function callDelete(
  server: Running,
  id: number,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${server.token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'delete_record',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'delete_record',
        arguments: { id: 'rec-1' },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': capabilities,
          'io.modelcontextprotocol/clientInfo': { name: 'examples-test', version: '0' },
        },
        ...extra,
      },
    }),
  });
  const text = await response.text();
  // A streamed answer carries the JSON-RPC response as the data of its last SSE event.
  const data = text.startsWith('{')
    ? text
    : (text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .pop()
        ?.slice(5) ?? '');
  return JSON.parse(data) as Record<string, unknown>;
}

/**
 * Write the README's first ```ts block (the 30-line quick start of its first
 * screen) to `examples/<name>`, where it resolves the packages a reader
 * installs. @returns a function that removes the file.
 */
export function writeReadmeQuickStart(name: string): () => void {
  const readme = readFileSync(join(examplesDir, '../README.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no ```ts block');
  writeFileSync(join(examplesDir, name), block);
  return () => rmSync(join(examplesDir, name), { force: true });
}
