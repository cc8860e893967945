/**
 * The README's quick start is `examples/quick-start.ts` (type-checked with
 * the package), and it runs: started as a process, it deletes a record for
 * the official client on 2026-07-28 and on the 2025-era default.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';

const here = (path: string) => new URL(path, import.meta.url);
const example = readFileSync(here('../examples/quick-start.ts'), 'utf8');

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
 * The status and body of the answer to a POST to /mcp on `port` with `host` as its Host header
 * (fetch sets its own) and `headers`, sending no body: the answer comes from the server's checks.
 */
function rawStatusAndBody(
  port: number,
  host: string,
  headers: Record<string, string> = { 'content-length': '0' },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request({ port, host: '127.0.0.1', method: 'POST', path: '/mcp' });
    for (const [name, value] of Object.entries({ ...headers, host })) sent.setHeader(name, value);
    sent.on('error', reject).on('response', (answer) => {
      let body = '';
      answer.setEncoding('utf8').on('data', (d) => {
        body += d;
      });
      answer.on('end', () => {
        resolve({ status: answer.statusCode ?? 0, body });
        sent.destroy();
      });
    });
    sent.flushHeaders();
  });
}

describe('README quick start', () => {
  it('is examples/quick-start.ts, verbatim', () => {
    const readme = readFileSync(here('../README.md'), 'utf8');
    const block = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(example);
  });

  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill();
  });

  it('runs, and confirms a deletion for both eras of the official client', async () => {
    const port = await freePort();
    const token = randomBytes(12).toString('hex');
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    child = spawn(process.execPath, [tsx, 'examples/quick-start.ts'], {
      cwd: here('..'),
      env: {
        ...process.env,
        PORT: String(port),
        TOKEN: token,
        MRTR_SECRET: randomBytes(32).toString('base64'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    // Wait for its own "MCP endpoint:" line (tsx compiling the example took > 10 s under load),
    // and fail at once if it exits first (e.g. the probed port was taken meanwhile).
    const started = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      started.stdout?.on('data', (d) => {
        out += d;
        if (out.includes(`MCP endpoint: ${url}`)) resolve();
      });
      started.once('exit', (code) => reject(new Error(`the quick start exited ${code}: ${out}`)));
    });
    expect((await fetch(url, { method: 'POST' })).status).toBe(401);
    // Its own refusals: a body over 1 MiB is 413 without `"id": null`; a Host it refuses is
    // quoted through shownText, bounded (the SDK's message quoted all 8,000 characters).
    // A client still sending when the answer comes (curl reads it; fetch fails on the closed socket).
    const big = await rawStatusAndBody(port, `127.0.0.1:${port}`, {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': String(5 * 2 ** 20),
    });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Request body too large' },
    });
    const host = await rawStatusAndBody(port, `h${'a'.repeat(8000)}`);
    expect(host.status).toBe(403);
    expect(host.body.length).toBeLessThan(1000);
    for (const [era, id] of [
      ['modern', 'rec-1'],
      ['legacy', 'rec-2'],
    ] as const) {
      const client = new Client(
        { name: 'readme', version: '0' },
        {
          capabilities: { elicitation: { form: {} } },
          ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
        },
      );
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { confirm: true } };
      });
      await client.connect(
        new StreamableHTTPClientTransport(url, {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      const result = await client.callTool({ name: 'delete_record', arguments: { id } });
      expect(result.content).toEqual([{ type: 'text', text: `Deleted ${id}: true.` }]);
      expect(asked).toEqual([`Delete record ${id}? This cannot be undone.`]);
      await client.close();
    }
  });
});
