/**
 * The floor of the flow benchmark: a bare `node:http` server that answers
 * both rounds of the gated `tools/call` with canned JSON. It reads and parses
 * the body (to echo the JSON-RPC id and tell the rounds apart) and checks the
 * bearer token, and does nothing else: no ticket, no digest, no store, no
 * validation. Run as a child process by `../flow.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  candidatesOf,
  formSchema,
  KEY,
  question,
  seedRecords,
  serveChild,
  TOKEN,
  WORKSPACE,
} from '../flow/common.js';

const candidates = candidatesOf(seedRecords(), WORKSPACE);
const ask = JSON.stringify({
  resultType: 'input_required',
  inputRequests: {
    [KEY]: {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: question(WORKSPACE, candidates.length),
        requestedSchema: formSchema(candidates),
      },
    },
  },
  // A fixed value as long as @mrtr/ticket's for this call (212 characters): the floor does no sealing.
  requestState: 'v1.k1.'.padEnd(212, 'x'),
});
const done = JSON.stringify({
  resultType: 'complete',
  content: [{ type: 'text', text: `Deleted rec-03 from ${WORKSPACE}.` }],
  isError: false,
});
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
