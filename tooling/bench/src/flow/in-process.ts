/**
 * One gated flow (round 1 + round 2) called in process, without sockets: through
 * `McpEndpoint.serve` as `@mrtr/node`'s direct path calls it, or through
 * `ConfirmationGate.run` alone. Used by `../endpoint.ts` (CPU time) and
 * `../instructions/loop.ts` (instruction counts).
 */
import type { GateRequest } from '@mrtr/gate';
import type { HttpExchange, HttpReply } from '@mrtr/server';
import { gatedDelete, oursEndpoint } from '../servers/ours-endpoint.js';
import {
  HEADERS,
  PRINCIPAL,
  ROUND1,
  requestStateOf,
  round2,
  seedRecords,
  TOOL,
  WORKSPACE,
} from './common.js';

/** Lower-case header names to values, as `IncomingMessage.headers` holds them. */
const plainHeaders: Record<string, string> = Object.fromEntries(
  Object.entries({ ...HEADERS, host: '127.0.0.1:3000' }).map(([k, v]) => [k.toLowerCase(), v]),
);
function exchange(body: string): HttpExchange {
  const headers: Record<string, string> = Object.assign({}, plainHeaders, {
    'content-length': String(Buffer.byteLength(body)),
  });
  return {
    method: 'POST',
    header: (name) => headers[name] ?? null,
    host: () => headers.host as string,
    readBody: async () => ({ ok: true, text: body }),
    // What authenticate reads; @mrtr/node's lazy Request answers headers.get from the message the same way.
    request: {
      headers: { get: (name: string) => headers[name.toLowerCase()] ?? null },
    } as unknown as Request,
    signal: undefined,
  };
}
function textOf(reply: HttpReply): string {
  if (typeof reply.body !== 'string') throw new Error(`not a JSON reply: ${reply.status}`);
  return reply.body;
}

/** Both rounds through `McpEndpoint.serve`, as `@mrtr/node`'s direct path calls it. */
export function directFlow(canned: boolean): () => Promise<void> {
  const endpoint = oursEndpoint(seedRecords(), { canned });
  const serve = endpoint.serve;
  if (!serve) throw new Error('the endpoint has no serve');
  return async () => {
    const state = requestStateOf(textOf(await serve(exchange(ROUND1))));
    if (!state) throw new Error('round 1 did not ask');
    const done = textOf(await serve(exchange(round2(state))));
    if (!done.includes('"complete"') || done.includes('"isError":true'))
      throw new Error(`round 2 did not complete: ${done}`);
  };
}

export function gateFlow(): () => Promise<void> {
  const { gate, spec } = gatedDelete(seedRecords());
  const base: Omit<GateRequest, 'requestState' | 'inputResponses'> = {
    principal: { id: PRINCIPAL },
    method: 'tools/call',
    name: TOOL,
    arguments: { workspace: WORKSPACE },
    capabilities: { elicitation: { form: {} } },
  };
  return async () => {
    const asked = await gate.run(
      Object.assign({}, base, { requestState: undefined, inputResponses: undefined }),
      spec(WORKSPACE),
    );
    if (asked.resultType !== 'input_required' || !asked.requestState) throw new Error('no ask');
    const done = await gate.run(
      Object.assign({}, base, {
        requestState: asked.requestState,
        inputResponses: {
          confirm_delete: { action: 'accept', content: { record_id: 'rec-03', confirm: true } },
        },
      }),
      spec(WORKSPACE),
    );
    if (done.resultType === 'input_required' || done.isError) throw new Error('no completion');
  };
}
