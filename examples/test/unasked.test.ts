/**
 * The README's "Why not just the SDK" claim, on `@modelcontextprotocol/server`
 * 2.4.0: a tool written in the single-question pattern of the SDK's
 * `input_required` guide (act once `acceptedContent(...)` holds, else
 * `inputRequired(...)`) obeys an answer the client sends in its first call,
 * without being asked; the gate asks that same call and deletes nothing.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  acceptedContent,
  type CallToolResult,
  createMcpHandler,
  type InputRequiredResult,
  inputRequired,
  McpServer,
} from '@modelcontextprotocol/server';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callDelete, type Running, start, writeReadmeQuickStart } from './run.js';

const unasked = {
  inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
};

describe('an answer the client sends without being asked', () => {
  const records = new Set(['rec-1']);
  const token = 'unasked-test-token';
  let http: Server | undefined;
  afterAll(() => http?.close());

  it('is obeyed by a tool in the SDK guide pattern (2.4.0)', async () => {
    const Confirmation = z.object({ confirm: z.boolean() });
    const factory = () => {
      const server = new McpServer({ name: 'sdk-pattern', version: '0' });
      server.registerTool(
        'delete_record',
        { description: 'Delete a record.', inputSchema: z.object({ id: z.string() }) },
        async ({ id }, ctx): Promise<CallToolResult | InputRequiredResult> => {
          const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', Confirmation);
          if (answer?.confirm !== true)
            return inputRequired({
              inputRequests: {
                confirm: inputRequired.elicit({
                  message: `Delete ${id}?`,
                  requestedSchema: Confirmation,
                }),
              },
            });
          records.delete(id);
          return { content: [{ type: 'text', text: `Deleted ${id}.` }] };
        },
      );
      return server;
    };
    const mcp = toNodeHandler(createMcpHandler(factory, { legacy: 'reject' }));
    http = createServer((req: IncomingMessage & { auth?: AuthInfo }, res) => {
      req.auth = { token, clientId: 'alice', scopes: [] };
      void mcp(req, res);
    });
    await new Promise<void>((r) => http?.listen(0, '127.0.0.1', r));
    const address = http.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const server: Running = { url: `http://127.0.0.1:${port}/mcp`, token, stop() {} };

    const result = (await callDelete(server, 1, unasked)).result as Record<string, unknown>;
    expect(result.resultType ?? 'complete').toBe('complete');
    expect(result.content).toEqual([{ type: 'text', text: 'Deleted rec-1.' }]);
    expect(records.has('rec-1')).toBe(false);
  });

  it('is not read by the gate: the call is asked, nothing is deleted', async () => {
    const remove = writeReadmeQuickStart('.readme-quickstart-unasked.ts');
    const server = await start('.readme-quickstart-unasked.ts').finally(remove);
    try {
      const result = (await callDelete(server, 1, unasked)).result as Record<string, unknown>;
      expect(result.resultType).toBe('input_required');
      // Still there: the normal flow deletes it.
      const again = (await callDelete(server, 2)).result as Record<string, unknown>;
      expect(again.resultType).toBe('input_required');
    } finally {
      server.stop();
    }
  });
});
