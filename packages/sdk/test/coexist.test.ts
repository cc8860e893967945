/**
 * The gate beside a server that already verifies `requestState` for its own
 * tools with the SDK's `createRequestStateCodec` (`requestState.verify`).
 */
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  McpServer,
} from '@modelcontextprotocol/server';
import { ConfirmationGate, confirm } from '@mrtr/gate';
import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { serveBothEras } from '../src/index.js';
import {
  callTool,
  fetchFor,
  instance,
  officialClient,
  type Person,
  shared,
  textOf,
} from './harness.js';

const accept = { confirm: { action: 'accept', content: { confirm: true } } };

describe('without the bridge: why a gated tool could never complete', () => {
  /** The gate wired into registerTool by hand, on a server whose verify hook is the SDK codec. */
  function handWired(onerror: (e: Error) => void) {
    const records = new Set(['r1']);
    const gate = new ConfirmationGate({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: new Uint8Array(randomBytes(32)) }] }),
      store: new MemoryReplayStore(),
    });
    const codec = createRequestStateCodec({ key: new Uint8Array(randomBytes(32)) });
    const tool = gate.tool({
      name: 'delete_record',
      description: 'Delete a record.',
      args: z.object({ id: z.string() }),
      form: { confirm: confirm({ title: 'Yes' }) },
      ask: async ({ args }) => ({ message: `Delete ${args.id}?`, view: args.id }),
      perform: async ({ view }) => textResult(`Deleted ${view}: ${records.delete(view)}.`),
    });
    const factory = () => {
      const server = new McpServer(
        { name: 'hand-wired', version: '0' },
        { requestState: { verify: codec.verify } },
      );
      server.server.onerror = onerror;
      server.registerTool(
        tool.name,
        { description: tool.description, inputSchema: z.object({ id: z.string() }) },
        async (args, ctx) => {
          const envelope: Record<string, unknown> = { ...ctx.mcpReq.envelope };
          const result = await tool.handler(args, {
            principal: ctx.http?.authInfo?.clientId ?? '',
            method: 'tools/call',
            name: tool.name,
            arguments: args,
            capabilities: envelope[CLIENT_CAPABILITIES_META_KEY] as never,
            inputResponses: ctx.mcpReq.inputResponses,
            requestState: ctx.mcpReq.requestState<string>(),
          });
          return result as never;
        },
      );
      return server;
    };
    return { records, handler: serveBothEras(factory) };
  }

  it('the verify hook rejects the ticket before the tool runs, and refusals come back as isError', async () => {
    const errors: string[] = [];
    const { records, handler } = handWired((e) => errors.push(e.message));
    const client = await officialClient(fetchFor(handler), 'alice', 'modern', () => ({
      action: 'accept',
      content: { confirm: true },
    }));
    const asked = await callTool(client, { name: 'delete_record', arguments: { id: 'r1' } });
    expect(asked.result?.resultType).toBe('input_required');
    const retry = await callTool(client, {
      name: 'delete_record',
      arguments: { id: 'r1' },
      requestState: asked.result?.requestState,
      inputResponses: accept,
    });
    expect(retry.error).toEqual({
      code: -32602,
      message: 'Invalid or expired requestState',
      data: { reason: 'invalid_request_state' },
    });
    expect(errors).toContain('requestState verification rejected tools/call: mac');
    expect(records.has('r1')).toBe(true);
    // And the gate's -32021 is turned into a tool result by McpServer's tools/call handler.
    const bare = await officialClient(fetchFor(handler), 'alice', 'modern', undefined);
    const refused = await callTool(bare, { name: 'delete_record', arguments: { id: 'r1' } });
    expect(refused.error).toBeUndefined();
    expect(refused.result?.isError).toBe(true);
    await client.close();
    await bare.close();
    await handler.close();
  });
});

describe.each(['modern', 'legacy'] as const)('with registerGatedTool on %s', (era) => {
  const person: Person = ({ message }) => {
    const content: Record<string, string | boolean> =
      message === 'Which color?' ? { color: 'teal' } : { confirm: true };
    return { action: 'accept', content };
  };

  it('the codec tool and the gated tool both complete, each with its own state', async () => {
    const s = shared(['r1']);
    const { handler } = instance(s);
    const client = await officialClient(fetchFor(handler), 'alice', era, person);
    expect(textOf(await client.callTool({ name: 'pick_color', arguments: {} }))).toBe(
      'color: teal',
    );
    expect(textOf(await client.callTool({ name: 'delete_record', arguments: { id: 'r1' } }))).toBe(
      'Deleted r1.',
    );
    expect(textOf(await client.callTool({ name: 'pick_color', arguments: {} }))).toBe(
      'color: teal',
    );
    await client.close();
    await handler.close();
  });

  it("neither accepts the other's state", async () => {
    const s = shared(['r1']);
    const { handler } = instance(s);
    const modern = await officialClient(fetchFor(handler), 'alice', 'modern', person);
    const client =
      era === 'modern' ? modern : await officialClient(fetchFor(handler), 'alice', era, person);
    const ticket = (await callTool(modern, { name: 'delete_record', arguments: { id: 'r1' } }))
      .result?.requestState;
    const codecState = (await callTool(modern, { name: 'pick_color', arguments: {} })).result
      ?.requestState;
    expect(typeof ticket).toBe('string');
    expect(typeof codecState).toBe('string');
    // The gate's ticket at the codec tool: the server's verify hook refuses it.
    const atCodec = await callTool(client, {
      name: 'pick_color',
      arguments: {},
      requestState: ticket,
      inputResponses: { color: { action: 'accept', content: { color: 'red' } } },
    });
    expect(atCodec.error?.message).toBe('Invalid or expired requestState');
    // The codec's state at the gated tool: the gate refuses it.
    const atGate = await callTool(client, {
      name: 'delete_record',
      arguments: { id: 'r1' },
      requestState: codecState,
      inputResponses: accept,
    });
    expect(atGate.error?.code).toBe(-32602);
    // A 2025-era session takes no retry fields at all (its answers come through elicitation/create).
    expect(atGate.error?.message).toMatch(
      era === 'modern' ? /requestState rejected/ : /belong to protocol 2026-07-28/,
    );
    expect(s.records.has('r1')).toBe(true);
    await modern.close();
    await client.close();
    await handler.close();
  });
});
