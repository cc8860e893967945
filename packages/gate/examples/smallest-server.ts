import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfirmationGate, confirm, withoutAsking } from '@mrtr/gate';
import { createMcpHttpServer } from '@mrtr/node';
import { MemoryReplayStore } from '@mrtr/replay';
import { createMcpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { z } from 'zod';

const { MRTR_SECRET = '', TOKEN = '' } = process.env; // secret: `openssl rand -base64 32`
const records = new Set(['rec-1', 'rec-2']);
const gate = new ConfirmationGate({
  sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: MRTR_SECRET }] }), // throws if < 32 bytes
  store: new MemoryReplayStore(), // one process; @mrtr/replay-postgres or -redis for several
});
const deleteRecord = gate.tool({
  name: 'delete_record',
  description: 'Delete a record; a person confirms first.',
  args: z.object({ id: z.string().regex(/^[\w-]{1,64}$/) }), // an id: nothing a database can't keep
  form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
  async ask({ args }) {
    if (!records.has(args.id)) return withoutAsking(textResult('No such record.'));
    return { message: `Delete record ${args.id}? This cannot be undone.`, view: args.id };
  },
  perform: async ({ view }) => textResult(`Deleted ${view}: ${records.delete(view)}.`),
});
// Constant time: `===` returns at the first differing character, so timing would leak the token.
const digest = (text: string) => createHash('sha256').update(text).digest();
const sameToken = (given: string | null, expected: string) =>
  timingSafeEqual(digest(given ?? ''), digest(expected));
const authenticate = (r: Request) =>
  TOKEN && sameToken(r.headers.get('authorization'), `Bearer ${TOKEN}`)
    ? { id: 'alice' }
    : undefined;
const serverInfo = { name: 'records', version: '1.0.0' };
const endpoint = createMcpEndpoint({ serverInfo, tools: [deleteRecord], authenticate });
createMcpHttpServer(endpoint).listen(Number(process.env.PORT) || 3000, '127.0.0.1');
