/**
 * Start a quick start as its reader would (`npx tsx <file>`), in a schema of
 * its own on the test database, and drive one confirmed deletion over HTTP
 * with the messages of MCP 2026-07-28 (`basic/patterns/mrtr`). Used here in
 * the workspace and by `tooling/pack-check` in a folder of packed tarballs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { expect } from 'vitest';

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

/**
 * Where and how a quick start runs: a directory and the command that runs a
 * `.ts` file there. By default `examples/` with the workspace's tsx.
 */
export interface Place {
  cwd: string;
  /** Command and leading arguments; the file's name is appended. */
  tsx: readonly string[];
}

function inExamples(): Place {
  return {
    cwd: examplesDir,
    tsx: [process.execPath, createRequire(import.meta.url).resolve('tsx/cli')],
  };
}

/** A started quick start: its URL, its bearer token, and how to stop it. */
export interface Running {
  url: string;
  token: string;
  stop(): void;
}

/**
 * Run `file` (relative to `place.cwd`) with a fresh secret and token; a
 * `DATABASE_URL` whose `search_path` is `schema` keeps its tables apart;
 * `env` adds to (or overrides) the environment it gets.
 * @throws when the process exits or does not answer within 20 seconds.
 */
export async function start(
  file: string,
  schema?: string,
  place: Place = inExamples(),
  env: Record<string, string> = {},
): Promise<Running> {
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const url = new URL(DATABASE_URL);
  if (schema) url.searchParams.set('options', `-c search_path=${schema}`);
  const [command = '', ...args] = place.tsx;
  const child: ChildProcess = spawn(command, [...args, file], {
    cwd: place.cwd,
    env: {
      ...process.env,
      PORT: String(port),
      TOKEN: token,
      MRTR_SECRET: randomBytes(32).toString('base64'),
      DATABASE_URL: url.href,
      ...env,
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
export function runWithoutSecret(
  file: string,
  place: Place = inExamples(),
): Promise<{ code: number | null; stderr: string }> {
  const { MRTR_SECRET: _none, ...env } = process.env;
  const [command = '', ...args] = place.tsx;
  const child = spawn(command, [...args, file], {
    cwd: place.cwd,
    env: { ...env, TOKEN: 'x', PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

const FORM = { elicitation: { form: {} } };

/**
 * The test database's pool, and whether it answers: under `CI=true` one that
 * does not is an error (the run must fail, never skip); else a warning.
 */
export async function testDatabase(): Promise<{ pool: pg.Pool; reachable: boolean }> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  const reachable = await pool.query('SELECT 1').then(
    () => true,
    (e: Error) => {
      if (process.env.CI === 'true') throw e;
      console.warn(`PostgreSQL at ${DATABASE_URL} unreachable (${e.message}): skipping`);
      return false;
    },
  );
  return { pool, reachable };
}

/** The headers and body of one `tools/call delete_record` round, as a 2026-07-28 client sends it. */
function deleteRequest(
  token: string,
  id: number,
  extra: Record<string, unknown>,
  capabilities: unknown,
): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
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
  };
}

/**
 * One `tools/call delete_record {id: 'rec-1'}` round, as a 2026-07-28 client
 * sends it, declaring `capabilities` (default: form elicitation).
 */
export async function callDelete(
  server: Running,
  id: number,
  extra: Record<string, unknown> = {},
  capabilities: unknown = FORM,
): Promise<Record<string, unknown>> {
  const response = await fetch(server.url, {
    method: 'POST',
    ...deleteRequest(server.token, id, extra, capabilities),
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

/** The root README. */
export function readme(): string {
  return readFileSync(join(examplesDir, '../README.md'), 'utf8');
}

/** The README's first ```ts block: the 30-line quick start of its first screen. */
export function readmeQuickStart(): string {
  const block = /```ts\n([\s\S]*?)```/.exec(readme())?.[1];
  if (!block) throw new Error('README.md has no ```ts block');
  return block;
}

/** The README's ```sh block that drives the quick start with `curl`. */
export function readmeCurl(): string {
  const block = [...readme().matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? '')
    .find((text) => text.includes('curl -s'));
  if (!block) throw new Error('README.md has no ```sh block with curl');
  return block;
}

/**
 * Write {@link readmeQuickStart} to `<dir>/<name>` (by default in `examples/`,
 * where it resolves the packages a reader installs).
 * @returns a function that removes the file.
 */
export function writeReadmeQuickStart(name: string, dir = examplesDir): () => void {
  writeFileSync(join(dir, name), readmeQuickStart());
  return () => rmSync(join(dir, name), { force: true });
}

/**
 * Round 1 asks (an `InputRequiredResult` with a `requestState`); the retry with
 * an accepted answer completes; the identical re-send gets the recorded result.
 */
export async function confirmsOneDeletion(server: Running): Promise<void> {
  const first = await callDelete(server, 1);
  const asked = first.result as Record<string, unknown>;
  expect(asked.resultType).toBe('input_required');
  expect(typeof asked.requestState).toBe('string');
  const inputRequests = asked.inputRequests as Record<string, { params: { message: string } }>;
  const [key] = Object.keys(inputRequests);
  expect(inputRequests[key as string]?.params.message).toBe(
    'Delete record rec-1? This cannot be undone.',
  );
  const retry = {
    requestState: asked.requestState,
    inputResponses: { [key as string]: { action: 'accept', content: { confirm: true } } },
  };
  const done = (await callDelete(server, 2, retry)).result as Record<string, unknown>;
  expect(done.resultType).toBe('complete');
  expect(done.isError).toBeFalsy();
  expect(JSON.stringify(done.content)).toContain('Deleted rec-1');
  const again = (await callDelete(server, 3, retry)).result as Record<string, unknown>;
  expect(again.content).toEqual(done.content);
}

/**
 * After {@link confirmsOneDeletion} on a PostgreSQL quick start: `rec-1` is
 * gone, `rec-2` stays, and one claim was committed in `schema.mrtr_replay`.
 */
export async function deletedOnceIn(
  db: { query(sql: string): Promise<{ rows: unknown[] }> },
  schema: string,
): Promise<void> {
  const rows = await db.query(`SELECT id FROM ${schema}.records ORDER BY id`);
  expect(rows.rows).toEqual([{ id: 'rec-2' }]);
  const claims = await db.query(`SELECT count(*)::int AS n FROM ${schema}.mrtr_replay`);
  expect(claims.rows).toEqual([{ n: 1 }]);
}

/**
 * The HTTP status of round 1 sent with the quick start's token but a foreign
 * `Host`, and with its own `Host` and a foreign `Origin` (what a page reached
 * through DNS rebinding sends), in that order. `fetch` does not let a caller
 * set `Host`, so this goes through `node:http`.
 */
export async function foreignCallerStatuses(server: Running): Promise<number[]> {
  const { hostname, port, pathname, host } = new URL(server.url);
  const { headers, body } = deleteRequest(server.token, 1, {}, FORM);
  const statuses: number[] = [];
  for (const foreign of [{ host: 'evil.example' }, { host, origin: 'http://evil.example' }]) {
    statuses.push(
      await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: hostname,
            port,
            path: pathname,
            method: 'POST',
            headers: { ...headers, ...foreign },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    );
  }
  return statuses;
}

/**
 * Round 1 sent over a raw socket with two `Host` fields, then with a `Host`
 * holding userinfo (`a@host`): neither names one host (RFC 9112 §3.2: 400).
 * @returns `[status, JSON-RPC error code]` of each answer, in that order.
 */
export async function malformedHostReplies(server: Running): Promise<[number, unknown][]> {
  const { host } = new URL(server.url);
  const { headers } = deleteRequest(server.token, 1, {}, FORM);
  const lines = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return rawReplies(server, [
    `Host: ${host}\r\nHost: evil.example\r\n${lines}`,
    `Host: a@${host}\r\n${lines}`,
  ]);
}

/**
 * Round 1 with two `Authorization` fields, the right token first and then
 * last: which one a server would read is ambiguous, so neither may pass (401).
 * @returns `[status, JSON-RPC error code]` of each answer, in that order.
 */
export async function twoTokenReplies(server: Running): Promise<[number, unknown][]> {
  const { host } = new URL(server.url);
  const { headers } = deleteRequest(server.token, 1, {}, FORM);
  const { authorization, ...rest } = headers;
  const lines = Object.entries(rest)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const other = 'Authorization: Bearer someone-else-0123456789\r\n';
  return rawReplies(server, [
    `Host: ${host}\r\nAuthorization: ${authorization}\r\n${other}${lines}`,
    `Host: ${host}\r\n${other}Authorization: ${authorization}\r\n${lines}`,
  ]);
}

/**
 * Round 1 with a body of 2 MiB of spaces after the JSON, once declared by
 * `Content-Length` and once chunked without it: a body over the server's
 * bound must be refused with 413 and a JSON-RPC error without `id`
 * (2026-07-28 allows no `"id": null`), however it is framed.
 * @returns `[status, the parsed reply]` of each, declared first.
 */
export async function oversizedReplies(server: Running): Promise<[number, unknown][]> {
  const { headers, body } = deleteRequest(server.token, 1, {}, FORM);
  const big = Buffer.from(body + ' '.repeat(2 * 1024 * 1024));
  const replies: [number, unknown][] = [];
  for (const chunked of [false, true]) {
    replies.push(
      await new Promise<[number, unknown]>((resolve, reject) => {
        const sent = request(
          server.url,
          {
            method: 'POST',
            headers: chunked ? headers : { ...headers, 'content-length': String(big.length) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString();
              let parsed: unknown = text;
              try {
                parsed = JSON.parse(text);
              } catch {}
              resolve([res.statusCode ?? 0, parsed]);
            });
          },
        );
        // A server that answers before reading it all may close the socket under the upload.
        sent.on('error', (error: NodeJS.ErrnoException) =>
          error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
        );
        sent.setTimeout(10_000, () => sent.destroy(new Error('no answer to an oversized body')));
        for (let at = 0; at < big.length; at += 64 * 1024)
          sent.write(big.subarray(at, at + 64 * 1024));
        sent.end();
      }),
    );
  }
  return replies;
}

/** Round 1 over a raw socket once per entry of `heads` (header lines, each ending in CRLF). */
async function rawReplies(server: Running, heads: string[]): Promise<[number, unknown][]> {
  const { hostname, port, pathname } = new URL(server.url);
  const { body } = deleteRequest(server.token, 1, {}, FORM);
  const replies: [number, unknown][] = [];
  for (const head of heads) {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.end(
          `POST ${pathname} HTTP/1.1\r\n${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        ),
      );
      const chunks: Buffer[] = [];
      socket.setTimeout(5000, () => socket.destroy());
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    const status = Number(text.split(' ')[1]);
    let code: unknown;
    try {
      code = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error?.code;
    } catch {
      code = 'not JSON';
    }
    replies.push([status, code]);
  }
  return replies;
}
