/**
 * `createHttpServer` in front of any listener (here a plain one that answers
 * 200 "served"): what no route may serve gets a JSON-RPC 400 before the
 * listener runs, and everything else reaches it unchanged.
 */
import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpServer,
  DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from '../src/index.js';

let server: Server;
let port: number;
const seen: string[] = [];
beforeAll(async () => {
  server = createHttpServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '6' }).end('served');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Write each of `writes` on a new connection to `to`; all the server sent until it closed. */
function talk(to: number, ...writes: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: to, host: '127.0.0.1' }, () => {
      for (const bytes of writes) socket.write(bytes);
    });
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Send a request line and header lines; the status and body once the server closes. */
async function raw(line: string, headers: string): Promise<{ status: number; body: string }> {
  const all = await talk(port, `${line}\r\n${headers}Connection: close\r\n\r\n`);
  return { status: Number(all.split(' ')[1]), body: all.slice(all.indexOf('\r\n\r\n') + 4) };
}

describe('createHttpServer', () => {
  const host = () => `Host: 127.0.0.1:${port}\r\n`;

  it.each([
    ['two Host fields', 'GET /x HTTP/1.1', () => `${host()}Host: evil.example\r\n`],
    ['a Host with userinfo', 'GET /x HTTP/1.1', () => `Host: a@127.0.0.1:${port}\r\n`],
    ['a Host with a path', 'GET /x HTTP/1.1', () => `Host: 127.0.0.1/x\r\n`],
    ['HTTP/1.1 without Host', 'GET /x HTTP/1.1', () => ''],
    ['* for POST', 'POST * HTTP/1.1', host],
    ['an authority-form target', 'GET example.com:80 HTTP/1.1', host],
    ['an absolute target naming another host', 'GET http://evil.example/x HTTP/1.1', host],
    ['an absolute target in upper case', 'GET HTTP://127.0.0.1:%p/x HTTP/1.1', host],
    ['a Host with a port past 65535', 'GET /x HTTP/1.1', () => 'Host: localhost:65536\r\n'],
    ['a Host IP literal that is none', 'GET /x HTTP/1.1', () => 'Host: [:::]\r\n'],
    ['a Host with a port that is not digits', 'GET /x HTTP/1.1', () => 'Host: localhost:0x10\r\n'],
  ])('answers %s with a JSON-RPC 400, before the listener', async (_, line, headers) => {
    const before = seen.length;
    const r = await raw(line.replace('%p', String(port)), headers());
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    expect(seen.length).toBe(before);
  });

  it.each([
    ['a path', 'GET /x?y=1 HTTP/1.1', host],
    ['a backslash in the query only', 'GET /x?y=a\\b HTTP/1.1', host],
    ['a backslash in the path (each framework reads its own)', 'GET /a\\b HTTP/1.1', host],
    [
      'an empty Host (RFC 9112 §3.2: a target without authority)',
      'GET /x HTTP/1.1',
      () => 'Host:\r\n',
    ],
    ['a Host with an empty port', 'GET /x HTTP/1.1', () => 'Host: localhost:\r\n'],
    [
      'an IPv6 literal not in its short form',
      'GET /x HTTP/1.1',
      () => 'Host: [2001:0db8::1]:80\r\n',
    ],
    ['a numeric name', 'GET /x HTTP/1.1', () => 'Host: 1234\r\n'],
    ['HTTP/1.0 without Host (the application decides)', 'GET /x HTTP/1.0', () => ''],
    ['an absolute target naming its own Host', 'GET http://127.0.0.1:%p/x HTTP/1.1', host],
  ])('passes %s to the listener', async (_, line, headers) => {
    const r = await raw(line.replace('%p', String(port)), headers());
    expect([r.status, r.body]).toEqual([200, 'served']);
  });

  it('bounds how long a request may take to arrive, unless the options say otherwise', () => {
    expect([server.headersTimeout, server.requestTimeout]).toEqual([
      DEFAULT_HEADERS_TIMEOUT_MS,
      DEFAULT_REQUEST_TIMEOUT_MS,
    ]);
    const shorter = createHttpServer({ requestTimeout: 5_000 }, () => {});
    expect([shorter.headersTimeout, shorter.requestTimeout]).toEqual([5_000, 5_000]);
    const own = createHttpServer({ headersTimeout: 90_000, requestTimeout: 0 }, () => {});
    expect([own.headersTimeout, own.requestTimeout]).toEqual([90_000, 0]);
    // A longer head deadline alone stretches the request's: Node refuses head > request.
    const longer = createHttpServer({ headersTimeout: 90_000 }, () => {});
    expect([longer.headersTimeout, longer.requestTimeout]).toEqual([90_000, 90_000]);
  });

  it("answers a request past its deadline within the checking interval, not after Node's 30 s", async () => {
    const quick = createHttpServer({ headersTimeout: 500, requestTimeout: 1_000 }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('served'));
    });
    await new Promise<void>((resolve) => quick.listen(0, '127.0.0.1', resolve));
    try {
      const to = (quick.address() as AddressInfo).port;
      const started = Date.now();
      // A body announced and never sent: the request's deadline passes.
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect({ port: to, host: '127.0.0.1' }, () =>
          socket.write(`POST /x HTTP/1.1\r\nHost: 127.0.0.1:${to}\r\nContent-Length: 10\r\n\r\nab`),
        );
        const chunks: Buffer[] = [];
        socket.setTimeout(20_000, () => socket.destroy());
        socket.on('data', (c) => chunks.push(c));
        socket.on('error', reject);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      expect(answer.split(' ')[1]).toBe('408');
      expect(answer).toContain('did not arrive whole within the server’s time limit');
      // Node's default interval would let it wait until 30 s after listen; ours checks every 2 s.
      expect(Date.now() - started).toBeLessThan(
        1_000 + DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS * 4,
      );
    } finally {
      quick.closeAllConnections();
      await new Promise<void>((resolve) => quick.close(() => resolve()));
    }
  });

  it('needs the listener at creation: one added later would run on what it already answered', () => {
    expect(() => createHttpServer()).toThrow(TypeError);
    expect(() => createHttpServer({})).toThrow(/request listener/);
  });

  it('answers OPTIONS * itself with 204, and TRACE with a JSON-RPC 405', async () => {
    const before = seen.length;
    const options = await raw('OPTIONS * HTTP/1.1', host());
    expect([options.status, options.body]).toEqual([204, '']);
    const trace = await raw('TRACE /x HTTP/1.1', host());
    expect([trace.status, JSON.parse(trace.body).error.code]).toEqual([405, -32600]);
    expect(seen.length).toBe(before);
  });

  it('answers a transfer coding other than chunked with a JSON-RPC 501, before the listener', async () => {
    const before = seen.length;
    for (const coding of ['gzip, chunked', 'deflate,chunked']) {
      const r = await raw('POST /x HTTP/1.1', `${host()}Transfer-Encoding: ${coding}\r\n`);
      expect([r.status, JSON.parse(r.body).error.code], coding).toEqual([501, -32600]);
    }
    expect(seen.length).toBe(before);
    // The refused request's body is not read as a request of its own: one answer, the 501.
    const identity = await talk(
      port,
      `POST /x HTTP/1.1\r\n${host()}Transfer-Encoding: identity\r\n\r\nGARBAGE LINE\r\n\r\n`,
    );
    expect([...identity.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])).toEqual(['501']);
    const chunked = await raw('POST /x HTTP/1.1', `${host()}Transfer-Encoding: Chunked\r\n`);
    expect([chunked.status, chunked.body]).toEqual([200, 'served']);
  });

  it('answers more header fields than Node keeps (1,000) with a JSON-RPC 431, not as if the later ones were absent', async () => {
    const before = seen.length;
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `x-${i}: a\r\n`).join('');
    // With Host, Content-Type and Connection: 1,000 fields are served whole, 1,001 refused.
    const many = await raw(
      'POST /x HTTP/1.1',
      `${host()}${fields(998)}Content-Type: text/plain\r\n`,
    );
    expect([many.status, JSON.parse(many.body).error]).toEqual([
      431,
      { code: -32600, message: 'Request Header Fields Too Large: more than 1000 header fields' },
    ]);
    expect(seen.length).toBe(before);
    const all = await raw(
      'POST /x HTTP/1.1',
      `${host()}${fields(997)}Content-Type: text/plain\r\n`,
    );
    expect([all.status, all.body]).toEqual([200, 'served']);
    // A server that keeps fewer (maxHeadersCount counts fields): refused past its own count.
    server.maxHeadersCount = 10;
    try {
      expect((await raw('POST /x HTTP/1.1', `${host()}${fields(7)}`)).status).toBe(200);
      expect((await raw('POST /x HTTP/1.1', `${host()}${fields(9)}`)).status).toBe(431);
    } finally {
      server.maxHeadersCount = null as unknown as number;
    }
  });

  it("answers Node's own refusals with JSON-RPC bodies", async () => {
    const expectation = await raw(
      'POST /x HTTP/1.1',
      `${host()}Expect: foo\r\nContent-Length: 0\r\n`,
    );
    expect([expectation.status, JSON.parse(expectation.body).error.code]).toEqual([417, -32600]);
    const tunnel = await raw('CONNECT 127.0.0.1:1 HTTP/1.1', 'Host: 127.0.0.1:1\r\n');
    expect([tunnel.status, JSON.parse(tunnel.body).error.code]).toEqual([405, -32600]);
    const unparsable = await raw('GET /x HTTP/1.1', `${host()}X-Bad: a\x01b\r\n`);
    expect([unparsable.status, JSON.parse(unparsable.body).error.code]).toEqual([400, -32600]);
  });
});

describe('createHttpServer, bytes that do not parse behind a request still being answered', () => {
  let slow: Server;
  let slowPort: number;
  const served: string[] = [];
  beforeAll(async () => {
    // Answers 30 ms later, as a handler that awaits a database does: the response is in flight
    // when the parser meets what follows the request.
    slow = createHttpServer((req, res) => {
      served.push(`${req.method} ${req.url}`);
      const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 30);
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '6' }).end('served');
      }, ms);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    slowPort = (slow.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => slow.close(() => resolve())));

  const exchange = (...writes: string[]) => talk(slowPort, ...writes);
  const request = (path: string, close: boolean) =>
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
  const statuses = (all: string) => [...all.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);

  it('sends the answer first, whole, then the 400, and closes', async () => {
    const all = await exchange(`${request('/first', false)}BAD REQUEST LINE\r\n\r\n`);
    expect(statuses(all)).toEqual(['200', '400']);
    expect(all).toContain('\r\n\r\nserved');
    expect(all.slice(all.indexOf('served'))).toContain('"code":-32600');
    expect(served).toContain('GET /first');
  });

  it('answers a body that does not parse inside the request itself at once: its handler waits for nothing', async () => {
    const started = Date.now();
    const all = await exchange(
      'POST /body HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    expect(statuses(all)).toEqual(['400']);
    expect(all).toContain('"code":-32600');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('waits once, however many more bytes fail to parse behind the answer', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const garbage = Array.from({ length: 50 }, () => 'BAD REQUEST LINE\r\n\r\n');
      const all = await exchange(request('/many', false), ...garbage);
      expect(statuses(all)).toEqual(['200', '400']);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('sends every answer already owed, in order, before the 400', async () => {
    const all = await exchange(
      `${request('/p1?ms=60', false)}${request('/p2?ms=200', false)}BAD REQUEST LINE\r\n\r\n`,
    );
    expect(statuses(all)).toEqual(['200', '200', '400']);
    expect(all.split('served')).toHaveLength(3);
  });

  it.each([
    [
      'two Host fields',
      'GET /refused HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n',
      '400',
    ],
    ['TRACE', 'TRACE /refused HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', '405'],
    [
      'a transfer coding',
      'POST /refused HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
      '501',
    ],
  ])('refuses %s pipelined behind an answer under way, and serves nothing after it', async (_, refused, status) => {
    const tag = `${Date.now()}-${Math.random()}`;
    const all = await exchange(
      `${request(`/before-${tag}`, false)}${refused}${request(`/after-${tag}`, false)}`,
    );
    expect(statuses(all)).toEqual(['200', status]);
    expect(served).toContain(`GET /before-${tag}`);
    expect(served).not.toContain(`GET /after-${tag}`);
  });

  it('answers a request sent with Connection: close, and nothing of what came after it', async () => {
    const all = await exchange(`${request('/closing', true)}${request('/after', false)}`);
    expect(statuses(all)).toEqual(['200']);
    expect(all.endsWith('served')).toBe(true);
    expect(served).not.toContain('GET /after');
  });
});
