/**
 * A diagnostic server between the floor and ours: the same canned JSON as
 * `bare.ts`, but served through `@hono/node-server`'s request listener (the
 * conversion `@mrtr/node` uses: a web-standard `Request` in, a `Response`
 * out). Its distance from `bare` is the adapter's cost; its distance from
 * `ours` is the MCP endpoint's and the gate's. Run as a child process by
 * `../flow.ts` when `BENCH_FLOW_SERVERS` names it.
 */
import { getRequestListener } from '@hono/node-server';
import { cannedResults, serveChild, TOKEN } from '../flow/common.js';

const canned = cannedResults();
const ask = JSON.stringify(canned.ask);
const done = JSON.stringify(canned.done);
const bearer = `Bearer ${TOKEN}`;

const listener = getRequestListener(async (request: Request) => {
  if (request.headers.get('authorization') !== bearer) return new Response(null, { status: 401 });
  const body = JSON.parse(await request.text()) as {
    id: number | string;
    params?: { requestState?: unknown };
  };
  const result = body.params?.requestState === undefined ? ask : done;
  return new Response(`{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":${result}}`, {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
});

await serveChild((req, res) => void listener(req, res));
