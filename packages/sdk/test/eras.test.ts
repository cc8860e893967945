/**
 * The scenarios `@mrtr/server` passes, on an SDK server with a gated tool,
 * driven by the official client (`@modelcontextprotocol/client` 2.4) on
 * 2026-07-28 and on the 2025-era default (`versionNegotiation` legacy, an
 * `elicitation/create` handler). Two server instances share the records,
 * the ticket key and the replay store; tickets presented by hand come from
 * a 2026-07-28 round 1 on instance A.
 */

import type { Client } from '@modelcontextprotocol/client';
import type { GateAuditEvent } from '@mrtr/gate';
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  callTool,
  fetchFor,
  instance,
  officialClient,
  outcome,
  type Person,
  shared,
  textOf,
  Wire,
} from './harness.js';

const TOOL = 'delete_record';
const yes = { action: 'accept', content: { confirm: true } } as const;
const accept = { confirm: yes };

describe.each(['modern', 'legacy'] as const)('the official client on %s', (era) => {
  let s: ReturnType<typeof shared>;
  let a: ReturnType<typeof instance>;
  let b: ReturnType<typeof instance>;
  let auditA: GateAuditEvent[];
  let auditB: GateAuditEvent[];
  const clients: Client[] = [];

  beforeEach(() => {
    s = shared(['r1', 'r2', 'r3']);
    auditA = [];
    auditB = [];
    a = instance(s, auditA);
    b = instance(s, auditB);
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await a.handler.close();
    await b.handler.close();
  });

  async function client(
    on: 'a' | 'b',
    person: Person | undefined,
    who = 'alice',
    wire?: Wire,
    clientEra: 'modern' | 'legacy' = era,
  ) {
    const c = await officialClient(
      fetchFor((on === 'a' ? a : b).handler, wire),
      who,
      clientEra,
      person,
    );
    clients.push(c);
    return c;
  }

  /** Round 1 for `id` on instance A by alice on 2026-07-28: the ticket. */
  async function ticketFor(id: string): Promise<string> {
    const modern = await client('a', () => yes, 'alice', undefined, 'modern');
    const asked = await callTool(modern, { name: TOOL, arguments: { id } });
    expect(asked.result?.resultType).toBe('input_required');
    return asked.result?.requestState as string;
  }

  it('asks the person, then deletes what they confirmed', async () => {
    const asked: string[] = [];
    const wire = new Wire();
    const person: Person = ({ message }) => {
      asked.push(message);
      return yes;
    };
    const c = await client('a', person, 'alice', wire);
    const result = await c.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(textOf(result)).toBe('Deleted r1.');
    expect(result.isError).toBe(false);
    expect(asked).toEqual(['Delete record r1? This cannot be undone.']);
    expect([...s.records.keys()]).toEqual(['r2', 'r3']);
    const completed = auditA.find((e) => e.outcome === 'completed');
    expect(completed?.principal).toBe('alice');
    expect(completed?.client?.name).toBe('sdk-bridge-test');
    // On 2026-07-28 the ticket travels as requestState; on a 2025-era session it never leaves the server.
    const traffic = [...wire.sent, ...(await wire.received())].join('\n');
    expect(traffic.includes('"requestState"')).toBe(era === 'modern');
  });

  it.each([
    false,
    true,
  ])('a replay store that fails (outcome unknown: %s): the advice fits the era', async (outcomeUnknown) => {
    s.store.once = async () => {
      throw new ReplayStoreUnavailableError('connection refused', { outcomeUnknown });
    };
    const c = await client('a', () => yes);
    const failed = await outcome(c.callTool({ name: TOOL, arguments: { id: 'r1' } }));
    const message = failed.error?.message ?? '';
    expect(failed.error?.code).toBe(-32603);
    expect(message).toMatch(
      outcomeUnknown
        ? /^The store that keeps each confirmation single-use stopped answering while the operation was being committed: it was carried out once or not at all\. /
        : /^This request changed nothing: the store that keeps each confirmation single-use is unavailable\. /,
    );
    if (era === 'legacy') {
      // On a session the ticket never left the server: a new call asks afresh.
      expect(message).not.toMatch(/same confirmation again before|Retry the same confirmation/);
      expect(message).toMatch(
        outcomeUnknown
          ? /On this session the same confirmation cannot be sent again, and calling the tool again asks afresh: look at the target first\.$/
          : /On this session the same confirmation cannot be sent again: call the tool again later, and you will be asked afresh\.$/,
      );
    } else expect(message).toMatch(/the same confirmation/);
    expect(s.records.has('r1')).toBe(true);
  });

  it('a decline deletes nothing and uses the confirmation up', async () => {
    const wire = new Wire();
    const c = await client('a', () => ({ action: 'decline' }), 'alice', wire);
    const result = await c.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toMatch(/declined/i);
    expect(s.records.has('r1')).toBe(true);
    expect(auditA.map((e) => e.outcome)).toEqual(['asked', 'declined']);
    if (era === 'modern') {
      // The declined ticket, accepted afterwards on the other instance, deletes nothing.
      const [ticket] = await wire.tickets();
      const late = await callTool(await client('b', () => yes), {
        name: TOOL,
        arguments: { id: 'r1' },
        requestState: ticket,
        inputResponses: accept,
      });
      expect(late.result?.isError).toBe(true);
      expect(textOf(late.result)).toMatch(/already used/);
      expect(s.records.has('r1')).toBe(true);
    }
  });

  it('a cancel deletes nothing; the person can be asked again', async () => {
    const answers = [{ action: 'cancel' } as const, yes];
    const c = await client('a', () => answers.shift() ?? { action: 'cancel' });
    const cancelled = await c.callTool({ name: TOOL, arguments: { id: 'r1' } });
    expect(cancelled.isError).toBe(false);
    expect(textOf(cancelled)).toMatch(/changed nothing|nothing was changed/i);
    expect(s.records.has('r1')).toBe(true);
    expect(auditA.map((e) => e.outcome)).toEqual(['asked', 'cancelled']);
    expect(textOf(await c.callTool({ name: TOOL, arguments: { id: 'r1' } }))).toBe('Deleted r1.');
    expect(s.records.has('r1')).toBe(false);
  });

  it('without form elicitation the call is refused with -32021 and nothing is asked', async () => {
    const c = await client('a', undefined);
    const refused = await callTool(c, { name: TOOL, arguments: { id: 'r1' } });
    expect(refused.error?.code).toBe(-32021);
    expect(refused.error?.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
    expect(s.records.has('r1')).toBe(true);
    expect(auditA.map((e) => [e.outcome, e.reason])).toEqual([['refused', 'capability_missing']]);
  });

  it('a forged first shot is refused with -32602', async () => {
    const ticket = await ticketFor('r1');
    const middle = Math.floor(ticket.length / 2);
    const tampered = `${ticket.slice(0, middle)}${ticket[middle] === 'A' ? 'B' : 'A'}${ticket.slice(middle + 1)}`;
    const c = await client('b', () => yes);
    for (const requestState of [tampered, 'v1.k1.made-up', 'not a ticket']) {
      const forged = await callTool(c, {
        name: TOOL,
        arguments: { id: 'r1' },
        requestState,
        inputResponses: accept,
      });
      expect(forged.error?.code, requestState).toBe(-32602);
    }
    expect(s.records.has('r1')).toBe(true);
    expect(auditB.every((e) => e.outcome === 'refused')).toBe(true);
  });

  it('a replayed confirmation deletes once, on either instance', async () => {
    const ticket = await ticketFor('r1');
    const modern = await client('a', () => yes, 'alice', undefined, 'modern');
    const first = await callTool(modern, {
      name: TOOL,
      arguments: { id: 'r1' },
      requestState: ticket,
      inputResponses: accept,
    });
    expect(textOf(first.result)).toBe('Deleted r1.');
    s.records.set('r1', 'a new record under the old id');
    // The same confirmation again, from this era's client on the other instance: the recorded
    // outcome on 2026-07-28; a 2025-era session takes no requestState at all (-32602).
    const replay = await callTool(await client('b', () => yes), {
      name: TOOL,
      arguments: { id: 'r1' },
      requestState: ticket,
      inputResponses: accept,
    });
    expect(s.records.get('r1')).toBe('a new record under the old id');
    if (era === 'modern') {
      expect(textOf(replay.result)).toBe('Deleted r1.');
      expect(auditB.map((e) => e.outcome)).toEqual(['accepted', 'replayed']);
    } else {
      expect(replay.error?.code).toBe(-32602);
      expect(replay.error?.data).toEqual({ reason: 'retry_fields_on_session' });
      expect(auditB).toEqual([]);
    }
  });

  it('a confirmation presented with other arguments is refused with -32602', async () => {
    const ticket = await ticketFor('r1');
    const swapped = await callTool(await client('b', () => yes), {
      name: TOOL,
      arguments: { id: 'r2' },
      requestState: ticket,
      inputResponses: accept,
    });
    expect(swapped.error?.code).toBe(-32602);
    expect(swapped.error?.message).toMatch(
      era === 'modern' ? /requestState rejected/ : /belong to protocol 2026-07-28/,
    );
    expect([...s.records.keys()]).toEqual(['r1', 'r2', 'r3']);
  });

  it.runIf(era === 'legacy')(
    'a 2025-era session refuses answers sent with the call itself: only elicitation/create asks',
    async () => {
      const asked: string[] = [];
      const c = await client('a', ({ message }) => {
        asked.push(message);
        return yes;
      });
      const unasked = await callTool(c, {
        name: TOOL,
        arguments: { id: 'r1' },
        inputResponses: accept,
      });
      expect(unasked.error?.code).toBe(-32602);
      expect([asked, s.records.has('r1'), auditA]).toEqual([[], true, []]);
    },
  );

  it("another principal presenting alice's confirmation is refused with -32602", async () => {
    const ticket = await ticketFor('r1');
    const stolen = await callTool(await client('b', () => yes, 'bob'), {
      name: TOOL,
      arguments: { id: 'r1' },
      requestState: ticket,
      inputResponses: accept,
    });
    expect(stolen.error?.code).toBe(-32602);
    expect(s.records.has('r1')).toBe(true);
    if (era === 'modern') {
      expect(stolen.error?.message).toMatch(/another caller/);
      expect(auditB.map((e) => [e.principal, e.outcome])).toEqual([['bob', 'refused']]);
    } else expect(stolen.error?.data).toEqual({ reason: 'retry_fields_on_session' });
  });
});

describe('both eras on one pair of instances', () => {
  it('a 2026-07-28 round 1 on A is answered on B; a 2025-era session on B deletes another', async () => {
    const s = shared(['r1', 'r2']);
    const a = instance(s);
    const b = instance(s);
    const modernA = await officialClient(fetchFor(a.handler), 'alice', 'modern', () => yes);
    const modernB = await officialClient(fetchFor(b.handler), 'alice', 'modern', () => yes);
    const legacyB = await officialClient(fetchFor(b.handler), 'alice', 'legacy', () => yes);
    const asked = await callTool(modernA, { name: TOOL, arguments: { id: 'r1' } });
    const done = await callTool(modernB, {
      name: TOOL,
      arguments: { id: 'r1' },
      requestState: asked.result?.requestState,
      inputResponses: accept,
    });
    expect(textOf(done.result)).toBe('Deleted r1.');
    expect(textOf(await legacyB.callTool({ name: TOOL, arguments: { id: 'r2' } }))).toBe(
      'Deleted r2.',
    );
    expect(s.records.size).toBe(0);
    expect(b.handler.sessions).toBe(1);
    for (const c of [modernA, modernB, legacyB]) await c.close();
    await a.handler.close();
    await b.handler.close();
  });
});

describe("the official client's versionNegotiation auto", () => {
  it('probes server/discover and confirms on 2026-07-28', async () => {
    const s = shared(['r1']);
    const { handler } = instance(s);
    const wire = new Wire();
    const client = await officialClient(fetchFor(handler, wire), 'alice', 'auto', () => yes);
    expect(textOf(await client.callTool({ name: TOOL, arguments: { id: 'r1' } }))).toBe(
      'Deleted r1.',
    );
    expect(wire.sent.map((body) => JSON.parse(body).method)).toEqual([
      'server/discover',
      'tools/call',
      'tools/call',
    ]);
    expect(s.records.has('r1')).toBe(false);
    await client.close();
    await handler.close();
  });
});
