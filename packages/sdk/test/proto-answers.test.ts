/**
 * An answer under `__proto__` is no answer. The official SDK parses a
 * 2026-07-28 `inputResponses` with zod's `z.record`, which assigns a
 * `"__proto__"` member of the JSON as the record's prototype: the gate read
 * `inputResponses.confirm` through it, and a round 2 whose only answer sat
 * under `__proto__` carried out the deletion. Sent here as raw JSON text over
 * HTTP to the bridge (a Node server of the harness's instance), round 2 with
 * such a body deletes nothing; the same round 2 with the answer as an own
 * member deletes, so the test can tell.
 */
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { GateAuditEvent } from '@mrtr/gate';
import { createHttpServer } from '@mrtr/node';
import { afterEach, describe, expect, it } from 'vitest';
import { authInfoOf, instance, shared, TOKENS } from './harness.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The harness's instance behind a Node HTTP server on a free port: its URL, records and audit. */
async function bridge() {
  const s = shared(['r1']);
  const audit: GateAuditEvent[] = [];
  const { handler } = instance(s, audit);
  const mcp = toNodeHandler(handler);
  const server = createHttpServer((req, res) => {
    (req as { auth?: AuthInfo }).auth = authInfoOf(
      new Request('http://x/', { headers: { authorization: req.headers.authorization ?? '' } }),
    );
    void mcp(req as Parameters<typeof mcp>[0], res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    () => handler.close(),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, records: s.records, audit };
}

/** POST a 2026-07-28 `tools/call` of `delete_record`, the body as this very text. */
async function post(url: string, body: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKENS.alice}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'delete_record',
    },
    body,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** Round 1 for r1: the ticket. */
async function ticket(url: string): Promise<string> {
  const params = { name: 'delete_record', arguments: { id: 'r1' }, _meta: META };
  const body = await post(
    url,
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
  );
  const result = body.result as { resultType?: string; requestState?: string };
  expect(result.resultType).toBe('input_required');
  return result.requestState as string;
}

/** Round 2 as raw text, `inputResponses` spliced in as written. */
function round2(requestState: string, inputResponses: string): string {
  return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_record","arguments":{"id":"r1"},"_meta":${JSON.stringify(META)},"requestState":${JSON.stringify(requestState)},"inputResponses":${inputResponses}}}`;
}

const ANSWER = '{"confirm":{"action":"accept","content":{"confirm":true}}}';

type Bridge = Awaited<ReturnType<typeof bridge>>;

/**
 * Nothing was carried out: r1 is there, no `completed` in the audit, and the
 * answer is the question asked again (or, if anything else, no deletion).
 */
function expectNothingDone({ records, audit }: Bridge, answered: Record<string, unknown>) {
  expect(records.has('r1')).toBe(true);
  expect(audit.map((e) => e.outcome)).not.toContain('completed');
  const result = answered.result as Record<string, unknown> | undefined;
  expect(result?.structuredContent).toBeUndefined();
  if (result?.resultType === 'input_required') {
    expect(result.inputRequests).toHaveProperty('confirm');
  } else {
    expect(answered.error ?? result?.isError).toBeTruthy();
    expect(JSON.stringify(answered)).not.toMatch(/Deleted/);
  }
}

describe('round 2 on the SDK bridge', () => {
  it('an accept under "__proto__" of inputResponses deletes nothing', async () => {
    const b = await bridge();
    const body = round2(await ticket(b.url), `{"__proto__":${ANSWER}}`);
    // The member is in the text as sent (JSON.stringify of an object literal would have lost it).
    expect(body).toContain('"inputResponses":{"__proto__":{"confirm":{"action":"accept"');
    const answered = await post(b.url, body);
    expectNothingDone(b, answered);
    expect((answered.result as Record<string, unknown>).resultType).toBe('input_required');
  });

  // A guard: the SDK's parse of an answer does not make this member a prototype today.
  it('an answer whose action and content sit under "__proto__" deletes nothing', async () => {
    const b = await bridge();
    const inner = '{"__proto__":{"action":"accept","content":{"confirm":true}}}';
    const answered = await post(b.url, round2(await ticket(b.url), `{"confirm":${inner}}`));
    expectNothingDone(b, answered);
  });

  it('the same round 2 with the answer as an own member deletes (the test can tell)', async () => {
    const b = await bridge();
    const answered = await post(b.url, round2(await ticket(b.url), ANSWER));
    const result = answered.result as Record<string, unknown>;
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual({ deleted: 'r1' });
    expect(b.records.has('r1')).toBe(false);
    expect(b.audit.map((e) => e.outcome)).toContain('completed');
  });
});
