import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { McpError, textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import {
  ConfirmationGate,
  type GateAuditEvent,
  type GateRequest,
  type GateSpec,
  REQUIRED_CAPABILITIES,
  StaleTargetError,
} from '../src/index.js';

const secret = 'a'.repeat(32);

function setup(
  overrides: Partial<GateSpec<{ name: string }, void>> = {},
  store: MemoryReplayStore = new MemoryReplayStore(),
) {
  const events: GateAuditEvent[] = [];
  const performed: string[] = [];
  let stale = false;
  const gate = new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret }] }),
    store,
    audit: (e) => {
      events.push(e);
    },
  });
  const spec: GateSpec<{ name: string }, void> = {
    key: 'confirm_delete',
    candidateField: 'id',
    prepare: async () => ({ candidates: ['a', 'b'], view: { name: 'api-prod' } }),
    question: ({ candidates, view }, notice) => ({
      message: `${notice ? `${notice} ` : ''}Delete ${view.name}?`,
      requestedSchema: {
        type: 'object',
        properties: {
          id: { type: 'string', enum: candidates ?? [] },
          serviceName: { type: 'string' },
        },
        required: ['id', 'serviceName'],
      },
    }),
    check: (content, { view }) =>
      content.serviceName === view.name ? undefined : 'The name did not match.',
    consents: () => true, // typing the name (check) is the consent
    perform: async ({ content }) => {
      if (stale) throw new StaleTargetError('changed');
      performed.push(content.id as string);
      return textResult(`deleted ${content.id}`);
    },
    ...overrides,
  };
  const request = (extra: Partial<GateRequest> = {}): GateRequest => ({
    principal: 'alice',
    method: 'tools/call',
    name: 'delete_service',
    arguments: { serviceId: 'svc_1' },
    capabilities: { elicitation: {} },
    inputResponses: undefined,
    requestState: undefined,
    ...extra,
  });
  return {
    gate,
    spec,
    request,
    events,
    performed,
    setStale: (v: boolean) => {
      stale = v;
    },
  };
}

const answer = (content: Record<string, unknown>) => ({
  confirm_delete: { action: 'accept', content },
});

describe('ConfirmationGate', () => {
  it('asks first, then performs once on a valid accept, with one audit event per round', async () => {
    const t = setup();
    const first = await t.gate.run(t.request(), t.spec);
    expect(first.resultType).toBe('input_required');
    const state = (first as { requestState: string }).requestState;
    const done = await t.gate.run(
      t.request({
        requestState: state,
        inputResponses: answer({ id: 'b', serviceName: 'api-prod' }),
      }),
      t.spec,
    );
    expect(done).toMatchObject({ resultType: 'complete', isError: false });
    expect(t.performed).toEqual(['b']);
    expect(t.events.map((e) => e.outcome)).toEqual(['asked', 'accepted', 'completed']);
    expect(new Set(t.events.map((e) => e.nonce)).size).toBe(1);
    expect(t.events[0]?.question).toBe('Delete api-prod?');
    expect(JSON.stringify(t.events)).not.toContain(state);
  });

  it("a server whose clock runs behind the replay store's: the store refuses the expired claim, nothing runs", async () => {
    // The store's clock 25 minutes ahead of this server's: past the record's life (exp + 1 s + 3 × 300 s).
    const t = setup({}, new MemoryReplayStore({ now: () => Date.now() + 1_500_000 }));
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    for (const content of [{ id: 'a', serviceName: 'api-prod' }]) {
      const late = t.gate.run(
        t.request({ requestState: first.requestState, inputResponses: answer(content) }),
        t.spec,
      );
      await expect(late).rejects.toMatchObject({
        code: -32602,
        data: { reason: 'ticket_expired' },
        message: expect.stringMatching(/expired by the replay store's clock/),
      });
    }
    const decline = t.gate.run(
      t.request({
        requestState: first.requestState,
        inputResponses: { confirm_delete: { action: 'decline' } },
      }),
      t.spec,
    );
    await expect(decline).rejects.toMatchObject({ data: { reason: 'ticket_expired' } });
    expect(t.performed).toEqual([]);
    expect(t.events.at(-1)).toMatchObject({ outcome: 'refused', reason: 'ticket_expired' });
  });

  it('two instances with different maxSkewSeconds: a re-send past one skew, inside the other, replays (helper-161 H1)', async () => {
    const clock = { ms: 1_800_000_000_000 };
    const now = () => clock.ms;
    const store = new MemoryReplayStore({ now });
    const instance = (maxSkewSeconds: number) =>
      new ConfirmationGate({
        sealer: new TicketSealer({ keys: [{ kid: 'k1', secret }], maxSkewSeconds, now }),
        store,
      });
    const strict = instance(0);
    const lenient = instance(30);
    const t = setup();
    const first = (await strict.run(t.request(), t.spec)) as { requestState: string };
    const yes = t.request({
      requestState: first.requestState,
      inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
    });
    expect(await strict.run(yes, t.spec)).toMatchObject({ content: [{ text: 'deleted a' }] });
    // Past exp + 3 × 0 + 1 s (the strict instance's own reckoning), inside exp + 30 s.
    clock.ms += (300 + 10) * 1000;
    store.sweep();
    expect(await lenient.run(yes, t.spec)).toMatchObject({ content: [{ text: 'deleted a' }] });
    // helper-164 H1: an instance that allows the most skew, its clock behind by 65 s, 362 s past exp.
    const laggard = new ConfirmationGate({
      sealer: new TicketSealer({
        keys: [{ kid: 'k1', secret }],
        maxSkewSeconds: 300,
        now: () => clock.ms - 65_000,
      }),
      store,
    });
    clock.ms += (362 - 10) * 1000;
    store.sweep();
    expect(await laggard.run(yes, t.spec)).toMatchObject({ content: [{ text: 'deleted a' }] });
    expect(t.performed).toEqual(['a']);
  });

  it('refuses to run a spec without consents (plain JavaScript): a programming error, never a silent decline', async () => {
    const t = setup();
    const { consents: _dropped, ...unsafe } = t.spec;
    const spec = unsafe as typeof t.spec;
    await expect(t.gate.run(t.request(), spec)).rejects.toThrow(/consents must be a function/);
    expect(t.performed).toEqual([]);
    expect(t.events).toEqual([]);
  });

  it('throws -32021 before preparing anything when form elicitation is not declared', async () => {
    let prepared = false;
    const t = setup({
      prepare: async () => {
        prepared = true;
        return { candidates: [], view: { name: 'x' } };
      },
    });
    const error = await t.gate
      .run(t.request({ capabilities: { elicitation: { url: {} } } }), t.spec)
      .catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(-32021);
    expect(error.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
    expect(prepared).toBe(false);
  });

  it("-32021's data is the caller's own copy: decorating it changes no later refusal (helper-163 L19)", async () => {
    const t = setup();
    const refused = () =>
      t.gate.run(t.request({ capabilities: { elicitation: { url: {} } } }), t.spec).then(
        () => undefined as never,
        (e: McpError) => e,
      );
    const first = await refused();
    (
      first.data as { requiredCapabilities: { elicitation: { form: object } } }
    ).requiredCapabilities.elicitation.form = {
      hint: 'added by a caller',
    };
    expect((await refused()).data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
    expect(Object.isFrozen(REQUIRED_CAPABILITIES.form.elicitation.form)).toBe(true);
  });

  it('asks again with the same ticket when check fails, then accepts the corrected answer', async () => {
    const t = setup();
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    const again = await t.gate.run(
      t.request({
        requestState: first.requestState,
        inputResponses: answer({ id: 'a', serviceName: 'api-prd' }),
      }),
      t.spec,
    );
    expect(again).toMatchObject({ resultType: 'input_required', requestState: first.requestState });
    expect(JSON.stringify(again)).toContain('The name did not match.');
    expect(t.performed).toEqual([]);
    const done = await t.gate.run(
      t.request({
        requestState: first.requestState,
        inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
      }),
      t.spec,
    );
    expect(done).toMatchObject({ resultType: 'complete', isError: false });
    expect(t.performed).toEqual(['a']);
  });

  it('sends and records a check notice cut to 1,000 code units: one that quotes the answer cannot echo it whole', async () => {
    const t = setup({
      check: (content) => `You typed ${String(content.serviceName)}.`,
    });
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    const typed = 'x'.repeat(500_000);
    const again = await t.gate.run(
      t.request({
        requestState: first.requestState,
        inputResponses: answer({ id: 'a', serviceName: typed }),
      }),
      t.spec,
    );
    const message: string = (again as any).inputRequests.confirm_delete.params.message;
    const [notice] = message.split(' Delete api-prod?');
    expect(notice).toHaveLength(1000);
    expect(notice).toMatch(/^You typed x+…$/);
    const recorded = t.events.find((e) => e.reason === 'check_failed');
    expect(recorded?.question).toBe(message);
    expect(t.performed).toEqual([]);
  });

  it('binds the ticket to principal, operation and arguments', async () => {
    const t = setup();
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    const inputResponses = answer({ id: 'a', serviceName: 'api-prod' });
    for (const extra of [
      { principal: 'mallory' },
      { principal: { id: 'mallory' } },
      { name: 'delete_volume' },
      { method: 'prompts/get' },
      { arguments: { serviceId: 'svc_2' } },
    ]) {
      const error = await t.gate
        .run(t.request({ ...extra, requestState: first.requestState, inputResponses }), t.spec)
        .catch((e) => e);
      expect(error).toBeInstanceOf(McpError);
      expect(error.code).toBe(-32602);
    }
    const otherKey = await t.gate
      .run(t.request({ requestState: first.requestState, inputResponses }), {
        ...t.spec,
        key: 'other',
      })
      .catch((e) => e);
    expect(otherKey.code).toBe(-32602);
    expect(t.performed).toEqual([]);
    // Operation and arguments are AEAD associated data: a ticket presented with other ones fails
    // its tag exactly like an altered ticket (ticket_mac). The principal is sealed inside and
    // compared after decryption, so presenting another caller's ticket keeps its own reason.
    expect(t.events.filter((e) => e.outcome === 'refused').map((e) => e.reason)).toEqual([
      'ticket_principal',
      'ticket_principal',
      'ticket_mac',
      'ticket_mac',
      'ticket_mac',
      'ticket_operation',
    ]);
  });

  it('says why a ticket issued ahead of this clock is refused, and what to do (helper-161 L6)', async () => {
    const t = setup();
    const ahead = new ConfirmationGate({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret }], now: () => Date.now() + 600_000 }),
      store: new MemoryReplayStore(),
    });
    const first = (await ahead.run(t.request(), t.spec)) as { requestState: string };
    const error = await t.gate
      .run(
        t.request({
          requestState: first.requestState,
          inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
        }),
        t.spec,
      )
      .catch((e) => e);
    expect(error.message).toMatch(
      /\(not_yet_valid\): it was issued later than now by this server’s clock .*; call the tool again/,
    );
  });

  it("says principal to a caller presenting another caller's ticket, and mac for altered or moved tickets", async () => {
    const t = setup();
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    const inputResponses = answer({ id: 'a', serviceName: 'api-prod' });
    const message = async (extra: Partial<GateRequest>) => {
      const error = await t.gate
        .run(t.request({ requestState: first.requestState, inputResponses, ...extra }), t.spec)
        .catch((e) => e);
      expect(error).toBeInstanceOf(McpError);
      expect(error.code).toBe(-32602);
      return error.message as string;
    };
    expect(await message({ principal: 'mallory' })).toMatch(/\(principal\).*another caller/);
    const s = first.requestState;
    const altered = `${s.slice(0, 20)}${s[20] === 'A' ? 'B' : 'A'}${s.slice(21)}`;
    expect(await message({ requestState: altered })).toMatch(/\(mac\).*altered/);
    expect(await message({ arguments: { serviceId: 'svc_2' } })).toMatch(
      /\(mac\).*other arguments/,
    );
    expect(await message({ requestState: s.replace('.k1.', '.k9.') })).toMatch(
      /\(kid\): .* a newer one not yet given to every instance\); call the tool again \(this server opens key ids k1\)$/,
    );
    expect(await message({ requestState: 'garbage' })).toMatch(/\(malformed\)/);
    const refused = t.events.filter((e) => e.outcome === 'refused');
    expect(refused.map((e) => e.reason)).toEqual([
      'ticket_principal',
      'ticket_mac',
      'ticket_mac',
      'ticket_kid',
      'ticket_malformed',
    ]);
    // Nothing decoded from a ticket that failed reaches the audit record.
    expect(refused.every((e) => e.nonce === undefined)).toBe(true);
    expect(t.performed).toEqual([]);
  });

  it('refuses a ticket of another phase of the same tool as operation, with its nonce audited', async () => {
    const t = setup();
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    const error = await t.gate
      .run(
        t.request({
          requestState: first.requestState,
          inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
        }),
        { ...t.spec, phase: 'second_confirm' },
      )
      .catch((e) => e);
    expect(error.code).toBe(-32602);
    expect(t.events.at(-1)).toMatchObject({
      outcome: 'refused',
      reason: 'ticket_operation',
      nonce: t.events[0]?.nonce,
    });
    expect(t.performed).toEqual([]);
  });

  it('refuses an expired ticket with -32602 (expired) and performs nothing', async () => {
    let now = 1_800_000_000_000;
    const gate = new ConfirmationGate({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret }], now: () => now }),
      store: new MemoryReplayStore(),
    });
    const t = setup();
    const first = (await gate.run(t.request(), t.spec)) as { requestState: string };
    now += (300 + 31) * 1000;
    const error = await gate
      .run(
        t.request({
          requestState: first.requestState,
          inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
        }),
        t.spec,
      )
      .catch((e) => e);
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/\(expired\)/);
    expect(t.performed).toEqual([]);
  });

  it('answers -32602 for arguments RFC 8785 cannot canonicalize, before preparing anything', async () => {
    let prepared = false;
    const t = setup({
      prepare: async () => {
        prepared = true;
        return { candidates: [], view: { name: 'x' } };
      },
    });
    for (const args of [
      { serviceId: 'svc_\ud800' },
      JSON.parse(`{"a":${'['.repeat(2000)}${']'.repeat(2000)}}`),
    ]) {
      const error = await t.gate.run(t.request({ arguments: args }), t.spec).catch((e) => e);
      expect(error).toBeInstanceOf(McpError);
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(/arguments cannot be confirmed/);
    }
    expect(prepared).toBe(false);
    expect(t.events).toEqual([]);
  });

  it('releases the claim and asks afresh when the target went stale', async () => {
    const t = setup();
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    t.setStale(true);
    const r = await t.gate.run(
      t.request({
        requestState: first.requestState,
        inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
      }),
      t.spec,
    );
    expect(r.resultType).toBe('input_required');
    expect((r as { requestState: string }).requestState).not.toBe(first.requestState);
    t.setStale(false);
    // The old ticket is spent: its "yes" cannot come back once the target reads as it did.
    const again = await t.gate.run(
      t.request({
        requestState: first.requestState,
        inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
      }),
      t.spec,
    );
    expect(again).toMatchObject({ isError: true });
    expect(JSON.stringify(again)).toMatch(/already used; this request changed nothing/);
    expect(t.performed).toEqual([]);
    // The new one is the question to answer.
    const done = await t.gate.run(
      t.request({
        requestState: (r as { requestState: string }).requestState,
        inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
      }),
      t.spec,
    );
    expect(done).toMatchObject({ isError: false });
    expect(t.performed).toEqual(['a']);
  });

  it('fails closed when perform throws: nothing recorded, the error propagates, a retry can still run', async () => {
    let fail = true;
    const performed: string[] = [];
    const t = setup({
      perform: async ({ content }) => {
        if (fail) throw new Error('database down');
        performed.push(content.id as string);
        return textResult('ok');
      },
    });
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    const req = t.request({
      requestState: first.requestState,
      inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
    });
    await expect(t.gate.run(req, t.spec)).rejects.toThrow('database down');
    expect(t.events.at(-1)?.outcome).toBe('failed');
    fail = false;
    expect(await t.gate.run(req, t.spec)).toMatchObject({ isError: false });
    expect(performed).toEqual(['a']);
  });

  it('an audit sink that throws before the mutation prevents it', async () => {
    const t = setup();
    const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
    const failing = new ConfirmationGate({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret }] }),
      store: new MemoryReplayStore(),
      audit: (e) => {
        if (e.outcome === 'asked_again') throw new Error('sink down');
      },
    });
    await expect(
      failing.run(
        t.request({
          requestState: first.requestState,
          inputResponses: answer({ id: 'z', serviceName: 'api-prod' }),
        }),
        t.spec,
      ),
    ).rejects.toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^This request changed nothing/),
      cause: { name: 'AuditSinkError', cause: { message: 'sink down' } },
    });
    expect(t.performed).toEqual([]);
  });

  describe('the question read again inside the claim', () => {
    /** A spec whose question, built on the third `prepare` (inside the claim), comes from `third`. */
    function racing(third: (candidates: string[]) => Record<string, unknown>) {
      let prepares = 0;
      const t = setup({
        prepare: async () => {
          prepares++;
          return { candidates: ['a', 'b'], view: { name: 'api-prod' } };
        },
      });
      const base = t.spec.question;
      t.spec.question = (context, notice) => {
        const q = base(context, notice);
        if (prepares < 3 || notice !== undefined) return q;
        return { ...q, requestedSchema: third(context.candidates ?? []) as never };
      };
      return t;
    }
    async function askAndAccept(t: ReturnType<typeof setup>) {
      const first = (await t.gate.run(t.request(), t.spec)) as { requestState: string };
      return t.gate.run(
        t.request({
          requestState: first.requestState,
          inputResponses: answer({ id: 'a', serviceName: 'api-prod' }),
        }),
        t.spec,
      );
    }

    it('performs when it is the same data built with its members in another order', async () => {
      const t = racing((candidates) => ({
        required: ['id', 'serviceName'],
        properties: {
          serviceName: { type: 'string' },
          id: { enum: [...candidates], type: 'string' },
        },
        type: 'object',
      }));
      expect(await askAndAccept(t)).toMatchObject({ resultType: 'complete', isError: false });
      expect(t.performed).toEqual(['a']);
    });

    it('asks again (stale_target) when one choice changed, and performs nothing', async () => {
      const t = racing(() => ({
        type: 'object',
        properties: {
          id: { type: 'string', enum: ['a', 'c'] },
          serviceName: { type: 'string' },
        },
        required: ['id', 'serviceName'],
      }));
      expect(await askAndAccept(t)).toMatchObject({ resultType: 'input_required' });
      expect(t.performed).toEqual([]);
      expect(t.events.map((e) => [e.outcome, e.reason])).toContainEqual([
        'asked_again',
        'stale_target',
      ]);
    });

    it('asks again when the target changed to match what a hook did to the objects it was handed', async () => {
      // The spec's `question` puts the candidates array itself in the form; `check` changes it in place.
      let prepares = 0;
      const t = setup({
        prepare: async () => {
          prepares++;
          return {
            candidates: prepares < 3 ? ['a', 'b'] : ['a', 'b', 'c'],
            view: { name: 'api-prod' },
          };
        },
        check: (content, { candidates }) => {
          candidates?.push('c');
          return content.serviceName === 'api-prod' ? undefined : 'The name did not match.';
        },
      });
      expect(await askAndAccept(t)).toMatchObject({ resultType: 'input_required' });
      expect(t.performed).toEqual([]);
    });

    it('performs nothing when the question read again is not JSON data (a server bug, thrown as is)', async () => {
      const t = racing(() => ({
        type: 'object',
        properties: { id: { type: 'string', enum: ['a', 'b'] }, serviceName: { type: 'string' } },
        required: ['id', 'serviceName'],
        default: Number.NaN,
      }));
      await expect(askAndAccept(t)).rejects.toMatchObject({ code: 'non_finite_number' });
      expect(t.performed).toEqual([]);
    });
  });
});

describe('a ticket used already is not put to the person again', () => {
  const USED = 'This confirmation was already used; this request changed nothing.';
  const textOf = (r: unknown) => (r as { content?: { text?: string }[] }).content?.[0]?.text ?? '';

  /** Round 1, then `settle` with its ticket; returns the ticket and a sender of more answers on it. */
  async function spent(
    t: ReturnType<typeof setup>,
    settle: Record<string, unknown>,
  ): Promise<(inputResponses: Record<string, unknown>) => Promise<unknown>> {
    const first = await t.gate.run(t.request(), t.spec);
    const requestState = (first as { requestState: string }).requestState;
    const send = (inputResponses: Record<string, unknown>) =>
      t.gate.run(t.request({ requestState, inputResponses }), t.spec);
    await send(settle);
    return send;
  }

  it('after a decline: a missing, invalid or mistyped answer and a cancel are told the ticket was used, not asked again', async () => {
    const t = setup();
    const send = await spent(t, { confirm_delete: { action: 'decline' } });
    for (const inputResponses of [
      {},
      answer({}),
      answer({ id: 'zz', serviceName: 'api-prod' }),
      answer({ id: 'b', serviceName: 'wrong' }),
      { confirm_delete: { action: 'cancel' } },
    ]) {
      const r = await send(inputResponses);
      expect((r as { resultType?: string }).resultType, JSON.stringify(inputResponses)).not.toBe(
        'input_required',
      );
      expect(textOf(r)).toContain(USED);
      expect((r as { isError?: boolean }).isError).toBe(true);
    }
    expect(t.performed).toEqual([]);
    expect(t.events.filter((e) => e.reason === 'nonce_used')).toHaveLength(5);
    expect(t.events.some((e) => e.outcome === 'asked_again')).toBe(false);
  });

  it('after the confirmation was carried out: the same, and the recorded result is still replayed to an identical re-send', async () => {
    const t = setup();
    const done = answer({ id: 'b', serviceName: 'api-prod' });
    const send = await spent(t, done);
    expect(t.performed).toEqual(['b']);
    expect(textOf(await send(answer({ id: 'b', serviceName: 'wrong' })))).toContain(USED);
    expect(textOf(await send({ confirm_delete: { action: 'cancel' } }))).toContain(USED);
    expect(textOf(await send(done))).toBe('deleted b');
    expect(t.performed).toEqual(['b']);
  });

  it('the target gone or changed since: a used ticket is told used, not "removed since" nor asked afresh', async () => {
    let name: string | undefined = 'api-prod';
    const t = setup({
      prepare: async () =>
        name === undefined
          ? { result: textResult('api-prod was removed since you were asked.') }
          : { candidates: ['a', 'b'], view: { name } },
    });
    // Carried out, then gone: an accept without its content cannot be replayed, but is told used.
    const send = await spent(t, answer({ id: 'b', serviceName: 'api-prod' }));
    name = undefined;
    expect(textOf(await send({ confirm_delete: { action: 'accept' } }))).toContain(USED);
    expect(textOf(await send({}))).toContain(USED);
    // Declined, then changed (another question now): a missing answer is told used, not asked afresh.
    name = 'api-prod';
    const declined = await spent(t, { confirm_delete: { action: 'decline' } });
    name = 'api-prod-renamed';
    const r = await declined({});
    expect((r as { resultType?: string }).resultType).not.toBe('input_required');
    expect(textOf(r)).toContain(USED);
    expect(t.performed).toEqual(['b']);
  });

  it('an unused ticket is asked again and a cancel changes nothing, as before', async () => {
    const t = setup();
    const first = await t.gate.run(t.request(), t.spec);
    const requestState = (first as { requestState: string }).requestState;
    const again = await t.gate.run(
      t.request({ requestState, inputResponses: answer({ id: 'b', serviceName: 'wrong' }) }),
      t.spec,
    );
    expect(again).toMatchObject({ resultType: 'input_required', requestState });
    const cancelled = await t.gate.run(
      t.request({ requestState, inputResponses: { confirm_delete: { action: 'cancel' } } }),
      t.spec,
    );
    expect(textOf(cancelled)).toBe('Cancelled. This request changed nothing.');
  });

  it('a store without recorded, or one that cannot be read, asks again as before; the claim still refuses a second use', async () => {
    for (const recorded of [undefined, async () => Promise.reject(new Error('store down'))]) {
      const store = new MemoryReplayStore();
      (store as { recorded?: unknown }).recorded = recorded;
      const t = setup({}, store);
      const send = await spent(t, { confirm_delete: { action: 'decline' } });
      expect(await send(answer({ id: 'b', serviceName: 'wrong' }))).toMatchObject({
        resultType: 'input_required',
      });
      expect(textOf(await send(answer({ id: 'b', serviceName: 'api-prod' })))).toContain(USED);
      expect(t.performed).toEqual([]);
    }
  });
});
