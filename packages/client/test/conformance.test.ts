/**
 * @mrtr/client against the conformance fixture server (the tools the official
 * suite's `input-required-result-*` scenarios call), in-process over HTTP.
 */
import { type RunningConformanceServer, startConformanceServer } from '@mrtr/conformance-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FormQuestion, JsonRpcError, McpClient } from '../src/index.js';
import { scriptedAnswerer } from './helpers.js';

let server: RunningConformanceServer;
const sent: any[] = [];
const received: any[] = [];
const recordingFetch: typeof fetch = async (input, init) => {
  sent.push(JSON.parse(String(init?.body)));
  const response = await fetch(input, init);
  received.push(await response.clone().json());
  return response;
};

beforeAll(async () => {
  server = await startConformanceServer();
});
afterAll(async () => {
  await server?.close();
});

const answer = (field: string, value: string) => async (q: FormQuestion) => {
  expect(Object.keys(q.requestedSchema.properties)).toEqual([field]);
  return { action: 'accept' as const, content: { [field]: value } };
};

describe('@mrtr/client against the conformance fixtures', () => {
  it('runs two rounds of questions, echoing each sealed requestState exactly', async () => {
    const { answerer, questions } = scriptedAnswerer([
      answer('name', 'Ada'),
      answer('color', 'blue'),
    ]);
    sent.length = 0;
    received.length = 0;
    const client = new McpClient({ url: server.url, answerer, fetch: recordingFetch });
    const out = await client.callTool('test_input_required_result_multi_round');
    expect(out.result.content[0]?.text).toBe('Ada likes blue.');
    expect(out.rounds).toBe(3);
    expect(questions.map((q) => q.message)).toEqual([
      'Step 1: What is your name?',
      'Step 2: What is your favorite color?',
    ]);
    expect(new Set(sent.map((b) => b.id)).size).toBe(3);
    expect(sent[0].params).not.toHaveProperty('requestState');
    expect(sent[1].params.requestState).toBe(received[0].result.requestState);
    expect(sent[2].params.requestState).toBe(received[1].result.requestState);
    expect(Object.keys(sent[1].params.inputResponses)).toEqual(['step1']);
    expect(Object.keys(sent[2].params.inputResponses)).toEqual(['step2']);
  });

  it('answers one elicitation, and a gated confirmation whose state the server verifies', async () => {
    const named = scriptedAnswerer([answer('name', 'Grace')]);
    const client = new McpClient({ url: server.url, answerer: named.answerer });
    const hello = await client.callTool('test_input_required_result_elicitation');
    expect(hello.result.content[0]?.text).toBe('Hello, Grace!');

    const ok = scriptedAnswerer([{ action: 'accept', content: { ok: true } }]);
    const confirmed = await client.callTool(
      'test_input_required_result_request_state',
      {},
      {
        answerer: ok.answerer,
      },
    );
    expect(confirmed.result.content[0]?.text).toMatch(/^state-ok/);
  });

  it('is asked only through what it declared: form elicitation, or nothing at all', async () => {
    const named = scriptedAnswerer([answer('name', 'Lin')]);
    const client = new McpClient({ url: server.url, answerer: named.answerer });
    const out = await client.callTool('test_input_required_result_capabilities');
    expect(out.result.content[0]?.text).toBe('Thanks for the input.');
    expect(named.questions.map((q) => q.key)).toEqual(['user_name']);

    const bare = new McpClient({ url: server.url });
    const error = await bare.callTool('test_input_required_result_capabilities').catch((e) => e);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.rpcCode).toBe(-32021);
  });

  it('declares neither sampling nor roots, so fixtures that need them are refused and nobody is asked', async () => {
    for (const name of [
      'test_input_required_result_sampling',
      'test_input_required_result_list_roots',
      'test_input_required_result_multiple_inputs',
    ]) {
      const { answerer, questions } = scriptedAnswerer([]);
      const error = await new McpClient({ url: server.url, answerer })
        .callTool(name)
        .catch((e) => e);
      expect(error, name).toBeInstanceOf(JsonRpcError);
      expect(error.rpcCode, name).toBe(-32021);
      const required = Object.keys(error.data.requiredCapabilities);
      expect(
        required.some((c) => c === 'sampling' || c === 'roots'),
        name,
      ).toBe(true);
      expect(questions, name).toHaveLength(0);
    }
  });
});
