import { assertValidMessage } from '@mrtr/spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConformanceServer, startConformanceServer } from '../src/app.js';

/**
 * The fixtures over real HTTP, every message checked against schema.json.
 * The official suite itself runs in `pnpm conformance`; these tests pin the
 * behaviours our fixtures add beyond what it checks (the sealed state of the
 * multi-round tools, the capability filter).
 */
let server: RunningConformanceServer;
beforeAll(async () => {
  server = await startConformanceServer({ port: 0 });
});
afterAll(async () => {
  await server.close();
});

const CAPS = { elicitation: {}, sampling: {}, roots: {} };
let nextId = 1;

async function call(
  method: string,
  params: Record<string, unknown>,
  caps: Record<string, unknown> = CAPS,
): Promise<any> {
  const body = {
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': caps,
      },
    },
  };
  assertValidMessage(body);
  const name = (params.name ?? params.uri) as string | undefined;
  const res = await fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assertValidMessage(json, { method });
  return json;
}

const flipLast = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

describe('conformance fixtures', () => {
  it('lists every tool with a description, in the same order each time', async () => {
    const a = (await call('tools/list', {})).result.tools;
    const b = (await call('tools/list', {})).result.tools;
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThanOrEqual(20);
    for (const tool of a) expect(tool.description, tool.name).toBeTruthy();
  });

  it('multi-round: each round seals new state; an old or altered state is refused', async () => {
    const name = 'test_input_required_result_multi_round';
    const r1 = (await call('tools/call', { name, arguments: {} })).result;
    const r2 = (
      await call('tools/call', {
        name,
        arguments: {},
        inputResponses: { step1: accept({ name: 'Ada' }) },
        requestState: r1.requestState,
      })
    ).result;
    expect(Object.keys(r2.inputRequests)).toEqual(['step2']);
    expect(r2.requestState).not.toBe(r1.requestState);
    const done = await call('tools/call', {
      name,
      arguments: {},
      inputResponses: { step2: accept({ color: 'blue' }) },
      requestState: r2.requestState,
    });
    expect(done.result.content[0].text).toBe('Ada likes blue.');
    const altered = await call('tools/call', {
      name,
      arguments: {},
      inputResponses: { step2: accept({ color: 'red' }) },
      requestState: flipLast(r2.requestState),
    });
    expect(altered.error.code).toBe(-32602);
    // Round-1 state stays round 1: it cannot skip to the end.
    const skipped = await call('tools/call', {
      name,
      arguments: {},
      inputResponses: { step2: accept({ color: 'red' }) },
      requestState: r1.requestState,
    });
    expect(Object.keys(skipped.result.inputRequests)).toEqual(['step1']);
    // A name too long to seal into the next state is asked again, never a 500.
    for (const long of ['x'.repeat(201), 'x'.repeat(3000)]) {
      const again = await call('tools/call', {
        name,
        arguments: {},
        inputResponses: { step1: accept({ name: long }) },
        requestState: r1.requestState,
      });
      expect(Object.keys(again.result.inputRequests)).toEqual(['step1']);
      expect(again.result.requestState).toBe(r1.requestState);
    }
  });

  it('request-state: the gate completes with state-ok once, then refuses a replay with another answer', async () => {
    const name = 'test_input_required_result_request_state';
    const r1 = (await call('tools/call', { name, arguments: {} })).result;
    expect(r1.inputRequests.confirm.method).toBe('elicitation/create');
    const ok = await call('tools/call', {
      name,
      arguments: {},
      inputResponses: { confirm: accept({ ok: true }) },
      requestState: r1.requestState,
    });
    expect(ok.result.content[0].text).toContain('state-ok');
    const other = await call('tools/call', {
      name,
      arguments: {},
      inputResponses: { confirm: accept({ ok: false }) },
      requestState: r1.requestState,
    });
    expect(other.result?.resultType === 'complete' && !other.result.isError).toBe(false);
  });

  it('capabilities: asks only through what this request declared', async () => {
    const name = 'test_input_required_result_capabilities';
    const sampling = (await call('tools/call', { name, arguments: {} }, { sampling: {} })).result;
    expect(Object.values(sampling.inputRequests).map((r: any) => r.method)).toEqual([
      'sampling/createMessage',
    ]);
    const none = await call('tools/call', { name, arguments: {} }, {});
    expect(none.error.code).toBe(-32021);
  });

  it('the embedded-resource prompt embeds a URI, and refuses an argument that is none', async () => {
    const ok = await call('prompts/get', {
      name: 'test_prompt_with_embedded_resource',
      arguments: { resourceUri: 'test://embedded' },
    });
    expect(ok.result.messages[0].content.resource.uri).toBe('test://embedded');
    for (const resourceUri of [
      'x',
      ' test://a',
      'test://a\n',
      'test://x/<b>',
      'test://a%zz',
      'test://a{b}',
      'test://é',
      'test://a#b#c',
      'test://a]b',
      'test://a/[x]',
    ]) {
      const bad = await call('prompts/get', {
        name: 'test_prompt_with_embedded_resource',
        arguments: { resourceUri },
      });
      expect(bad.error, resourceUri).toMatchObject({
        code: -32602,
        data: { argument: 'resourceUri' },
      });
    }
  });

  it('the prompt asks first and the template substitutes its id', async () => {
    const p = await call('prompts/get', { name: 'test_input_required_result_prompt' });
    expect(p.result.resultType).toBe('input_required');
    const r = await call('resources/read', { uri: 'test://template/42/data' });
    expect(JSON.parse(r.result.contents[0].text)).toMatchObject({ id: '42', templateTest: true });
  });
});
