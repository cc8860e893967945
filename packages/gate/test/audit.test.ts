import { digestJson } from '@mrtr/digest';
import {
  type Json,
  type OnceRequest,
  type OnceResult,
  type ReplayStore,
  ReplayStoreUnavailableError,
} from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import {
  type AuditWriter,
  ConfirmationGate,
  type GateAuditEvent,
  type GateRequest,
  type GateSpec,
  StaleTargetError,
} from '../src/index.js';

const secret = 's3cret-master-key-of-at-least-32-bytes!';

/** What a transaction of {@link TxStore} collects; applied to `effects` only on commit. */
type Tx = { writes: string[] };

/**
 * A replay store with transactions, like the PostgreSQL one: the action's
 * writes to `tx` take effect only when it returns; a throw discards them and
 * the claim. `down` makes it fail before the action; `loseCommit` after it.
 */
class TxStore implements ReplayStore<Tx> {
  readonly entries = new Map<string, { digest: string; outcome: string }>();
  readonly effects: string[] = [];
  down = false;
  loseCommit = false;
  /** Commit, then lose COMMIT's answer: the store cannot tell the caller whether it committed. */
  commitUnanswered = false;

  async once<T extends Json>(
    onceRequest: OnceRequest,
    action: (tx: Tx) => Promise<T>,
  ): Promise<OnceResult<T>> {
    if (this.down) throw new ReplayStoreUnavailableError('connection refused');
    const entry = this.entries.get(onceRequest.nonce);
    if (entry)
      return entry.digest === onceRequest.requestDigest
        ? { status: 'replayed', outcome: JSON.parse(entry.outcome) as T }
        : { status: 'refused', reason: 'used' };
    const tx: Tx = { writes: [] };
    const outcome = await action(tx);
    if (this.loseCommit) throw new ReplayStoreUnavailableError('connection lost at COMMIT');
    this.entries.set(onceRequest.nonce, {
      digest: onceRequest.requestDigest,
      outcome: JSON.stringify(outcome),
    });
    this.effects.push(...tx.writes);
    if (this.commitUnanswered)
      throw new ReplayStoreUnavailableError('connection lost at COMMIT', { outcomeUnknown: true });
    return { status: 'performed', outcome };
  }
}

/** A sink that fails on the outcomes in `failOn`. */
function recorder(failOn: Set<string> = new Set()) {
  const events: GateAuditEvent[] = [];
  const sink = (e: GateAuditEvent) => {
    if (failOn.has(e.outcome)) throw new Error(`disk full at ${e.outcome}`);
    events.push(e);
  };
  return { events, sink, failOn };
}

/** A transactional sink: writes into the store's transaction when it gets one. */
function txRecorder(failOn: Set<string> = new Set()) {
  const events: { event: GateAuditEvent; inTx: boolean }[] = [];
  const sink: AuditWriter<Tx> = {
    transactional: true,
    write(event, tx) {
      if (failOn.has(event.outcome)) throw new Error(`insert failed at ${event.outcome}`);
      if (tx) tx.writes.push(`audit:${event.outcome}`);
      events.push({ event, inTx: tx !== undefined });
    },
  };
  return { events, sink, failOn };
}

const args = { serviceId: 'svc_8f21c', name: 'api-prod', replicas: 3.0 };

function setup() {
  const store = new TxStore();
  const plain = recorder();
  const inTx = txRecorder();
  const audit = [plain.sink, inTx.sink];
  let stale = false;
  let clock = 1_800_000_000_000;
  const gate = new ConfirmationGate<Tx>({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret }] }),
    store,
    audit,
    now: () => clock++,
  });
  const spec: GateSpec<{ name: string }, Tx> = {
    key: 'confirm_delete',
    prepare: async () => ({ view: { name: 'api-prod' } }),
    question: ({ view }, notice) => ({
      message: `${notice ? `${notice} ` : ''}Delete ${view.name} (svc_8f21c)? Type the service name to confirm.`,
      requestedSchema: {
        type: 'object',
        properties: { serviceName: { type: 'string', title: 'Service name' } },
        required: ['serviceName'],
      },
    }),
    check: (content, { view }) =>
      content.serviceName === view.name ? undefined : 'The name did not match.',
    consents: () => true, // typing the name (check) is the consent
    perform: async ({ tx }) => {
      if (stale) throw new StaleTargetError('changed');
      tx.writes.push('delete:svc_8f21c');
      return textResult('Deleted api-prod (svc_8f21c).');
    },
  };
  let id = 0;
  const request = (extra: Partial<GateRequest> = {}): GateRequest => ({
    principal: { id: 'user_5f2a' },
    method: 'tools/call',
    name: 'delete_service',
    arguments: args,
    capabilities: { elicitation: {} },
    inputResponses: undefined,
    requestState: undefined,
    requestId: ++id,
    meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'agent-cli', version: '1.4.0', icons: [] },
    },
    ...extra,
  });
  const ask = async () => {
    const first = await gate.run(request(), spec);
    return (first as { requestState: string }).requestState;
  };
  const answer = (requestState: string, response: Record<string, unknown>) =>
    gate.run(request({ requestState, inputResponses: { confirm_delete: response } }), spec);
  const accept = (requestState: string, serviceName = 'api-prod') =>
    answer(requestState, { action: 'accept', content: { serviceName } });
  return {
    gate,
    spec,
    store,
    plain,
    inTx,
    request,
    ask,
    answer,
    accept,
    setStale: (v: boolean) => {
      stale = v;
    },
  };
}

const outcomes = (events: { outcome: string }[]) => events.map((e) => e.outcome);

describe('audit records', () => {
  it('keep at most 256 code units, well-formed, of the clientInfo and a string id the caller chose', async () => {
    const t = setup();
    const huge = 'n'.repeat(450_000);
    await t.gate.run(
      t.request({
        requestId: `id-${'9'.repeat(100_000)}`,
        meta: {
          'io.modelcontextprotocol/clientInfo': {
            name: huge,
            version: 'v\ud800',
            title: `${'t'.repeat(254)}\u{1f600}tail`,
          },
        },
      }),
      t.spec,
    );
    const [asked] = t.plain.events;
    expect(asked?.client?.name).toBe(`${'n'.repeat(255)}…`);
    expect(asked?.client?.version).toBe('v\ufffd');
    // Cut between code points: never half of the emoji's surrogate pair.
    expect(asked?.client?.title).toBe(`${'t'.repeat(254)}…`);
    expect(String(asked?.requestId)).toHaveLength(256);
    expect(String(asked?.requestId).endsWith('…')).toBe(true);
    expect(JSON.stringify(asked).length).toBeLessThan(4_000);
  });

  it('keep U+0000 out (a jsonb column refuses it) and cut a resource URI the caller chose', async () => {
    const t = setup();
    const uri = `notes://x/${'u'.repeat(20_000)}`;
    await t.gate.run(
      t.request({
        method: 'resources/read',
        name: uri,
        requestId: 'id\u0000x',
        meta: { 'io.modelcontextprotocol/clientInfo': { name: 'evil\u0000client', version: '1' } },
      }),
      t.spec,
    );
    const [asked] = t.plain.events;
    expect(asked?.client?.name).toBe('evil\ufffdclient');
    expect(asked?.requestId).toBe('id\ufffdx');
    expect(asked?.name).toBe(`${uri.slice(0, 255)}…`);
    expect(asked?.operation).toBe(
      `resources/read:${uri.slice(0, 255 - 'resources/read:'.length)}…`,
    );
    expect(JSON.stringify(asked)).not.toContain('\\u0000');
    // An answer's content with U+0000 in a value or a member name is recorded storable too.
    const u = setup();
    const ticket = await u.ask();
    await u.answer(ticket, {
      action: 'accept',
      content: { serviceName: 'api\u0000prod', 'a\u0000': 'x' },
    });
    const answered = u.plain.events.find((e) => e.answer !== undefined);
    expect(JSON.stringify(answered?.answer)).not.toContain('\\u0000');
    expect(answered?.answer?.content).toMatchObject({ serviceName: 'api\ufffdprod' });
  });

  it('a completed operation: asked, accepted, completed, with everything the record must hold', async () => {
    const t = setup();
    const ticket = await t.ask();
    const done = await t.accept(ticket);
    expect(done).toMatchObject({ isError: false });
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);

    const [asked, accepted, completed] = t.plain.events;
    expect(outcomes(t.plain.events)).toEqual(['asked', 'accepted', 'completed']);
    const common = {
      principal: 'user_5f2a',
      client: { name: 'agent-cli', version: '1.4.0' },
      method: 'tools/call',
      name: 'delete_service',
      operation: 'tools/call:delete_service',
      argumentsDigest: digestJson(args),
      phase: 'confirm',
      key: 'confirm_delete',
    };
    for (const e of t.plain.events) expect(e).toMatchObject(common);
    // canonical arguments (RFC 8785: keys sorted, 3.0 is 3) whose digest is the recorded one
    expect(JSON.stringify(asked?.arguments)).toBe(
      '{"name":"api-prod","replicas":3,"serviceId":"svc_8f21c"}',
    );
    expect(digestJson(asked?.arguments)).toBe(asked?.argumentsDigest);
    expect(asked).toMatchObject({
      requestId: 1,
      question: 'Delete api-prod (svc_8f21c)? Type the service name to confirm.',
      requestedSchema: { properties: { serviceName: { title: 'Service name' } } },
    });
    expect(asked?.answer).toBeUndefined();
    const answer = { action: 'accept', content: { serviceName: 'api-prod' } };
    expect(accepted).toMatchObject({ requestId: 2, nonce: asked?.nonce, answer });
    expect(completed).toMatchObject({ requestId: 2, nonce: asked?.nonce, answer, isError: false });
    expect(completed?.question).toBe(asked?.question);
    for (const e of t.plain.events) expect(e.receivedAt).toBeLessThanOrEqual(e.at);
    expect(accepted?.at).toBeLessThan(completed?.at as number);

    // Neither the ticket nor the master secret appears anywhere in any record.
    const everything = JSON.stringify([...t.plain.events, ...t.inTx.events]);
    expect(everything).not.toContain(ticket);
    expect(everything).not.toContain(ticket.slice(10, 40));
    expect(everything).not.toContain(secret);
  });

  it('the transactional sink writes completed inside the store transaction, the others after the commit, the same record', async () => {
    const t = setup();
    await t.accept(await t.ask());
    expect(t.inTx.events.map((e) => [e.event.outcome, e.inTx])).toEqual([
      ['asked', false],
      ['accepted', false],
      ['completed', true],
    ]);
    expect(t.inTx.events[2]?.event).toEqual(t.plain.events[2]);
  });

  it('a declined operation: asked, declined in the transaction; the nonce is used up', async () => {
    const t = setup();
    const ticket = await t.ask();
    const declined = await t.answer(ticket, { action: 'decline' });
    expect(declined).toMatchObject({ isError: false });
    expect(t.store.effects).toEqual(['audit:declined']);
    expect(outcomes(t.plain.events)).toEqual(['asked', 'declined']);
    expect(t.plain.events[1]).toMatchObject({
      answer: { action: 'decline' },
      nonce: t.plain.events[0]?.nonce,
      question: t.plain.events[0]?.question,
      isError: false,
    });
    expect(t.inTx.events[1]).toMatchObject({ inTx: true, event: { outcome: 'declined' } });
    // The same decline again converges; an accept of the used ticket is refused and deletes nothing.
    await t.answer(ticket, { action: 'decline' });
    const refused = await t.accept(ticket);
    expect(refused).toMatchObject({ isError: true });
    expect(t.store.effects).toEqual(['audit:declined']);
    expect(outcomes(t.plain.events)).toEqual([
      'asked',
      'declined',
      'replayed',
      'accepted',
      'refused',
    ]);
    expect(t.plain.events[4]).toMatchObject({ reason: 'nonce_used' });
  });

  it('an accept without consent is declined', async () => {
    const t = setup();
    t.spec.consents = () => false;
    await t.accept(await t.ask());
    expect(outcomes(t.plain.events)).toEqual(['asked', 'declined']);
    expect(t.plain.events[1]?.answer).toEqual({
      action: 'accept',
      content: { serviceName: 'api-prod' },
    });
    expect(t.store.effects).toEqual(['audit:declined']);
  });

  it('a cancelled operation: asked, cancelled; nothing used up, the same ticket still completes', async () => {
    const t = setup();
    const ticket = await t.ask();
    await t.answer(ticket, { action: 'cancel' });
    expect(outcomes(t.plain.events)).toEqual(['asked', 'cancelled']);
    expect(t.plain.events[1]).toMatchObject({ answer: { action: 'cancel' }, isError: false });
    expect(t.store.effects).toEqual([]);
    await t.accept(ticket);
    expect(outcomes(t.plain.events).slice(2)).toEqual(['accepted', 'completed']);
  });

  it('a cancel never reads the store, so its default text speaks of that request only', async () => {
    const t = setup();
    const ticket = await t.ask();
    await t.accept(ticket);
    const late = await t.answer(ticket, { action: 'cancel' });
    // After the deletion, "Nothing was changed" would read as "not deleted".
    expect(late).toMatchObject({
      resultType: 'complete',
      isError: false,
      content: [{ type: 'text', text: 'Cancelled. This request changed nothing.' }],
    });
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
  });

  it('asking again records why, the notice as sent, and the answer that was rejected', async () => {
    const t = setup();
    const ticket = await t.ask();
    await t.accept(ticket, 'api-prd');
    await t.answer(ticket, { action: 'maybe' });
    expect(outcomes(t.plain.events)).toEqual(['asked', 'asked_again', 'asked_again']);
    expect(t.plain.events[1]).toMatchObject({
      reason: 'check_failed',
      question:
        'The name did not match. Delete api-prod (svc_8f21c)? Type the service name to confirm.',
      answer: { action: 'accept', content: { serviceName: 'api-prd' } },
    });
    expect(t.plain.events[2]).toMatchObject({ reason: 'no_answer' });
    expect(t.plain.events[2]?.answer).toBeUndefined();
  });

  it('a stale target: asked_again (stale_target), then asked under a new nonce', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.setStale(true);
    await t.accept(ticket);
    const [asked, , again, reasked] = t.plain.events;
    expect(outcomes(t.plain.events)).toEqual(['asked', 'accepted', 'asked_again', 'asked']);
    expect(again).toMatchObject({ reason: 'stale_target', nonce: asked?.nonce });
    expect(reasked?.nonce).not.toBe(asked?.nonce);
    expect(t.store.effects).toEqual([]);
  });

  it('refusals: no form capability, a broken ticket, nothing to ask about', async () => {
    const t = setup();
    await expect(t.gate.run(t.request({ capabilities: {} }), t.spec)).rejects.toMatchObject({
      code: -32021,
    });
    const ticket = await t.ask();
    // The second-to-last character: all six of its bits are data whatever the length, so the
    // ticket stays canonical base64url and fails its MAC (the last one's low bits may be padding).
    const broken = `${ticket.slice(0, -2)}${ticket.at(-2) === 'A' ? 'B' : 'A'}${ticket.at(-1)}`;
    await expect(t.accept(broken)).rejects.toMatchObject({ code: -32602 });
    t.spec.prepare = async () => ({
      result: textResult('No service svc_8f21c.', { isError: true }),
    });
    await t.gate.run(t.request(), t.spec);
    expect(t.plain.events.map((e) => [e.outcome, e.reason])).toEqual([
      ['refused', 'capability_missing'],
      ['asked', undefined],
      ['refused', 'ticket_mac'],
      ['refused', 'not_asked'],
    ]);
    expect(t.plain.events[2]?.nonce).toBeUndefined();
    expect(t.plain.events[3]?.isError).toBe(true);
  });
});

describe('a failing sink fails closed', () => {
  it('a sink that cannot write accepted stops the claim and the mutation; a retry later completes', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.plain.failOn.add('accepted');
    const error = await t.accept(ticket).catch((e) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^This request changed nothing/),
    });
    expect(t.store.effects).toEqual([]);
    expect(t.store.entries.size).toBe(0);
    // The other sink saw the attempt and its failure.
    expect(t.inTx.events.map((e) => [e.event.outcome, e.event.reason])).toEqual([
      ['asked', undefined],
      ['accepted', undefined],
      ['failed', 'audit_sink_failed'],
    ]);
    t.plain.failOn.clear();
    await t.accept(ticket);
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
  });

  it('a transactional sink that cannot write completed rolls back the claim and the mutation with it', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.inTx.failOn.add('completed');
    const error = await t.accept(ticket).catch((e) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^This request changed nothing/),
    });
    expect(error.cause?.name).toBe('AuditSinkError');
    expect(t.store.effects).toEqual([]);
    expect(t.store.entries.size).toBe(0);
    expect(outcomes(t.plain.events)).toEqual(['asked', 'accepted', 'failed']);
    t.inTx.failOn.clear();
    await t.accept(ticket);
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
  });

  it('a sink that cannot write completed after the commit: the error says it was carried out, a retry replays', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.plain.failOn.add('completed');
    const error = await t.accept(ticket).catch((e) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/was carried out/),
    });
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
    t.plain.failOn.clear();
    const again = await t.accept(ticket);
    expect(again).toMatchObject({ content: [{ text: 'Deleted api-prod (svc_8f21c).' }] });
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
    expect(outcomes(t.plain.events)).toEqual(['asked', 'accepted', 'accepted', 'replayed']);
  });

  it('a re-send whose replayed record cannot be written does not say that nothing was changed', async () => {
    const t = setup();
    const ticket = await t.ask();
    await t.accept(ticket);
    t.plain.failOn.add('replayed');
    const error = await t.accept(ticket).catch((e) => e);
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/^An earlier request carried out this confirmation/);
    expect(error.message).not.toMatch(/changed nothing/);
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
    t.plain.failOn.clear();
    expect(await t.accept(ticket)).toMatchObject({
      content: [{ text: 'Deleted api-prod (svc_8f21c).' }],
    });
  });

  it('a decline, or its re-send, whose record cannot be written says the decline was recorded', async () => {
    const t = setup();
    const ticket = await t.ask();
    await t.answer(ticket, { action: 'decline' });
    t.plain.failOn.add('replayed');
    const error = await t.answer(ticket, { action: 'decline' }).catch((e) => e);
    expect(error.message).toMatch(/^The decline was recorded/);
    expect(error.message).not.toMatch(/carried out/);
    const other = setup();
    const asked = await other.ask();
    other.plain.failOn.add('declined');
    const first = await other.answer(asked, { action: 'decline' }).catch((e) => e);
    expect(first.message).toMatch(/^The decline was recorded/);
    expect(other.store.effects).toEqual(['audit:declined']);
  });

  it('a decline of a ticket an accept used up says that this request changed nothing', async () => {
    const t = setup();
    const ticket = await t.ask();
    await t.accept(ticket);
    const late = await t.answer(ticket, { action: 'decline' });
    expect(late).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/already used; this request changed nothing/) }],
    });
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
  });

  it('a sink that cannot write asked: no question goes out', async () => {
    const t = setup();
    t.plain.failOn.add('asked');
    await expect(t.gate.run(t.request(), t.spec)).rejects.toMatchObject({ code: -32603 });
    expect(t.inTx.events.map((e) => e.event.outcome)).toEqual(['asked', 'failed']);
  });
});

describe('an unavailable replay store', () => {
  it('answers -32603 saying nothing was changed, records failed, and keeps the store error as cause', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.store.down = true;
    const error = await t.accept(ticket).catch((e) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^This request changed nothing.*Retry the same confirmation/),
    });
    expect(error.cause).toBeInstanceOf(ReplayStoreUnavailableError);
    expect(JSON.stringify(error)).not.toContain('connection refused');
    expect(t.plain.events.at(-1)).toMatchObject({
      outcome: 'failed',
      reason: 'ReplayStoreUnavailableError',
      answer: { action: 'accept' },
    });
    t.store.down = false;
    await t.accept(ticket);
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
  });

  it('a decline whose COMMIT answer was lost, or whose store is down, never says the operation may have run', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.store.commitUnanswered = true;
    const lost = await t.answer(ticket, { action: 'decline' }).catch((e) => e);
    expect(lost.code).toBe(-32603);
    expect(lost.message).toMatch(/while this decline was being recorded: it may or may not/);
    expect(lost.message).not.toMatch(/carried out once or not at all|Nothing was carried out/);
    t.store.commitUnanswered = false;
    const other = await t.ask();
    t.store.down = true;
    const down = await t.answer(other, { action: 'decline' }).catch((e) => e);
    expect(down.message).toMatch(
      /^This request changed nothing: .* this decline could not be recorded/,
    );
    expect(down.message).not.toMatch(/runs at most once|Nothing was carried out/);
    t.store.down = false;
    // The same decline again converges; nothing was deleted either time.
    expect(await t.answer(ticket, { action: 'decline' })).toMatchObject({ resultType: 'complete' });
    expect(await t.answer(other, { action: 'decline' })).toMatchObject({ resultType: 'complete' });
    expect(t.store.effects.filter((e) => e.startsWith('delete:'))).toEqual([]);
  });

  it('a COMMIT whose answer was lost says it ran once or not at all; the same confirmation then tells which', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.store.commitUnanswered = true;
    const error = await t.accept(ticket).catch((e) => e);
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/carried out once or not at all/);
    // What a re-send can tell holds only while the ticket opens: said, so that none is sent too late.
    expect(error.message).toContain('before it expires');
    expect(error.message).toContain('look at the target before calling the tool again');
    expect(error.message).not.toMatch(/This request changed nothing/);
    // The failed record must not read as "nothing took effect": a completed one may stand.
    expect(t.plain.events.at(-1)).toMatchObject({ outcome: 'failed', reason: 'outcome_unknown' });
    t.store.commitUnanswered = false;
    const again = await t.accept(ticket);
    expect(again).toMatchObject({ resultType: 'complete' });
    expect(t.store.effects).toEqual(['delete:svc_8f21c', 'audit:completed']);
  });

  it('a commit lost after the in-transaction record: failed is recorded outside, nothing took effect', async () => {
    const t = setup();
    const ticket = await t.ask();
    t.store.loseCommit = true;
    await expect(t.accept(ticket)).rejects.toMatchObject({ code: -32603 });
    expect(t.store.effects).toEqual([]);
    expect(outcomes(t.plain.events)).toEqual(['asked', 'accepted', 'failed']);
    expect(t.plain.events[2]?.reason).toBe('ReplayStoreUnavailableError');
  });
});
