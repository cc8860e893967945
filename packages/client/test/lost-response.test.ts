/**
 * A response lost in flight (2026-07-28 change 9, `basic/transports/streamable-http`):
 * the client re-issues the request as a new request with a new id, the answered
 * round of a tools/call with its answers and requestState, never asking again.
 */
import { describe, expect, it } from 'vitest';
import { type ClientEvent, MAX_REISSUES, McpClient, TransportError } from '../src/index.js';
import {
  confirmSchema,
  done,
  formRequest,
  type Reply,
  scriptedAnswerer,
  serveScripted,
} from './helpers.js';

const serve = serveScripted();

const asks: Reply = {
  result: {
    resultType: 'input_required',
    inputRequests: { confirm: formRequest(confirmSchema) },
    requestState: 'S1',
  },
};

describe('a response lost in flight', () => {
  const cases: [string, Reply][] = [
    ['the connection reset', { drop: true }],
    ['the event stream ended without the response', { sse: [': keep-alive\n\n'] }],
  ];
  for (const [label, lost] of cases) {
    it(`re-issues the answered round after ${label}: a new id, the same answers and requestState, asked once`, async () => {
      let dropped = 0;
      const s = await serve((body, n) => {
        if (n === 0) return asks;
        if (body.params.requestState === 'S1' && dropped++ === 0) return lost;
        return done('Deleted.');
      });
      const { answerer, questions } = scriptedAnswerer([
        { action: 'accept', content: { confirm: true } },
      ]);
      const events: ClientEvent[] = [];
      const outcome = await new McpClient({
        url: s.url,
        answerer,
        onEvent: (e) => events.push(e),
      }).callTool('delete_record', { id: 'r1' });
      expect(outcome.result.content).toEqual([{ type: 'text', text: 'Deleted.' }]);
      expect(questions).toHaveLength(1);
      expect(s.requests).toHaveLength(3);
      const [, answered, reissued] = s.requests.map((r) => r.body);
      expect(reissued.id).not.toBe(answered.id);
      expect(reissued.params).toEqual(answered.params);
      expect(events).toContainEqual(
        expect.objectContaining({ type: 'retried', method: 'tools/call', reason: 'response-lost' }),
      );
    });
  }

  it(`gives up after ${MAX_REISSUES} re-issues, with a TransportError that says the response was lost`, async () => {
    const s = await serve((_b, n) => (n === 0 ? asks : { drop: true }));
    const { answerer } = scriptedAnswerer([{ action: 'accept', content: { confirm: true } }]);
    const call = new McpClient({ url: s.url, answerer }).callTool('delete_record', { id: 'r1' });
    await expect(call).rejects.toSatisfy(
      (e) => e instanceof TransportError && e.responseLost === true,
    );
    expect(s.requests).toHaveLength(1 + 1 + MAX_REISSUES);
  });

  it('never re-issues a first tools/call: a tool that asks nothing may have run', async () => {
    const s = await serve(() => ({ drop: true }));
    const call = new McpClient({ url: s.url }).callTool('delete_record', { id: 'r1' });
    await expect(call).rejects.toSatisfy(
      (e) => e instanceof TransportError && e.responseLost === true,
    );
    expect(s.requests).toHaveLength(1);
  });

  it('re-issues a read (tools/list) and not an HTTP error or a timeout', async () => {
    const lists = await serve((_b, n) =>
      n === 0
        ? { drop: true }
        : { result: { resultType: 'complete', tools: [], ttlMs: 0, cacheScope: 'private' } },
    );
    expect((await new McpClient({ url: lists.url }).listTools()).tools).toEqual([]);
    expect(lists.requests).toHaveLength(2);

    const failing = await serve(() => ({ status: 502, text: 'Bad gateway' }));
    await expect(new McpClient({ url: failing.url }).listTools()).rejects.toSatisfy(
      (e) => e instanceof TransportError && e.responseLost === false,
    );
    expect(failing.requests).toHaveLength(1);
  });
});
