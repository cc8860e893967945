/**
 * What a hostile server can make the client hold or wait for is bounded: an
 * event stream that never sends its response, a tools/list of endless pages,
 * a round of thousands of questions, a schema nested 20,000 deep, a redirect
 * to another origin.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { quoted } from '../src/errors.js';
import { checkRenderable } from '../src/form.js';
import {
  type ClientEvent,
  LimitError,
  MAX_FIELD_CHOICES,
  MAX_FORM_FIELDS,
  MAX_KEPT_NOTIFICATIONS,
  MAX_LISTED_TOOLS,
  MAX_QUESTIONS_PER_ROUND,
  MAX_RESPONSE_BYTES,
  McpClient,
  McpClientError,
  ProtocolError,
  TransportError,
} from '../src/index.js';
import { inspectUrl } from '../src/url.js';
import { confirmSchema, done, formRequest, scriptedAnswerer, scriptedServer } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A raw node:http server: `handle` gets the parsed JSON-RPC body and the response to write. */
async function rawServer(
  handle: (body: any, res: ServerResponse, req: IncomingMessage) => void,
): Promise<{ url: string; hits: number }> {
  const state = { url: '', hits: 0 };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      state.hits++;
      handle(raw ? JSON.parse(raw) : undefined, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return state;
}

const json = (res: ServerResponse, id: unknown, result: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
};

/** Writes `event` on `res` for as long as the client reads, never the response. */
function endless(res: ServerResponse, event: string) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const pump = () => {
    while (res.write(event)) if (res.destroyed) return;
    res.once('drain', pump);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

const note = (text: string) =>
  `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: text } })}\n\n`;

describe('an event stream is bounded as a body is', () => {
  it('fails with TransportError past 16 MiB of notifications without the response, small or large', async () => {
    for (const event of [note('x'), note('y'.repeat(4 * 1024 * 1024))]) {
      const s = await rawServer((_body, res) => endless(res, event));
      const seen: ClientEvent[] = [];
      const client = new McpClient({ url: s.url, onEvent: (e) => seen.push(e) });
      const error = await client.callTool('t').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransportError);
      expect((error as Error).message).toContain(`more than ${MAX_RESPONSE_BYTES} bytes`);
      // The stream was read up to the bound, no further.
      const data = seen.reduce(
        (n, e) => n + (e.type === 'notification' ? String(e.notification.params?.data).length : 0),
        0,
      );
      expect(data).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    }
  });

  it('keeps at most MAX_KEPT_NOTIFICATIONS notifications in the outcome, counts the rest, and reports all', async () => {
    const extra = 250;
    const s = await scriptedServer((body) => ({
      sse: [
        ...Array.from({ length: MAX_KEPT_NOTIFICATIONS + extra }, (_, i) => note(`n${i}`)),
        `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, ...done() })}\n\n`,
      ],
    }));
    closers.push(s.close);
    let reported = 0;
    const client = new McpClient({
      url: s.url,
      onEvent: (e) => {
        if (e.type === 'notification') reported++;
      },
    });
    const out = await client.callTool('t');
    expect(out.result.content[0]?.text).toBe('done');
    expect(out.events.filter((e) => e.type === 'notification')).toHaveLength(
      MAX_KEPT_NOTIFICATIONS,
    );
    expect(out.droppedEvents).toBe(extra);
    expect(reported).toBe(MAX_KEPT_NOTIFICATIONS + extra);
  });

  it('keeps at most 1 Mi characters of notification data in the outcome', async () => {
    const s = await scriptedServer((body) => ({
      sse: [
        ...Array.from({ length: 8 }, () => note('z'.repeat(300 * 1024))),
        `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, ...done() })}\n\n`,
      ],
    }));
    closers.push(s.close);
    const out = await new McpClient({ url: s.url }).callTool('t');
    expect(out.events.filter((e) => e.type === 'notification')).toHaveLength(3);
    expect(out.droppedEvents).toBe(5);
  });
});

describe('tools/list is bounded across its pages', () => {
  const tool = (i: number) => ({ name: `t${i}`, inputSchema: { type: 'object' } });

  it('fails with LimitError past MAX_LISTED_TOOLS tools over endless pages', async () => {
    const perPage = 4000;
    const s = await rawServer((body, res) =>
      json(res, body.id, {
        tools: Array.from({ length: perPage }, (_, i) => tool(i)),
        nextCursor: 'more',
      }),
    );
    const error = await new McpClient({ url: s.url }).listTools().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitError);
    expect(error).toMatchObject({ code: 'limit', limit: 'MAX_LISTED_TOOLS' });
    expect(s.hits).toBe(Math.ceil((MAX_LISTED_TOOLS + 1) / perPage));
  });

  it('fails with LimitError past 32 MiB of pages, each under the 16 MiB a page may be', async () => {
    const big = 'd'.repeat(10 * 1024 * 1024);
    const s = await rawServer((body, res) =>
      json(res, body.id, {
        tools: [{ ...tool(0), description: big }],
        nextCursor: 'more',
      }),
    );
    const error = await new McpClient({ url: s.url }).listTools().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitError);
    expect(error).toMatchObject({ limit: 'MAX_LISTING_BYTES' });
    expect(s.hits).toBe(4);
  });

  it('gives all pages together listTimeoutMs, not requestTimeoutMs each', async () => {
    const s = await rawServer((body, res) => {
      setTimeout(() => json(res, body.id, { tools: [tool(1)], nextCursor: 'more' }), 100);
    });
    const client = new McpClient({ url: s.url, listTimeoutMs: 450, requestTimeoutMs: 10_000 });
    const error = await client.listTools().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toMatch(/within 450 ms \(listTimeoutMs\), after [3-5] pages/);
  });

  it('rejects a tool whose inputSchema nests 20,000 deep, and keeps the others', async () => {
    let deep: unknown = {};
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const s = await rawServer((body, res) => {
      // Written by hand: JSON.stringify of such a value overflows the stack.
      const schema = `{"type":"object","properties":{"a":${'['.repeat(20_000)}{}${']'.repeat(20_000)}}}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        `{"jsonrpc":"2.0","id":${body.id},"result":{"tools":[{"name":"deep","inputSchema":${schema}},${JSON.stringify(tool(1))}]}}`,
      );
    });
    const client = new McpClient({ url: s.url });
    const list = await client.listTools();
    expect(list.tools.map((t) => t.name)).toEqual(['t1']);
    expect(list.rejected).toEqual([
      { name: 'deep', reason: expect.stringContaining('nests deeper than') },
    ]);
    // Passed as the tool of a call, it is a ProtocolError too, never a RangeError.
    const error = await client
      .callTool('deep', {}, { tool: { name: 'deep', inputSchema: { type: 'object', x: deep } } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
  });
});

describe('server values nested 20,000 deep end in McpClientError, never RangeError', () => {
  it('in resultType, an elicitation mode, a field type and a response id', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const s = await rawServer((body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const name = body.params.name as string;
      const result =
        name === 'type'
          ? `{"resultType":${deep}}`
          : `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":${
              name === 'mode'
                ? `{"mode":${deep},"message":"m"}`
                : `{"message":"m","requestedSchema":{"type":"object","properties":{"f":{"type":${deep}}}}}`
            }}}}`;
      res.end(
        name === 'id'
          ? `{"jsonrpc":"2.0","id":${deep},"result":{}}`
          : `{"jsonrpc":"2.0","id":${body.id},"result":${result}}`,
      );
    });
    const { answerer } = scriptedAnswerer([]);
    const client = new McpClient({ url: s.url, answerer, maxRounds: 2 });
    for (const name of ['type', 'id'])
      await expect(client.callTool(name)).rejects.toBeInstanceOf(McpClientError);
    for (const name of ['mode', 'field']) {
      const events: ClientEvent[] = [];
      await expect(client.callTool(name, {}, { onEvent: (e) => events.push(e) })).rejects.toThrow(
        'after 2 rounds',
      );
      expect(events.find((e) => e.type === 'auto-declined')).toBeDefined();
    }
  });
});

describe('a round puts at most MAX_QUESTIONS_PER_ROUND questions to a person', () => {
  const asking = (count: number) =>
    scriptedServer((body, n) =>
      n === 0
        ? {
            result: {
              resultType: 'input_required',
              inputRequests: Object.fromEntries(
                Array.from({ length: count }, (_, i) => [`q${i}`, formRequest(confirmSchema)]),
              ),
            },
          }
        : done(JSON.stringify(body.params.inputResponses)),
    );

  it('declines a round of more questions whole, asking nobody', async () => {
    const s = await asking(MAX_QUESTIONS_PER_ROUND + 1);
    closers.push(s.close);
    const { answerer, questions } = scriptedAnswerer([]);
    const out = await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(questions).toHaveLength(0);
    expect(out.autoDeclined).toHaveLength(MAX_QUESTIONS_PER_ROUND + 1);
    expect(out.autoDeclined[0]?.reasons[0]).toContain(`at most ${MAX_QUESTIONS_PER_ROUND}`);
    const sent = s.requests[1]?.body.params.inputResponses;
    expect(Object.values(sent).every((r: any) => r.action === 'decline')).toBe(true);
  });

  // helper-153 #7: a hundred thousand forms were each checked (seconds) before all were declined.
  it('declines a round of far more requests without checking each form, still refusing a method not declared', async () => {
    const bad = { type: 'object', properties: { p: { type: 'string', pattern: 'x' } } };
    const s = await scriptedServer((body, n) =>
      n === 0
        ? {
            result: {
              resultType: 'input_required',
              inputRequests: Object.fromEntries(
                Array.from({ length: MAX_QUESTIONS_PER_ROUND * 4 + 1 }, (_, i) => [
                  `q${i}`,
                  formRequest(i === 0 ? bad : confirmSchema),
                ]),
              ),
            },
          }
        : done(JSON.stringify(body.params.inputResponses)),
    );
    closers.push(s.close);
    const { answerer, questions } = scriptedAnswerer([]);
    const out = await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(questions).toHaveLength(0);
    expect(out.autoDeclined).toHaveLength(MAX_QUESTIONS_PER_ROUND * 4 + 1);
    // The unrenderable form was not checked: it is declined for the round's size like the rest.
    expect(out.autoDeclined[0]?.reasons).toEqual([
      `the round asks ${MAX_QUESTIONS_PER_ROUND * 4 + 1} questions; this client puts at most ${MAX_QUESTIONS_PER_ROUND} to a person in one round`,
    ]);
    const sampling = await scriptedServer((_b, n) =>
      n === 0
        ? {
            result: {
              resultType: 'input_required',
              inputRequests: Object.fromEntries(
                Array.from({ length: 200 }, (_, i) => [
                  `q${i}`,
                  i === 150
                    ? { method: 'sampling/createMessage', params: {} }
                    : formRequest(confirmSchema),
                ]),
              ),
            },
          }
        : done(),
    );
    closers.push(sampling.close);
    await expect(new McpClient({ url: sampling.url, answerer }).callTool('t')).rejects.toThrow(
      ProtocolError,
    );
    expect(sampling.requests).toHaveLength(1);
  });

  it('declines a form of more than MAX_FORM_FIELDS fields', () => {
    const fields = (n: number) => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`f${i}`, { type: 'boolean' }]),
      ),
    });
    expect(checkRenderable(fields(MAX_FORM_FIELDS)).ok).toBe(true);
    const r = checkRenderable(fields(MAX_FORM_FIELDS + 1));
    expect(r).toEqual({
      ok: false,
      reasons: [
        `the form has ${MAX_FORM_FIELDS + 1} fields; this client shows at most ${MAX_FORM_FIELDS}`,
      ],
    });
  });

  // helper-155 L5: a field of three million choices took mrtr seconds to draw.
  it('declines a field of more than MAX_FIELD_CHOICES choices, of any kind', () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    const titled = (n: number) => values(n).map((v) => ({ const: v, title: v }));
    const kinds = (n: number) => [
      { type: 'string', enum: values(n) },
      { type: 'string', oneOf: titled(n) },
      { type: 'array', items: { type: 'string', enum: values(n) } },
      { type: 'array', items: { anyOf: titled(n) } },
    ];
    for (const p of kinds(MAX_FIELD_CHOICES))
      expect(checkRenderable({ type: 'object', properties: { p } }).ok).toBe(true);
    // helper-157 L4: a default, or enumNames, of millions of entries was read per choice.
    const few = { type: 'string', enum: ['a', 'b'], enumNames: values(MAX_FIELD_CHOICES + 1) };
    const defaults = {
      type: 'array',
      items: { type: 'string', enum: ['a'] },
      default: Array(MAX_FIELD_CHOICES + 1).fill('a'),
    };
    for (const p of [...kinds(MAX_FIELD_CHOICES + 1), few, defaults]) {
      const r = checkRenderable({ type: 'object', properties: { p } });
      expect(r).toEqual({
        ok: false,
        reasons: [
          `field "p" lists ${MAX_FIELD_CHOICES + 1} choices; this client shows at most ${MAX_FIELD_CHOICES}`,
        ],
      });
    }
  });

  it('asks a round of exactly that many', async () => {
    const s = await asking(MAX_QUESTIONS_PER_ROUND);
    closers.push(s.close);
    const { answerer, questions } = scriptedAnswerer(
      Array.from({ length: MAX_QUESTIONS_PER_ROUND }, () => ({ action: 'decline' as const })),
    );
    const out = await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(questions).toHaveLength(MAX_QUESTIONS_PER_ROUND);
    expect(out.autoDeclined).toHaveLength(0);
  });

  it('cancels the rest of the round, unasked, once a question is cancelled or times out', async () => {
    for (const first of ['cancel', 'timeout'] as const) {
      const s = await asking(5);
      closers.push(s.close);
      const { answerer, questions } = scriptedAnswerer([
        { action: 'decline' },
        first === 'cancel' ? { action: 'cancel' } : () => new Promise(() => {}),
        { action: 'decline' },
      ]);
      await new McpClient({ url: s.url, answerer, answerTimeoutMs: 50 }).callTool('t');
      expect(questions).toHaveLength(2);
      expect(s.requests[1]?.body.params.inputResponses).toEqual({
        q0: { action: 'decline' },
        q1: { action: 'cancel' },
        q2: { action: 'cancel' },
        q3: { action: 'cancel' },
        q4: { action: 'cancel' },
      });
    }
  });
});

describe('redirects', () => {
  it('refuses a redirect to another origin, naming it; nothing reaches it', async () => {
    const other = await rawServer((body, res) => json(res, body?.id, done().result));
    const s = await rawServer((_body, res) => {
      res.writeHead(307, { location: `${other.url}?from=redirect` });
      res.end();
    });
    const error = await new McpClient({ url: s.url }).callTool('t', { secret: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ httpStatus: 307 });
    expect((error as Error).message).toContain(`${other.url}?from=redirect`);
    expect((error as Error).message).toContain('another origin');
    expect(other.hits).toBe(0);
  });

  it('follows a same-origin 307 with the same POST', async () => {
    const s = await rawServer((body, res, req) => {
      if (req.url === '/mcp') {
        res.writeHead(307, { location: '/mcp2' });
        res.end();
      } else
        json(
          res,
          body.id,
          done(`at ${req.url} got ${JSON.stringify(body.params.arguments)}`).result,
        );
    });
    const out = await new McpClient({ url: s.url }).callTool('t', { a: 1 });
    expect(out.result.content[0]?.text).toBe('at /mcp2 got {"a":1}');
  });
});

describe('quoted', () => {
  it('escapes what JSON leaves raw but a reader must not meet: C1 controls, bidi and other format characters, separators', () => {
    expect(quoted('a\u202eb\u{e0041}c\u2028d\u0085e\u001bf')).toBe(
      '"a\\u202eb\\udb40\\udc41c\\u2028d\\u0085e\\u001bf"',
    );
    expect(quoted('é😀 ok')).toBe('"é😀 ok"');
    // Private-use, unassigned and other default-ignorable code points may draw as nothing.
    expect(quoted('prod\ue000-db \u0378\u3164\u{10fffd}\u2800')).toBe(
      '"prod\\ue000-db \\u0378\\u3164\\udbff\\udffd\\u2800"',
    );
    // What emoji need stays as it is: the variation selectors.
    expect(quoted('\u2764\ufe0f 1\ufe0f\u20e3')).toBe('"\u2764\ufe0f 1\ufe0f\u20e3"');
    expect(quoted('x'.repeat(500))).toHaveLength(103);
  });
});

describe('reasons about what a server sent', () => {
  it('are at most ten, then how many more, with names quoted', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`f\u202e${i}`, { type: 'string', minLength: 'x' }]),
    );
    const checked = checkRenderable({ type: 'object', properties });
    expect(checked.ok).toBe(false);
    const reasons = checked.ok ? [] : checked.reasons;
    expect(reasons).toHaveLength(11);
    expect(reasons.at(-1)).toBe('and 50 more');
    expect(reasons[0]).toMatch(/^field "f\\u202e0"/);
    expect(reasons.join('\n')).not.toMatch(/\p{Cf}/u);
  });

  it('quote a URL scheme, bounded', () => {
    const inspected = inspectUrl(`${'x'.repeat(10_000)}://host/`, new URL('http://127.0.0.1/mcp'));
    expect(inspected.ok).toBe(false);
    if (!inspected.ok) expect(inspected.reason.length).toBeLessThan(200);
  });
});

describe('counts a call may be set to (helper-163 L12)', () => {
  it('maxRounds and maxInvalidAnswers are whole numbers up to 1000, checked when the client is made', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, 1e21, '3'])
      expect(
        () => new McpClient({ url: 'http://127.0.0.1:9/mcp', maxRounds: bad as number }),
      ).toThrow(/maxRounds must be a whole number from 1 to 1000/);
    for (const bad of [-1, 1.5, Number.NaN, 1e21, Number.POSITIVE_INFINITY])
      expect(
        () => new McpClient({ url: 'http://127.0.0.1:9/mcp', maxInvalidAnswers: bad as number }),
      ).toThrow(/maxInvalidAnswers must be a whole number from 0 to 1000/);
    expect(
      () => new McpClient({ url: 'http://127.0.0.1:9/mcp', maxRounds: 1000, maxInvalidAnswers: 0 }),
    ).not.toThrow();
  });
});
