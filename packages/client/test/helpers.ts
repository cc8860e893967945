/** Test helpers: a scripted MCP endpoint on node:http that records every request, and scripted answerers. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import type { Answerer, FormAnswer, FormQuestion, UrlAnswer, UrlQuestion } from '../src/index.js';

/** One request as the server received it. */
export interface Recorded {
  headers: IncomingHttpHeaders;
  /** The body exactly as sent. */
  raw: string;
  body: any;
}

/** What the scripted server answers: a JSON-RPC result, a raw HTTP reply, or SSE events. */
export type Reply =
  | { result: Record<string, unknown> }
  | { error: { code: number; message: string; data?: unknown }; status?: number }
  | { status: number; contentType?: string; text: string }
  | { sse: string[] }
  /** Close the connection without a response (a reset or a dropped proxy). */
  | { drop: true };

/** Start a server that answers request n (0-based) with `script(body, n)`. */
export async function scriptedServer(script: (body: any, n: number) => Reply) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = JSON.parse(raw);
      requests.push({ headers: req.headers, raw, body });
      const reply = script(body, requests.length - 1);
      if ('drop' in reply) {
        req.socket.destroy();
      } else if ('sse' in reply) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // One write per event: the client must join events split across reads.
        for (const chunk of reply.sse) res.write(chunk);
        res.end();
      } else if ('text' in reply) {
        res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'text/plain' });
        res.end(reply.text);
      } else if ('error' in reply) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: reply.error }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: reply.result }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A form-mode `elicitation/create` input request. */
export function formRequest(requestedSchema: Record<string, unknown>, message = 'Confirm?') {
  return { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } };
}

/** A one-field boolean form. */
export const confirmSchema = {
  type: 'object',
  properties: { confirm: { type: 'boolean', title: 'Confirm' } },
  required: ['confirm'],
};

/** An answerer that returns scripted answers in order and records every question it saw. */
export function scriptedAnswerer(
  forms: (FormAnswer | ((q: FormQuestion) => Promise<FormAnswer>))[],
  urls?: { answers: UrlAnswer[]; opened: string[] },
) {
  const questions: (FormQuestion | UrlQuestion)[] = [];
  const answerer: Answerer = {
    async form(q) {
      questions.push(q);
      const next = forms.shift();
      if (!next) throw new Error('the test ran out of scripted answers');
      return typeof next === 'function' ? next(q) : next;
    },
  };
  if (urls) {
    answerer.url = {
      async ask(q) {
        questions.push(q);
        const next = urls.answers.shift();
        if (!next) throw new Error('the test ran out of scripted URL answers');
        return next;
      },
      open(url) {
        urls.opened.push(url);
      },
    };
  }
  return { answerer, questions };
}

/** The complete result `{resultType: "complete", content: [text]}`. */
export const done = (text = 'done', extra: Record<string, unknown> = {}) => ({
  result: { resultType: 'complete', content: [{ type: 'text', text }], isError: false, ...extra },
});

/**
 * A `serve(script)` that starts a {@link scriptedServer} and closes it after
 * the test that started it. Call it once, at the top of a test file.
 */
export function serveScripted(): (
  script: (body: any, n: number) => Reply,
) => ReturnType<typeof scriptedServer> {
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (script) => {
    const s = await scriptedServer(script);
    servers.push(s);
    return s;
  };
}
