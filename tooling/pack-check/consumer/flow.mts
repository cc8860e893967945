// A consumer of the packed tarballs, outside the workspace. This file is
// compiled twice, as flow.mts (ES module) and as a copy flow.cts (CommonJS),
// so both builds of every package it imports run end to end.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Answerer, McpClient } from '@mrtr/client';
import { ConfirmationGate, confirm, withoutAsking } from '@mrtr/gate';
import { toNodeHandler } from '@mrtr/node';
import { MemoryReplayStore } from '@mrtr/replay';
import { FAIL_FAST_REDIS_OPTIONS, RedisReplayStore } from '@mrtr/replay-redis';
import { createMcpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { Redis } from 'ioredis';
import { z } from 'zod';

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`consumer check failed: ${what}`);
}

/**
 * One gated delete over HTTP: round 1 must be an InputRequiredResult (the
 * answerer is asked), round 2 accepts and completes; the record is gone.
 */
export async function gatedDelete(label: string): Promise<void> {
  // The README's pattern on the app's own ioredis (5 here): it must type-check and construct.
  const redis = new Redis('redis://127.0.0.1:1', { ...FAIL_FAST_REDIS_OPTIONS, lazyConnect: true });
  new RedisReplayStore(redis, { durability: 'volatile' });
  redis.disconnect();

  const records = new Set(['rec-1']);
  const secret = process.env.MRTR_SECRET;
  if (!secret) throw new Error('set MRTR_SECRET (make one with `openssl rand -base64 32`)');
  const gate = new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret }] }),
    store: new MemoryReplayStore(),
  });
  const deleteRecord = gate.tool({
    name: 'delete_record',
    description: 'Delete a record; a person confirms first.',
    args: z.object({ id: z.string() }),
    form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
    async ask({ args }) {
      if (!records.has(args.id)) return withoutAsking(textResult('No such record.'));
      return { message: `Delete record ${args.id}?`, view: args.id };
    },
    perform: async ({ view }) => textResult(`Deleted ${view}: ${records.delete(view)}.`),
  });
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 'records', version: '1.0.0' },
    tools: [deleteRecord],
    authenticate: (r) =>
      r.headers.get('authorization') === 'Bearer t' ? { id: 'alice' } : undefined,
  });
  const server = createServer(toNodeHandler(endpoint));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const asked: string[] = [];
    // The test plays the person: it accepts what it is shown.
    const person: Answerer = {
      form: async (q) => {
        asked.push(q.message);
        return { action: 'accept', content: { confirm: true } };
      },
    };
    const client = new McpClient({
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { authorization: 'Bearer t' },
      answerer: person,
    });
    const { result, rounds } = await client.callTool('delete_record', { id: 'rec-1' });
    check(
      asked.length === 1 && asked[0] === 'Delete record rec-1?',
      `round 1 asked ${JSON.stringify(asked)}`,
    );
    check(rounds === 2, `two rounds, got ${rounds}`);
    const text = JSON.stringify(result);
    check(text.includes('Deleted rec-1: true.'), `round 2 completed: ${text}`);
    check(!records.has('rec-1'), 'the record is gone');
    console.log(`${label}: round 1 input_required, round 2 accepted and complete`);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
