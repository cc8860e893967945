/**
 * A confirmation carried out once stays carried out until its ticket no longer
 * opens: the replay record must outlive every millisecond the ticket opens,
 * even for a target that comes back reading the same (an id that recurs).
 */
import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { McpError, textResult } from '@mrtr/wire';
import { expect, it } from 'vitest';
import { ConfirmationGate, type GateRequest, type GateSpec } from '../src/index.js';

it.each([
  0, 30,
])('with a skew of %i s, a re-send in the ticket’s last second replays; after it the ticket is refused', async (maxSkewSeconds) => {
  const clock = { ms: Date.UTC(2026, 11, 6, 12, 0, 0, 250) };
  const now = () => clock.ms;
  const sealer = new TicketSealer({
    keys: [{ kid: 'k1', secret: 'b'.repeat(32) }],
    maxSkewSeconds,
    now,
  });
  // The store's clock runs ahead of the sealer's by the whole tolerated skew.
  const store = new MemoryReplayStore({ now: () => clock.ms + maxSkewSeconds * 1000 });
  const gate = new ConfirmationGate({ sealer, store });
  const deleted: string[] = [];
  const spec: GateSpec<string, void> = {
    key: 'confirm',
    // Always there, always the same question: the record is created again under the same id.
    prepare: async () => ({ view: 'rec-1' }),
    question: () => ({
      message: 'Delete rec-1?',
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
    }),
    consents: (content) => content.confirm === true,
    perform: async ({ view }) => {
      deleted.push(view);
      return textResult(`Deleted ${view}.`);
    },
  };
  const request = (extra: Partial<GateRequest> = {}): GateRequest => ({
    principal: 'alice',
    method: 'tools/call',
    name: 'delete_record',
    arguments: { id: 'rec-1' },
    capabilities: { elicitation: { form: {} } },
    inputResponses: undefined,
    requestState: undefined,
    ...extra,
  });
  const asked = (await gate.run(request(), spec)) as { requestState: string };
  const yes = request({
    requestState: asked.requestState,
    inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
  });
  expect(await gate.run(yes, spec)).toMatchObject({ content: [{ text: 'Deleted rec-1.' }] });
  const exp = Math.floor(clock.ms / 1000) + sealer.ttlSeconds;
  const lastOpen = (exp + maxSkewSeconds + 1) * 1000 - 1;
  for (const at of [lastOpen - 999, lastOpen - 500, lastOpen]) {
    clock.ms = at;
    expect(await gate.run(yes, spec)).toMatchObject({ content: [{ text: 'Deleted rec-1.' }] });
  }
  clock.ms = lastOpen + 1;
  await expect(gate.run(yes, spec)).rejects.toBeInstanceOf(McpError);
  expect(deleted).toEqual(['rec-1']);
});

it('a re-send opened in the last millisecond whose work before the claim outlasts the record is refused, not run', async () => {
  const clock = { ms: Date.UTC(2026, 11, 6, 12, 0, 0, 250) };
  const now = () => clock.ms;
  const sealer = new TicketSealer({
    keys: [{ kid: 'k1', secret: 'c'.repeat(32) }],
    maxSkewSeconds: 0,
    now,
  });
  const gate = new ConfirmationGate({ sealer, store: new MemoryReplayStore({ now }) });
  const deleted: string[] = [];
  let slowRead = 0;
  const spec: GateSpec<string, void> = {
    key: 'confirm',
    prepare: async () => {
      clock.ms += slowRead; // the target read again takes this long
      return { view: 'rec-1' };
    },
    question: () => ({
      message: 'Delete rec-1?',
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
    }),
    consents: (content) => content.confirm === true,
    perform: async ({ view }) => {
      deleted.push(view);
      return textResult(`Deleted ${view}.`);
    },
  };
  const request = (extra: Partial<GateRequest> = {}): GateRequest => ({
    principal: 'alice',
    method: 'tools/call',
    name: 'delete_record',
    arguments: { id: 'rec-1' },
    capabilities: { elicitation: { form: {} } },
    inputResponses: undefined,
    requestState: undefined,
    ...extra,
  });
  const asked = (await gate.run(request(), spec)) as { requestState: string };
  const yes = request({
    requestState: asked.requestState,
    inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
  });
  await gate.run(yes, spec);
  const exp = Math.floor(Date.UTC(2026, 11, 6, 12, 0, 0, 250) / 1000) + sealer.ttlSeconds;
  clock.ms = (exp + 1) * 1000 - 1; // the ticket's last millisecond: it opens
  slowRead = 5_000; // and the record is gone before the claim
  await expect(gate.run(yes, spec)).rejects.toMatchObject({ data: { reason: 'ticket_expired' } });
  expect(deleted).toEqual(['rec-1']);
});
