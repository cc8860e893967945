/**
 * A body the endpoint refuses gets on Express what it gets on `@mrtr/node`
 * (status, JSON-RPC body, `Content-Type`, `Accept-Encoding`), whether the
 * handler reads the body itself (the quick start) or a body parser read it
 * first and `mcpErrorHandler` answers the parser's refusal: JSON that is no
 * request object, a charset other than UTF-8, any `Content-Encoding` but
 * `identity` whatever the bytes. And the exact routing the README shows.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createMcpHttpServer } from '@mrtr/node';
import { createMcpEndpoint } from '@mrtr/server';
import express, { type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, keepRawBody, mcpErrorHandler, mcpHandler } from '../src/index.js';

const endpoint = createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] });
const alice = { id: 'alice' };
/** The quick start's authentication middleware, reduced to its outcome. */
const auth: RequestHandler = (_req, res, next) => {
  res.locals.principal = alice;
  next();
};
const principal = (_req: unknown, res: express.Response) => res.locals.principal;

/** As the quick start mounts it, with `parser` (if any) in front of the handler. */
function quickStartApp(parser?: RequestHandler): express.Express {
  const app = express();
  app.all('/mcp', auth, ...(parser ? [parser] : []), mcpHandler(endpoint, { principal }));
  app.use('/mcp', mcpErrorHandler({ onError: () => {} }));
  return app;
}

const MOUNTINGS = {
  'without a body parser (the quick start)': quickStartApp(),
  'behind express.json()': quickStartApp(express.json()),
  'behind express.json({ verify: keepRawBody })': quickStartApp(
    express.json({ verify: keepRawBody }),
  ),
};

const servers: Server[] = [];
async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
let node: string;
const bases: Record<string, string> = {};
beforeAll(async () => {
  node = await listen(createMcpHttpServer(endpoint, { principal: () => alice }));
  for (const [name, app] of Object.entries(MOUNTINGS))
    bases[name] = await listen(createHttpServer(app));
});
afterAll(() =>
  Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  ),
);

const LIST = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

/** What a client reads of the answer to a POST of `body` with `headers` on top of a conforming set. */
async function answer(
  url: string,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string | null; acceptEncoding: string | null; body: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
      ...headers,
    },
    body: body as BodyInit,
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    acceptEncoding: res.headers.get('accept-encoding'),
    body: await res.text(),
  };
}

const NOT_AN_OBJECT = ['"hello"', '42', 'null', ' true ', '"\u00e9"'];
const CHARSETS = [
  'utf-8',
  'UTF-8',
  'Utf-8',
  '"utf-8"',
  'utf-32',
  'UTF-32',
  'utf-16',
  'utf-16le',
  'utf-7',
  'latin1',
  'iso-8859-1',
  'us-ascii',
  'unicode-1-1-utf-8',
  'bogus',
];
/** Labels of UTF-8 the endpoint accepts and `express.json()` refuses before reading (it takes `utf-*`). */
const UNHYPHENATED = ['utf8', 'UTF8'];
const junk = new TextEncoder().encode('not compressed at all');
const CODINGS: [string, Uint8Array | string][] = [
  ['gzip', junk],
  ['gzip', gzipSync(LIST)],
  ['GZIP', junk],
  ['x-gzip', gzipSync(LIST)],
  ['deflate', junk],
  ['deflate', deflateSync(LIST)],
  ['br', junk],
  ['br', brotliCompressSync(LIST)],
  ['zstd', junk],
  ['compress', LIST],
  ['identity, gzip', gzipSync(LIST)],
  // 300 KB of spaces in a few hundred bytes: the parser inflates it past its limit (413 before).
  ['gzip', gzipSync(' '.repeat(300_000))],
  ['identity', LIST],
  ['IDENTITY', LIST],
];

describe('Express behind express.text() (the parser already decoded the text)', () => {
  let text: string;
  beforeAll(async () => {
    text = await listen(
      createHttpServer(quickStartApp(express.text({ type: 'application/json' }))),
    );
  });

  it('a body with two BOMs or a U+FFFD the parser may have written is -32700; one BOM is served', async () => {
    const bom = [0xef, 0xbb, 0xbf];
    expect(
      (await answer(`${text}/mcp`, new Uint8Array([...bom, ...Buffer.from(LIST)]))).status,
    ).toBe(200);
    for (const body of [
      new Uint8Array([...bom, ...bom, ...Buffer.from(LIST)]),
      LIST.replace('"id":1', '"id":"\ufffd"'),
    ]) {
      const got = await answer(`${text}/mcp`, body);
      expect([got.status, JSON.parse(got.body).error?.code]).toEqual([400, -32700]);
    }
  });
});

// helper-161 M1: the value of a JSON string literal was served as the request it spells.
describe('Express behind express.json({ strict: false }) (a JSON string is a value, not the body)', () => {
  let lax: string;
  let chunkedText: string;
  beforeAll(async () => {
    lax = await listen(createHttpServer(quickStartApp(express.json({ strict: false }))));
    chunkedText = await listen(
      createHttpServer(quickStartApp(express.text({ type: 'application/json' }))),
    );
  });

  it('a body that is a JSON string holding a request: 400 -32600, never served', async () => {
    for (const body of [JSON.stringify(LIST), JSON.stringify('{}'), JSON.stringify(`${LIST} `)]) {
      const got = await answer(`${lax}/mcp`, body);
      expect([got.status, JSON.parse(got.body).error?.code], body.slice(0, 20)).toEqual([
        400, -32600,
      ]);
      expect(got.body).not.toMatch(/"tools"/);
    }
    expect((await answer(`${lax}/mcp`, LIST)).status).toBe(200);
  });

  it('a body a middleware drained and kept nothing of: -32700 saying so, not "not valid JSON" (helper-161 L4)', async () => {
    const drained = await listen(
      createHttpServer(
        quickStartApp((req, _res, next) => {
          req.on('data', () => {}).on('end', () => next());
        }),
      ),
    );
    const got = await answer(`${drained}/mcp`, LIST);
    expect([got.status, JSON.parse(got.body).error?.code]).toEqual([400, -32700]);
    expect(JSON.parse(got.body).error.message).toMatch(/kept nothing of it/);
  });

  it('a chunked body a text parser read cannot be told from one: refused, naming keepRawBody', async () => {
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(LIST));
        c.close();
      },
    });
    const res = await fetch(`${chunkedText}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    const body = await res.json();
    expect([res.status, body.error.code]).toEqual([400, -32600]);
    expect(body.error.message).toMatch(/keepRawBody/);
  });
});

describe.each(Object.keys(MOUNTINGS))('Express %s answers as @mrtr/node', (mounting) => {
  const url = () => `${bases[mounting]}/mcp`;

  it('JSON that is no object: 400 with -32600 Invalid Request (JSON-RPC 2.0 §5.1), not -32700', async () => {
    for (const body of NOT_AN_OBJECT) {
      const expected = await answer(`${node}/mcp`, body);
      expect(JSON.parse(expected.body).error.code, body).toBe(-32600);
      expect(await answer(url(), body), body).toEqual(expected);
    }
    // Bytes that are not UTF-8 are no JSON text, even around a string: -32700 on both.
    const notUtf8 = new Uint8Array([0x22, 0xff, 0x22]);
    expect(await answer(url(), notUtf8)).toEqual(await answer(`${node}/mcp`, notUtf8));
  });

  it('a request whose string holds bytes that are not UTF-8: 400 with -32700, never read as U+FFFD', async () => {
    const [beforeId, afterId] = LIST.split('"id":1') as [string, string];
    const [beforeMeta, afterMeta] = LIST.split('"_meta":{') as [string, string];
    for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
      // In the id, and in a member name of _meta; each is valid JSON once the bytes are U+FFFD.
      for (const [before, after] of [
        [`${beforeId}"id":"r-`, `"${afterId}`],
        [`${beforeMeta}"_meta":{"x-`, `":1,${afterMeta}`],
      ] as const) {
        const body = Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]);
        expect(() => JSON.parse(body.toString('utf8'))).not.toThrow();
        const expected = await answer(`${node}/mcp`, body);
        expect([expected.status, JSON.parse(expected.body).error?.code]).toEqual([400, -32700]);
        const got = await answer(url(), body);
        expect([got.status, JSON.parse(got.body).error?.code], mounting).toEqual([400, -32700]);
      }
    }
  });

  it('a body behind two BOMs: 400 with -32700, as on @mrtr/node (one BOM is dropped)', async () => {
    const bom = [0xef, 0xbb, 0xbf];
    const one = new Uint8Array([...bom, ...Buffer.from(LIST)]);
    expect((await answer(url(), one)).status).toBe(200);
    const two = new Uint8Array([...bom, ...bom, ...Buffer.from(LIST)]);
    const expected = await answer(`${node}/mcp`, two);
    expect([expected.status, JSON.parse(expected.body).error?.code]).toEqual([400, -32700]);
    const got = await answer(url(), two);
    expect([got.status, JSON.parse(got.body).error?.code], mounting).toEqual([400, -32700]);
  });

  it('every charset: UTF-8 in any case served, any other 415 with the same body', async () => {
    for (const charset of CHARSETS) {
      const headers = { 'content-type': `application/json; charset=${charset}` };
      const expected = await answer(`${node}/mcp`, LIST, headers);
      expect(await answer(url(), LIST, headers), charset).toEqual(expected);
    }
  });

  it('any Content-Encoding but identity: the same 415 whatever the bytes, no library message', async () => {
    for (const [coding, body] of CODINGS) {
      const headers = { 'content-encoding': coding };
      const expected = await answer(`${node}/mcp`, body, headers);
      const got = await answer(url(), body, headers);
      expect(got, coding).toEqual(expected);
      expect(got.body).not.toMatch(/incorrect header check|Decompression failed|unexpected end/);
    }
  });
});

describe('charset=utf8 (no hyphen)', () => {
  it('is served where the handler reads the body itself, as on @mrtr/node', async () => {
    const url = `${bases['without a body parser (the quick start)']}/mcp`;
    for (const charset of UNHYPHENATED) {
      const headers = { 'content-type': `application/json; charset=${charset}` };
      const served = await answer(url, LIST, headers);
      expect(served.status, charset).toBe(200);
      expect(served).toEqual(await answer(`${node}/mcp`, LIST, headers));
    }
  });

  it('behind express.json(), which refuses it before reading, is a JSON-RPC 415 saying what to send', async () => {
    for (const mounting of [
      'behind express.json()',
      'behind express.json({ verify: keepRawBody })',
    ]) {
      const got = await answer(`${bases[mounting]}/mcp`, LIST, {
        'content-type': 'application/json; charset=UTF8',
      });
      expect(got.status, mounting).toBe(415);
      expect(JSON.parse(got.body).error).toEqual({
        code: -32600,
        message: 'Unsupported charset: send charset=utf-8 or none',
      });
    }
  });
});

describe('mcpErrorHandler', () => {
  it("never passes on the message of an error Node's zlib or a socket raised while a parser read", async () => {
    const app = express();
    const zlibError = () =>
      Object.assign(new Error('incorrect header check'), {
        errno: -3,
        code: 'Z_DATA_ERROR',
        status: 400,
      });
    app.post('/mcp', (_req, _res, next) => next(zlibError()));
    app.use('/mcp', mcpErrorHandler());
    const url = `${await listen(createHttpServer(app))}/mcp`;
    const got = await answer(url, LIST);
    expect(got.status).toBe(400);
    expect(JSON.parse(got.body).error).toEqual({
      code: -32600,
      message: 'Bad Request: the body could not be read',
    });
  });
});

describe('exact routing, as the README shows', () => {
  it("with 'strict routing' and 'case sensitive routing', /mcp/ and /MCP are not the endpoint", async () => {
    const app = express();
    app.set('strict routing', true); // before the first route: the app's router is made then
    app.set('case sensitive routing', true);
    app.all('/mcp', auth, mcpHandler(endpoint, { principal }));
    app.use('/mcp', mcpErrorHandler());
    app.use((_req, res) => {
      const error = { code: -32600, message: 'Not Found: no MCP endpoint at this path' };
      res.status(404).json({ jsonrpc: '2.0', error });
    });
    const base = await listen(createHttpServer(app));
    expect((await answer(`${base}/mcp`, LIST)).status).toBe(200);
    expect((await answer(`${base}/mcp?x=1`, LIST)).status).toBe(200);
    for (const path of ['/mcp/', '/MCP', '/Mcp', '/mcp//', '/%6dcp', '/mcp;x', '//mcp']) {
      const got = await answer(base + path, LIST);
      expect(got.status, path).toBe(404);
      expect(JSON.parse(got.body).error.code, path).toBe(-32600);
    }
  });

  it('without them Express routes /mcp/ and /MCP to the handler (its defaults)', async () => {
    const base = bases['without a body parser (the quick start)'];
    for (const path of ['/mcp/', '/MCP'])
      expect((await answer(base + path, LIST)).status).toBe(200);
  });

  it('even by default Express matches the path as sent: /%6dcp, /mcp;x and //mcp are not /mcp', async () => {
    // Express decodes route parameters, never the path it matches, and keeps `;` and an empty segment.
    const base = bases['without a body parser (the quick start)'];
    for (const path of ['/%6dcp', '/%6Dcp', '/mcp;x', '//mcp'])
      expect((await answer(base + path, LIST)).status, path).toBe(404);
  });
});
