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

const START = Date.UTC(2026, 11, 6, 12, 0, 0, 250);

/**
 * A gate on a clock the test moves, over a record that is always there and
 * always asks the same question (it comes back under the same id), and the
 * one "yes" to it, already carried out once.
 * @param storeAheadMs how far the store's clock runs ahead of the sealer's.
 */
async function deletedOnce(maxSkewSeconds: number, storeAheadMs: number) {
  const clock = { ms: START, readMs: 0 };
  const now = () => clock.ms;
  const sealer = new TicketSealer({
    keys: [{ kid: 'k1', secret: 'b'.repeat(32) }],
    maxSkewSeconds,
    now,
  });
  const store = new MemoryReplayStore({ now: () => clock.ms + storeAheadMs });
  const gate = new ConfirmationGate({ sealer, store });
  const deleted: string[] = [];
  const spec: GateSpec<string, void> = {
    key: 'confirm',
    prepare: async () => {
      clock.ms += clock.readMs; // reading the target again takes this long
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
  expect(await gate.run(yes, spec)).toMatchObject({ content: [{ text: 'Deleted rec-1.' }] });
  const exp = Math.floor(START / 1000) + sealer.ttlSeconds;
  /** The last millisecond the ticket opens on the sealer's clock. */
  const lastOpen = (exp + maxSkewSeconds + 1) * 1000 - 1;
  const resend = () => gate.run(yes, spec);
  return { clock, deleted, lastOpen, resend };
}

it.each([
  0, 30,
])('with a skew of %i s, a re-send in the ticket’s last second replays; after it the ticket is refused', async (maxSkewSeconds) => {
  // Each clock within the skew of true time: the store's ahead by it, the sealer's behind by it.
  const t = await deletedOnce(maxSkewSeconds, 2 * maxSkewSeconds * 1000);
  for (const at of [t.lastOpen - 999, t.lastOpen - 500, t.lastOpen]) {
    t.clock.ms = at;
    expect(await t.resend()).toMatchObject({ content: [{ text: 'Deleted rec-1.' }] });
  }
  t.clock.ms = t.lastOpen + 1;
  await expect(t.resend()).rejects.toBeInstanceOf(McpError);
  expect(t.deleted).toEqual(['rec-1']);
});

it('a re-send opened in the last millisecond whose work before the claim outlasts the record is refused, not run', async () => {
  const t = await deletedOnce(0, 0);
  t.clock.ms = t.lastOpen; // the ticket opens
  t.clock.readMs = 5_000; // and the record is gone before the claim
  await expect(t.resend()).rejects.toMatchObject({ data: { reason: 'ticket_expired' } });
  expect(t.deleted).toEqual(['rec-1']);
});
