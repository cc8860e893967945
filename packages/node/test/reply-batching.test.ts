/**
 * The direct path writes whole replies at the end of the event loop's turn
 * (`writeReply`): what must still hold around that deferral.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { type AddressInfo, connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createMcpEndpoint } from '@mrtr/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type NodeHandlerOptions, toNodeHandler } from '../src/index.js';

const realSetTimeout = globalThis.setTimeout;
const LIST = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const REQUEST = [
  'POST /mcp HTTP/1.1',
  'Host: 127.0.0.1',
  'Content-Type: application/json',
  'Accept: application/json, text/event-stream',
  'MCP-Protocol-Version: 2026-07-28',
  'Mcp-Method: tools/list',
  'Authorization: Bearer t',
  `Content-Length: ${Buffer.byteLength(LIST)}`,
  'Connection: close',
  '',
  LIST,
].join('\r\n');

/** Send one tools/list on a raw socket (no client timers); what came back within `ms`, or '' if nothing. */
function list(port: number, ms = 2000): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const socket = connect({ port, host: '127.0.0.1' }, () => socket.write(REQUEST));
    const timer = realSetTimeout(() => {
      socket.destroy();
      resolve(got);
    }, ms);
    socket.on('data', (chunk) => {
      got += chunk.toString('utf8');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
  });
}

const servers: Server[] = [];
async function listen(options: NodeHandlerOptions = {}): Promise<number> {
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 't', version: '1' },
    authenticate: (request) =>
      request.headers.get('authorization') === 'Bearer t' ? { id: 'p' } : undefined,
    tools: [],
  });
  const server = createServer(toNodeHandler(endpoint, options));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}
afterEach(async () => {
  vi.useRealTimers();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

describe('whole replies written at the end of the turn', () => {
  it('still go out under fake timers in an application test', async () => {
    const port = await listen();
    vi.useFakeTimers();
    const got = await list(port);
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(got).toContain('{"jsonrpc":"2.0","id":7,"result":{');
    expect(got).toContain('"tools":[]');
  });

  it('answer a request even when principal and onError both throw, and nothing escapes', async () => {
    const escaped: unknown[] = [];
    const keep = (e: unknown) => escaped.push(e);
    process.on('unhandledRejection', keep);
    try {
      const port = await listen({
        principal: () => {
          throw new Error('principal broke');
        },
        onError: () => {
          throw new Error('onError broke');
        },
      });
      const got = await list(port);
      expect(got).toMatch(/^HTTP\/1\.1 500/);
      expect(got).toContain('"code":-32603');
      await new Promise((r) => realSetTimeout(r, 20));
      expect(escaped).toEqual([]);
    } finally {
      process.off('unhandledRejection', keep);
    }
  });

  it.each([
    'exit',
    'throw',
  ])('reach the socket when the process ends (%s) before the turn does', async (how) => {
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const script = fileURLToPath(new URL('./fixtures/exit-after-reply.ts', import.meta.url));
    const child = spawn(process.execPath, [tsx, script, how], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const match = /port (\d+)/.exec(out);
        if (match) resolve(Number(match[1]));
      });
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) before listening`)));
    });
    const got = await list(port, 5000);
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(got).toContain('{"jsonrpc":"2.0","id":7,"result":{');
    expect(got).toContain('"tools":[]');
    if (child.exitCode === null) await new Promise((r) => child.on('exit', r));
  });
});
