/**
 * The floor of the flow benchmark: a bare `node:http` server that answers
 * both rounds of the gated `tools/call` with canned JSON. It reads and parses
 * the body (to echo the JSON-RPC id and tell the rounds apart) and checks the
 * bearer token, and does nothing else: no ticket, no digest, no store, no
 * validation. Run as a child process by `../flow.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cannedResults, serveChild, TOKEN } from '../flow/common.js';

const canned = cannedResults();
const ask = JSON.stringify(canned.ask);
const done = JSON.stringify(canned.done);
const bearer = `Bearer ${TOKEN}`;

function listener(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.headers.authorization !== bearer) {
      res.writeHead(401).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id: number | string;
      params?: { requestState?: unknown };
    };
    const result = body.params?.requestState === undefined ? ask : done;
    const text = `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":${result}}`;
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  });
}

await serveChild(listener);
