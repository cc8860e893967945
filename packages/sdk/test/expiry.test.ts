/**
 * A 2025-era session keeps the person's question open on the call, through
 * the SDK's shim, while the gate's ticket can still be answered: no longer
 * than `ConfirmationGate.ticketAcceptanceMs` (the sealer's ttl plus its
 * skew; the shim's `roundTimeoutMs` stays an upper bound). A confirmation
 * that expired (the wait ended, or the answer came late) ends in a complete,
 * non-error result that says nothing changed, never the gate's `-32602`
 * about a `requestState` the 2025-era client never saw.
 */

import type { Client } from '@modelcontextprotocol/client';
import type { GateAuditEvent } from '@mrtr/gate';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  fetchFor,
  type InstanceOptions,
  instance,
  officialClient,
  type Person,
  shared,
  textOf,
  Wire,
} from './harness.js';

const yes = { action: 'accept', content: { confirm: true } } as const;
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

async function setUp(
  options: InstanceOptions,
  person: Person,
  audit: GateAuditEvent[] = [],
  wire?: Wire,
) {
  const s = shared(['r1']);
  const { handler } = instance(s, audit, options);
  closing.push(handler);
  const client: Client = await officialClient(fetchFor(handler, wire), 'alice', 'legacy', person);
  closing.push(client);
  return { s, client };
}

/** `promise`'s value, or `'still waiting'` once `ms` went by (a bound far above the expected time). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'still waiting'>((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const EXPIRED =
  'The confirmation expired before it was answered: nothing was changed. Call delete_record again to be asked again.';

describe('a 2025-era confirmation whose ticket expires', () => {
  it('is withdrawn when the ticket ends (ttl + skew), not after roundTimeoutMs (600 s)', async () => {
    const asked: string[] = [];
    const wire = new Wire();
    // Never answered: the person walked away.
    const { s, client } = await setUp(
      { ticket: { ttlSeconds: 3, maxSkewSeconds: 0 } }, // 3 s: room for the question to arrive on a loaded host
      (p) => {
        asked.push(p.message);
        return new Promise(() => {});
      },
      [],
      wire,
    );
    const started = Date.now();
    const done = await within(
      callTool(client, { name: 'delete_record', arguments: { id: 'r1' } }),
      30_000,
    );
    expect(done).not.toBe('still waiting');
    expect(asked).toEqual(['Delete record r1? This cannot be undone.']);
    if (done === 'still waiting') return;
    expect(done.error).toBeUndefined();
    expect(done.result).toMatchObject({ isError: false });
    expect(textOf(done.result)).toBe(EXPIRED);
    // No sooner than the ticket's window (3 s, counted from before it was minted).
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    expect(s.records.has('r1')).toBe(true);
    // The question was withdrawn on the call's stream (the SDK cancels the elicitation/create).
    const streamed = (await wire.received()).join('\n');
    expect(streamed).toContain('"method":"elicitation/create"');
    expect(streamed).toContain('"method":"notifications/cancelled"');
  });

  it('keeps roundTimeoutMs as the upper bound when it is sooner', async () => {
    const { s, client } = await setUp(
      { server: { inputRequired: { roundTimeoutMs: 200 } } },
      () => new Promise(() => {}),
    );
    const done = await within(
      callTool(client, { name: 'delete_record', arguments: { id: 'r1' } }),
      30_000,
    );
    if (done === 'still waiting') throw new Error('the shim did not time out');
    // The SDK shim's own answer to its timeout, as before.
    expect(done.result).toMatchObject({ isError: true });
    expect(textOf(done.result)).toMatch(/timed out/i);
    expect(s.records.has('r1')).toBe(true);
  });

  it('answered after the ticket expired: a complete result saying nothing changed, not -32602', async () => {
    let offset = 0;
    let answers = 0;
    const audit: GateAuditEvent[] = [];
    const { s, client } = await setUp(
      { ticket: { now: () => Date.now() + offset } },
      () => {
        // The first answer comes 400 s later on the sealer's clock: past 300 s + 30 s of skew.
        offset = ++answers === 1 ? 400_000 : 0;
        return yes;
      },
      audit,
    );
    const done = await callTool(client, { name: 'delete_record', arguments: { id: 'r1' } });
    expect(done.error).toBeUndefined();
    expect(done.result).toMatchObject({ isError: false });
    expect(textOf(done.result)).toBe(EXPIRED);
    expect(textOf(done.result)).not.toContain('requestState');
    expect(s.records.has('r1')).toBe(true);
    // The gate still recorded why: the ticket had expired.
    expect(audit.map((e) => [e.outcome, e.reason])).toContainEqual(['refused', 'ticket_expired']);
    // Called again, it asks again, and an answer in time deletes.
    offset = 0;
    const again = await callTool(client, { name: 'delete_record', arguments: { id: 'r1' } });
    expect(again.result).toMatchObject({ isError: false });
    expect(textOf(again.result)).toBe('Deleted r1.');
    expect(s.records.has('r1')).toBe(false);
  });
});
