import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ApprovalBinding,
  type ApprovalChannel,
  type ApprovalDecision,
  ConfirmationGate,
  choose,
  type GateAuditEvent,
  type GateRequest,
  MAX_APPROVAL_FIELD_LENGTH,
  MAX_APPROVAL_MESSAGE_LENGTH,
  type PendingApproval,
  typeToConfirm,
} from '../src/index.js';

/** An approval channel in memory, whose decisions the test sets as the page would. */
class FakeChannel implements ApprovalChannel {
  readonly opened = new Map<string, PendingApproval>();
  readonly decided = new Map<string, ApprovalDecision>();
  openFails = false;
  async open(approval: PendingApproval): Promise<string> {
    if (this.openFails)
      throw Object.assign(new Error('approval store unreachable'), {
        name: 'ApprovalStoreUnavailableError',
      });
    this.opened.set(approval.id, approval);
    return this.url(approval.id);
  }
  url(id: string): string {
    return `http://127.0.0.1:3000/approve/${id}`;
  }
  async decision(id: string, binding: ApprovalBinding): Promise<ApprovalDecision> {
    const a = this.opened.get(id);
    if (!a) return { status: 'unknown' };
    for (const k of [
      'nonce',
      'principal',
      'operation',
      'argumentsDigest',
      'questionDigest',
    ] as const)
      if (a[k] !== binding[k]) return { status: 'unknown' };
    return this.decided.get(id) ?? { status: 'pending' };
  }
  readonly withdrawn: [string, ApprovalBinding][] = [];
  withdrawFails = false;
  async withdraw(id: string, binding: ApprovalBinding): Promise<void> {
    if (this.withdrawFails) throw new Error('approval store unreachable');
    this.withdrawn.push([id, binding]);
    const now = this.decided.get(id)?.status;
    if (now === undefined || now === 'approved')
      this.decided.set(id, { status: 'denied', decidedAt: Date.now() });
  }
}

/** A `delete_volume {volumeId: vol_1}` call by alice from a client that declares URL elicitation. */
const request = (extra: Partial<GateRequest> = {}): GateRequest => ({
  principal: 'alice',
  method: 'tools/call',
  name: 'delete_volume',
  arguments: { volumeId: 'vol_1' },
  capabilities: { elicitation: { url: {} } },
  inputResponses: undefined,
  requestState: undefined,
  ...extra,
});

/** A gate over `channel` with a fresh memory store, its records pushed to `events`. */
function volumeGate(channel: FakeChannel, events: GateAuditEvent[] = []) {
  return new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: 'u'.repeat(32) }] }),
    store: new MemoryReplayStore(),
    approvals: channel,
    audit: (e) => void events.push(e),
  });
}

/** What every `delete_volume` of these tests declares besides `ask`, `level` and `perform`. */
const VOLUME_TOOL = {
  name: 'delete_volume',
  description: 'Destroy a volume.',
  args: z.object({ volumeId: z.string() }),
  form: {
    target: choose({ title: 'Which copy' }),
    volumeId: typeToConfirm({ title: 'Volume id' }),
  },
};

type Level = 'url' | 'form-or-url' | 'presence';
function setup(level: Level | (() => Level) = 'url') {
  const channel = new FakeChannel();
  const events: GateAuditEvent[] = [];
  const done: string[] = [];
  const tool = volumeGate(channel, events).tool({
    ...VOLUME_TOOL,
    ask: async ({ args }) => ({
      message: `Destroy volume ${args.volumeId} <script>alert(1)</script>? Its data cannot be recovered.`,
      view: args.volumeId,
      choices: { target: [{ value: 'primary', label: 'Primary' }] },
      expect: { volumeId: args.volumeId },
    }),
    level,
    perform: async ({ view, confirmation, answer }) => {
      done.push(`${view}:${confirmation.level}:${answer.target}`);
      return textResult(`Destroyed ${view}.`);
    },
  });
  const call = (extra: Partial<GateRequest> = {}) =>
    tool.handler({ volumeId: 'vol_1' }, request(extra));
  return { channel, events, done, call };
}

type Asked = {
  requestState: string;
  inputRequests: { confirm: { params: { mode: string; url: string; message: string } } };
};

describe('URL mode', () => {
  it('asks with a URL on the server origin that carries only an opaque id, and records the pending approval', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const params = asked.inputRequests.confirm.params;
    expect(params.mode).toBe('url');
    const id = params.url.split('/').at(-1) as string;
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(params.url).not.toContain('alice');
    expect(params.url).not.toContain('vol_1');
    const pending = t.channel.opened.get(id) as PendingApproval;
    expect(pending).toMatchObject({
      principal: 'alice',
      operation: 'tools/call:delete_volume',
      level: 'url',
    });
    expect(pending.message).toBe(params.message);
    // The page asks only what is not consent: the choice, not the typed id.
    expect(Object.keys(pending.requestedSchema?.properties ?? {})).toEqual(['target']);
    expect(asked.requestState.length).toBeLessThanOrEqual(240);
  });

  it('before a decision, a retry gets the same URL and ticket again; approved, it performs once', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const accept = { confirm: { action: 'accept' } };
    const waiting = (await t.call({
      requestState: asked.requestState,
      inputResponses: accept,
    })) as unknown as Asked;
    expect(waiting.requestState).toBe(asked.requestState);
    expect(waiting.inputRequests.confirm.params.url).toBe(asked.inputRequests.confirm.params.url);
    expect(t.done).toEqual([]);
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.decided.set(id, {
      status: 'approved',
      via: 'url',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: accept }),
    ).toMatchObject({ isError: false });
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: accept }),
    ).toMatchObject({ isError: false });
    expect(t.done).toEqual(['vol_1:url:primary']);
    expect(t.events.filter((e) => e.outcome === 'completed')).toHaveLength(1);
    expect(t.events.find((e) => e.outcome === 'completed')?.confirmation).toBe('url');
  });

  it('denied on the page: a complete refusal that uses the ticket up', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.decided.set(id, { status: 'denied', decidedAt: Date.now() });
    const accept = { confirm: { action: 'accept' } };
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: accept }),
    ).toMatchObject({ isError: false });
    t.channel.decided.set(id, {
      status: 'approved',
      via: 'url',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: accept }),
    ).toMatchObject({ isError: true });
    expect(t.done).toEqual([]);
  });

  it("the client's decline uses the ticket up and withdraws the approval, so the page cannot approve it", async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    const declined = await t.call({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'decline' } },
    });
    expect(declined).toMatchObject({ isError: false });
    expect(t.channel.withdrawn).toEqual([[id, expect.objectContaining({ principal: 'alice' })]]);
    const binding = t.channel.withdrawn[0]?.[1] as ApprovalBinding;
    expect(binding).toEqual({
      nonce: t.channel.opened.get(id)?.nonce,
      principal: 'alice',
      operation: 'tools/call:delete_volume',
      argumentsDigest: t.channel.opened.get(id)?.argumentsDigest,
      questionDigest: t.channel.opened.get(id)?.questionDigest,
    });
    // An accept afterwards reads the withdrawal as a refusal: the recorded decline, nothing run.
    const accept = { confirm: { action: 'accept' } };
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: accept }),
    ).toMatchObject({ isError: false });
    expect(t.done).toEqual([]);
    // A cancel leaves the approval open: the ticket is not used up.
    const again = (await t.call()) as unknown as Asked;
    await t.call({
      requestState: again.requestState,
      inputResponses: { confirm: { action: 'cancel' } },
    });
    expect(t.channel.withdrawn).toHaveLength(1);
  });

  it('a question put afresh under another level withdraws the old approval and spends its ticket', async () => {
    let level: Level = 'url';
    const t = setup(() => level);
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.decided.set(id, {
      status: 'approved',
      decidedAt: Date.now(),
      via: 'url',
      content: { target: 'primary', volumeId: 'vol_1' },
    });
    level = 'presence';
    const fresh = (await t.call({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept' } },
    })) as unknown as Asked;
    expect(fresh.requestState).not.toBe(asked.requestState);
    expect(t.channel.withdrawn.map(([w]) => w)).toEqual([id]);
    level = 'url';
    // The old approval was given under the old level: it cannot run once the level is back.
    const late = await t.call({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept' } },
    });
    expect(late).toMatchObject({ isError: true });
    expect(t.done).toEqual([]);
  });

  it('a withdrawal the channel failed is tried again in the background until it lands', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.withdrawFails = true;
    const declined = await t.call({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'decline' } },
    });
    expect(declined).toMatchObject({ isError: false });
    expect(t.channel.withdrawn).toEqual([]);
    // The store is back: the retry after 1 s closes the approval, so the page cannot record it.
    t.channel.withdrawFails = false;
    for (let i = 0; i < 30 && t.channel.withdrawn.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.channel.withdrawn).toEqual([[id, expect.objectContaining({ principal: 'alice' })]]);
  });

  it('a decision status the gate does not know (an older channel passing "withdrawn" on) runs nothing', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.decided.set(id, { status: 'withdrawn', decidedAt: Date.now() } as never);
    const accept = { confirm: { action: 'accept' } };
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: accept }),
    ).toMatchObject({ resultType: 'complete', isError: false });
    expect(t.done).toEqual([]);
  });

  it('approved on the page, then declined in the client: nothing runs, and the approval is withdrawn', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.decided.set(id, {
      status: 'approved',
      via: 'url',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });
    const decline = { confirm: { action: 'decline' } };
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: decline }),
    ).toMatchObject({ isError: false });
    expect(t.channel.withdrawn.map(([w]) => w)).toEqual([id]);
    const accept = { confirm: { action: 'accept' } };
    await t.call({ requestState: asked.requestState, inputResponses: accept });
    expect(t.done).toEqual([]);
  });

  it('a decline after the approval ran is refused and withdraws nothing', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.decided.set(id, {
      status: 'approved',
      via: 'url',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });
    const accept = { confirm: { action: 'accept' } };
    await t.call({ requestState: asked.requestState, inputResponses: accept });
    expect(t.done).toEqual(['vol_1:url:primary']);
    const late = await t.call({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'decline' } },
    });
    expect(late).toMatchObject({ isError: true });
    expect(t.channel.withdrawn).toEqual([]);
    expect(t.channel.decided.get(id)?.status).toBe('approved');
  });

  it('a decline stands when the channel cannot withdraw the approval', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    t.channel.withdrawFails = true;
    const decline = { confirm: { action: 'decline' } };
    const first = await t.call({ requestState: asked.requestState, inputResponses: decline });
    expect(first).toMatchObject({ isError: false });
    expect(t.events.filter((e) => e.outcome === 'declined')).toHaveLength(1);
    expect(await t.call({ requestState: asked.requestState, inputResponses: decline })).toEqual(
      first,
    );
    expect(t.done).toEqual([]);
  });

  it('a level raised between the rounds asks the same question again, saying that the kind of confirmation changed', async () => {
    let level: Level = 'form-or-url';
    const t = setup(() => level);
    const both = { elicitation: { form: {}, url: {} } };
    const asked = (await t.call({ capabilities: both })) as unknown as {
      requestState: string;
      inputRequests: { confirm: { params: { mode?: string; message: string } } };
    };
    expect(asked.inputRequests.confirm.params.mode ?? 'form').toBe('form');
    level = 'presence';
    const again = (await t.call({
      capabilities: both,
      requestState: asked.requestState,
      inputResponses: {
        confirm: { action: 'accept', content: { target: 'primary', volumeId: 'vol_1' } },
      },
    })) as unknown as Asked;
    expect(again.inputRequests.confirm.params.mode).toBe('url');
    expect(again.inputRequests.confirm.params.message).toMatch(
      /needs another kind of confirmation/,
    );
    expect(again.inputRequests.confirm.params.message).not.toMatch(/has changed/);
    expect(t.done).toEqual([]);
  });

  it('a client that declares only form gets -32021 naming URL elicitation', async () => {
    const t = setup();
    await expect(t.call({ capabilities: { elicitation: { form: {} } } })).rejects.toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
  });

  it('form-or-url: a form for a client that can show one, the page for a URL-only client', async () => {
    const t = setup('form-or-url');
    const form = (await t.call({ capabilities: { elicitation: {} } })) as unknown as Asked;
    expect(form.inputRequests.confirm.params.mode).toBe('form');
    const url = (await t.call({ capabilities: { elicitation: { url: {} } } })) as unknown as Asked;
    expect(url.inputRequests.confirm.params.mode).toBe('url');
  });

  it('presence: an approval by the button alone is not enough; a passkey approval is', async () => {
    const t = setup('presence');
    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    expect(t.channel.opened.get(id)?.level).toBe('presence');
    const accept = { confirm: { action: 'accept' } };
    t.channel.decided.set(id, {
      status: 'approved',
      via: 'url',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });
    expect(
      (await t.call({ requestState: asked.requestState, inputResponses: accept })).resultType,
    ).toBe('input_required');
    t.channel.decided.set(id, {
      status: 'approved',
      via: 'passkey',
      credentialId: 'cred-1',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });
    expect(
      await t.call({ requestState: asked.requestState, inputResponses: accept }),
    ).toMatchObject({ isError: false });
    expect(t.done).toEqual(['vol_1:presence:primary']);
  });

  it('an approval id that is not bound to this ticket is refused with -32602', async () => {
    const t = setup();
    const asked = (await t.call()) as unknown as Asked;
    t.channel.opened.clear();
    await expect(
      t.call({
        requestState: asked.requestState,
        inputResponses: { confirm: { action: 'accept' } },
      }),
    ).rejects.toMatchObject({ code: -32602, data: { reason: 'approval_unknown' } });
  });

  it('an approval channel that fails, asking or answering, is -32603 "nothing was changed" with its cause', async () => {
    const t = setup();
    const down = Object.assign(new Error('Redis approval store failed: no reply within 2000 ms'), {
      name: 'ApprovalStoreUnavailableError',
    });
    const open = t.channel.open;
    t.channel.open = async () => {
      throw down;
    };
    const asking = await t.call().catch((e: unknown) => e);
    expect(asking).toMatchObject({ code: -32603 });
    expect((asking as Error).message).toMatch(
      /^This request changed nothing: the store of approvals/,
    );
    // The channel's error, whose own cause is the store's.
    expect((asking as Error).cause).toMatchObject({ name: 'ApprovalChannelError', cause: down });
    t.channel.open = open;

    const asked = (await t.call()) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    t.channel.decided.set(id, {
      status: 'approved',
      via: 'url',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });
    const decision = t.channel.decision;
    t.channel.decision = async () => {
      throw down;
    };
    const retry = {
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept' as const } },
    };
    await expect(t.call(retry)).rejects.toMatchObject({ code: -32603 });
    expect(t.done).toEqual([]);
    expect(t.events.at(-1)).toMatchObject({ outcome: 'failed', reason: 'approval_unavailable' });
    // Back again: the same confirmation runs, once.
    t.channel.decision = decision;
    expect(await t.call(retry)).toMatchObject({ isError: false });
    expect(t.done).toEqual(['vol_1:url:primary']);
  });

  it('a channel that refuses an approval (no outage) keeps its own error, not "unavailable"', async () => {
    const t = setup();
    const refused = new TypeError('approval.message must be at most 65536 characters');
    t.channel.open = async () => {
      throw refused;
    };
    await expect(t.call()).rejects.toBe(refused);
    expect(t.events.at(-1)).toMatchObject({ outcome: 'failed', reason: 'TypeError' });
  });

  // helper-152 F1: a question quoting long arguments reached the store, whose TypeError was a 500.
  it('a question longer than the page keeps is not asked: an isError result, nothing opened or minted', async () => {
    for (const [label, ask] of [
      ['message', (id: string) => ({ message: `Destroy ${id}?`, choices: ['primary'] })],
      ['fields', (id: string) => ({ message: 'Destroy?', choices: [id, 'primary'] })],
    ] as const) {
      const channel = new FakeChannel();
      const events: GateAuditEvent[] = [];
      const tool = volumeGate(channel, events).tool({
        ...VOLUME_TOOL,
        ask: async ({ args }) => {
          const q = ask(args.volumeId);
          return {
            message: q.message,
            view: args.volumeId,
            choices: { target: q.choices.map((value) => ({ value, label: value })) },
            expect: { volumeId: args.volumeId },
          };
        },
        level: 'url',
        perform: async () => textResult('Destroyed.'),
      });
      const long = 'v'.repeat(MAX_APPROVAL_MESSAGE_LENGTH);
      const out = await tool.handler(
        { volumeId: long },
        request({ arguments: { volumeId: long } }),
      );
      expect(out, label).toMatchObject({ isError: true });
      expect(JSON.stringify(out), label).toMatch(
        /longer than the approval page shows \(65536 characters\)/,
      );
      expect(channel.opened.size, label).toBe(0);
      expect(events, label).toEqual([
        expect.objectContaining({ outcome: 'refused', reason: 'question_too_long', isError: true }),
      ]);
      // Just within the bound, the question is asked (a choice's value is its label too).
      const fits = 'v'.repeat((MAX_APPROVAL_MESSAGE_LENGTH - 400) / (label === 'fields' ? 2 : 1));
      const asked = await tool.handler(
        { volumeId: fits },
        request({ arguments: { volumeId: fits } }),
      );
      expect(asked, label).toMatchObject({ resultType: 'input_required' });
      expect(channel.opened.size, label).toBe(1);
    }
  });
});

// helper-156 M3: a principal the approval store refuses met its TypeError (HTTP 500);
// helper-163 L1: in form mode the ticket sealer's (a lone surrogate, a long one).
describe('a principal a ticket or an approval cannot bind', () => {
  it('is an isError result, nothing opened, in URL mode and in form mode', async () => {
    for (const principal of [
      'p'.repeat(MAX_APPROVAL_FIELD_LENGTH + 1),
      'al\u0000ice',
      'al\ud800ice',
    ]) {
      const t = setup();
      const out = await t.call({ principal });
      expect(out, principal.slice(0, 8)).toMatchObject({ isError: true });
      expect(JSON.stringify(out)).toMatch(
        /a confirmation cannot be bound to the identity this call was made under/,
      );
      expect(t.channel.opened.size).toBe(0);
      expect(t.events.at(-1)).toMatchObject({
        outcome: 'refused',
        reason: 'principal_unrecordable',
      });
    }
    const fits = setup();
    const asked = await fits.call({ principal: 'p'.repeat(MAX_APPROVAL_FIELD_LENGTH) });
    expect(asked).toMatchObject({ resultType: 'input_required' });
    for (const [principal, recorded] of [
      ['p'.repeat(MAX_APPROVAL_FIELD_LENGTH + 1), `${'p'.repeat(255)}…`],
      ['al\ud800ice', 'al\ufffdice'],
      ['', ''],
    ] as const) {
      const form = setup('form-or-url');
      const formAsked = await form.call({
        principal,
        capabilities: { elicitation: { form: {} } },
      });
      expect(formAsked).toMatchObject({ isError: true });
      expect(form.events.at(-1)).toMatchObject({
        outcome: 'refused',
        reason: 'principal_unrecordable',
        principal: recorded,
      });
    }
  });
});

// helper-156 L1: the gate's own notice pushed a question that fits over the bound.
describe('URL mode, a changed question that fits only without the notice', () => {
  it('is asked without the notice rather than refused', async () => {
    const channel = new FakeChannel();
    let long = false;
    const tool = volumeGate(channel).tool({
      ...VOLUME_TOOL,
      ask: async ({ args }) => ({
        message: long ? 'x'.repeat(MAX_APPROVAL_MESSAGE_LENGTH - 40) : `Destroy ${args.volumeId}?`,
        view: long,
        choices: { target: [{ value: 'primary', label: 'Primary' }] },
        expect: { volumeId: args.volumeId },
      }),
      level: 'url',
      perform: async () => textResult('Destroyed.'),
    });
    const call = (extra: Partial<GateRequest> = {}) =>
      tool.handler({ volumeId: 'vol_1' }, request(extra));
    const asked = (await call()) as unknown as Asked;
    long = true;
    const again = (await call({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept' } },
    })) as unknown as Asked;
    expect(again.inputRequests.confirm.params.message).toBe(
      'x'.repeat(MAX_APPROVAL_MESSAGE_LENGTH - 40),
    );
  });
});

describe('approval receipts', () => {
  it('a confirmation that lets the operation run is signed once, handed to perform and recorded', async () => {
    const issued: unknown[] = [];
    const received: (string | undefined)[] = [];
    const events: GateAuditEvent[] = [];
    const gate = new ConfirmationGate({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: 'r'.repeat(32) }] }),
      store: new MemoryReplayStore(),
      receipts: {
        issue: async (request) => {
          issued.push(request);
          return `receipt-${issued.length}`;
        },
      },
      audit: (e) => void events.push(e),
    });
    const tool = gate.tool({
      name: 'delete_thing',
      description: 'Delete a thing.',
      args: z.object({ id: z.string() }),
      form: { confirm: typeToConfirm({ title: 'Type the id' }) },
      ask: async ({ args }) => ({
        message: `Delete ${args.id}?`,
        view: args.id,
        expect: { confirm: args.id },
      }),
      perform: async ({ receipt }) => {
        received.push(receipt);
        return textResult('done');
      },
    });
    const request = (extra: Partial<GateRequest> = {}): GateRequest => ({
      principal: 'alice',
      method: 'tools/call',
      name: 'delete_thing',
      arguments: { id: 't1' },
      capabilities: { elicitation: {} },
      inputResponses: undefined,
      requestState: undefined,
      ...extra,
    });
    const asked = (await tool.handler({ id: 't1' }, request())) as { requestState: string };
    const answer = { confirm: { action: 'accept', content: { confirm: 't1' } } };
    await tool.handler(
      { id: 't1' },
      request({ requestState: asked.requestState, inputResponses: answer }),
    );
    await tool.handler(
      { id: 't1' },
      request({ requestState: asked.requestState, inputResponses: answer }),
    );
    expect(received).toEqual(['receipt-1']);
    expect(issued).toEqual([
      expect.objectContaining({
        principal: 'alice',
        operation: 'tools/call:delete_thing',
        argumentsDigest: events[0]?.argumentsDigest,
        confirmation: { level: 'form' },
        nonce: events[0]?.nonce,
      }),
    ]);
    expect(events.find((e) => e.outcome === 'completed')?.receipt).toBe('receipt-1');
  });

  it('an issuer that fails is -32603 "changed nothing": the claim is given back, and the retry runs once', async () => {
    let failing = true;
    const issued: unknown[] = [];
    const performed: unknown[] = [];
    const channel = new FakeChannel();
    const gate = new ConfirmationGate({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: 'r'.repeat(32) }] }),
      store: new MemoryReplayStore(),
      approvals: channel,
      receipts: {
        issue: async (request) => {
          if (failing) throw new TypeError('the signer refused these claims');
          issued.push(request.confirmation);
          return 'receipt-1';
        },
      },
    });
    const tool = gate.tool({
      name: 'delete_volume',
      description: 'Destroy a volume.',
      args: z.object({ volumeId: z.string() }),
      form: { volumeId: typeToConfirm({ title: 'Volume id' }) },
      ask: async ({ args }) => ({
        message: `Destroy volume ${args.volumeId}?`,
        view: args.volumeId,
        expect: { volumeId: args.volumeId },
      }),
      level: 'url',
      perform: async ({ confirmation, receipt }) => {
        performed.push([confirmation, receipt]);
        return textResult('Destroyed.');
      },
    });
    const asked = (await tool.handler({ volumeId: 'vol_1' }, request())) as unknown as Asked;
    const id = asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
    // A url question the person approved with a passkey: the credential comes along.
    channel.decided.set(id, {
      status: 'approved',
      via: 'passkey',
      credentialId: 'AQIDBAUGBwg',
      content: {},
      decidedAt: Date.now(),
    });
    const retry = request({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept' } },
    });
    const failed = await tool.handler({ volumeId: 'vol_1' }, retry).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: -32603 });
    expect((failed as Error).message).toMatch(/^This request changed nothing: .*approval receipt/);
    expect((failed as Error).cause).toMatchObject({ name: 'ReceiptIssuerError' });
    expect(performed).toEqual([]);
    failing = false;
    expect(await tool.handler({ volumeId: 'vol_1' }, retry)).toMatchObject({ isError: false });
    expect(await tool.handler({ volumeId: 'vol_1' }, retry)).toMatchObject({ isError: false });
    const confirmation = { level: 'url', approvalId: id, credentialId: 'AQIDBAUGBwg' };
    expect(issued).toEqual([confirmation]);
    expect(performed).toEqual([[confirmation, 'receipt-1']]);
  });
});

describe('URL mode, a ticket replaced by a newer question', () => {
  /** `delete_volume` whose target changes from the `flipAt`-th look on, and then takes a passkey. */
  function changing() {
    const channel = new FakeChannel();
    const done: string[] = [];
    let looks = 0;
    let flipAt = Number.POSITIVE_INFINITY;
    const tool = volumeGate(channel).tool({
      ...VOLUME_TOOL,
      ask: async ({ args }) => {
        const changed = ++looks >= flipAt;
        return {
          message: `Destroy volume ${args.volumeId}${changed ? ', now attached to a running service' : ''}?`,
          view: changed,
          choices: { target: [{ value: 'primary', label: 'Primary' }] },
          expect: { volumeId: args.volumeId },
        };
      },
      level: (attached) => (attached ? 'presence' : 'url'),
      perform: async ({ view }) => {
        done.push(String(view));
        return textResult('Destroyed.');
      },
    });
    const call = (extra: Partial<GateRequest> = {}) =>
      tool.handler({ volumeId: 'vol_1' }, request(extra));
    return {
      channel,
      done,
      call,
      flipFromNextLook: (skip = 0) => {
        flipAt = looks + 1 + skip;
      },
    };
  }
  const accept = { confirm: { action: 'accept' } };
  const idOf = (asked: Asked) => asked.inputRequests.confirm.params.url.split('/').at(-1) as string;
  const approve = (channel: FakeChannel, id: string) =>
    channel.decided.set(id, {
      status: 'approved',
      via: 'url',
      content: { target: 'primary' },
      decidedAt: Date.now(),
    });

  it('a page that cannot open the new approval leaves the old ticket as it was, as the error says', async () => {
    const t = changing();
    const asked = (await t.call()) as unknown as Asked;
    approve(t.channel, idOf(asked));
    t.flipFromNextLook();
    t.channel.openFails = true;
    const error = await t
      .call({ requestState: asked.requestState, inputResponses: accept })
      .catch((e) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/changed nothing/),
    });
    expect(t.channel.withdrawn).toEqual([]);
    t.channel.openFails = false;
    // The same request then gets the newer question: the ticket was not spent by the failure.
    const fresh = (await t.call({
      requestState: asked.requestState,
      inputResponses: accept,
    })) as unknown as Asked;
    expect(fresh.requestState).not.toBe(asked.requestState);
    expect(t.channel.withdrawn.map(([id]) => id)).toEqual([idOf(asked)]);
    expect(t.done).toEqual([]);
  });

  it('a target that changed inside the claim: asked at the level it now takes, the old approval withdrawn', async () => {
    const t = changing();
    const asked = (await t.call()) as unknown as Asked;
    approve(t.channel, idOf(asked));
    // Round 2 looks once before the claim (unchanged), then inside it (changed): a stale target.
    t.flipFromNextLook(1);
    const fresh = (await t.call({
      requestState: asked.requestState,
      inputResponses: accept,
    })) as unknown as Asked;
    expect(fresh.inputRequests.confirm.params.message).toMatch(/changed before it could be done/);
    expect(t.channel.opened.get(idOf(fresh))?.level).toBe('presence');
    expect(t.channel.withdrawn.map(([id]) => id)).toEqual([idOf(asked)]);
    // The same answer again (its response lost): the fresh question once more, under a ticket of its
    // own; the superseded one performs nothing (helper-164 M1).
    const late = (await t.call({
      requestState: asked.requestState,
      inputResponses: accept,
    })) as unknown as Asked;
    expect(late.requestState).not.toBe(asked.requestState);
    expect(t.channel.opened.get(idOf(late))?.level).toBe('presence');
    expect(t.done).toEqual([]);
  });
});
