import { digestCanonical } from '@mrtr/digest';
import { MemoryReplayStore, ReplayStoreUnavailableError } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { fieldOptions, McpError, textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfirmationGate,
  choose,
  confirm,
  flag,
  type GateAuditEvent,
  type GateRequest,
  text,
  typeToConfirm,
  withoutAsking,
} from '../src/index.js';

const sealer = () => new TicketSealer({ keys: [{ kid: 'k1', secret: 's'.repeat(32) }] });

/** A `tools/call` of alice's for `name` with `args`, declaring form elicitation; `extra` overrides. */
const callOf = (name: string, args: unknown, extra: Partial<GateRequest> = {}): GateRequest => ({
  principal: 'alice',
  method: 'tools/call',
  name,
  arguments: args as Record<string, unknown>,
  capabilities: { elicitation: { form: {} } },
  inputResponses: undefined,
  requestState: undefined,
  ...extra,
});

interface Row {
  id: string;
  title: string;
}

function setup() {
  const rows = new Map<string, Row>([
    ['n1', { id: 'n1', title: 'Dup' }],
    ['n2', { id: 'n2', title: 'Dup' }],
  ]);
  const events: GateAuditEvent[] = [];
  const deleted: string[] = [];
  /** Whether a copy can be kept: when not, `check` refuses an answer that asks for one. */
  const copies = { possible: true };
  const memory = new MemoryReplayStore();
  const store = {
    down: false,
    /** Fails only the claims whose request digest this names. */
    downFor: undefined as string | undefined,
    once: ((request, action) => {
      if (store.down || request.requestDigest === store.downFor)
        throw new ReplayStoreUnavailableError('connection refused');
      return memory.once(request, action);
    }) as MemoryReplayStore['once'],
    recorded: ((request) => memory.recorded(request)) as MemoryReplayStore['recorded'],
  };
  const gate = new ConfirmationGate({
    sealer: sealer(),
    store,
    audit: (e) => void events.push(e),
  });
  const tool = gate.tool({
    name: 'notes_delete',
    description: 'Delete a note; a person confirms.',
    args: z.object({ title: z.string().min(1) }),
    form: {
      note_id: choose({ title: 'Note to delete' }),
      confirm: confirm({ title: 'Yes, delete it' }),
      keep_copy: flag({ title: 'Keep a copy', default: false }),
    },
    async ask({ args }) {
      const matches = [...rows.values()].filter((r) => r.title === args.title);
      if (matches.length === 0)
        return withoutAsking(textResult('No such note.', { isError: true }));
      return {
        message: `Delete one of ${matches.length} notes titled ${args.title}?`,
        view: matches,
        choices: { note_id: matches.map((r) => ({ value: r.id, label: `${r.id}: ${r.title}` })) },
      };
    },
    check: ({ answer }) =>
      answer.keep_copy && !copies.possible
        ? 'No copy can be kept of these notes: answer again without "Keep a copy".'
        : undefined,
    async perform({ answer, view }) {
      const row = view.find((r) => r.id === answer.note_id);
      if (!row) throw new Error('not among the asked');
      rows.delete(row.id);
      deleted.push(`${row.id}${answer.keep_copy ? '+copy' : ''}`);
      return textResult(`Deleted ${row.id}.`);
    },
  });
  const request = (extra: Partial<GateRequest> = {}): GateRequest => ({
    principal: { id: 'alice' },
    method: 'tools/call',
    name: 'notes_delete',
    arguments: { title: 'Dup' },
    capabilities: { elicitation: {} },
    inputResponses: undefined,
    requestState: undefined,
    ...extra,
  });
  return { tool, rows, deleted, events, request, store, copies };
}

/** Round 1 of `notes_delete {title: Dup}`, and the round 2 that picks n1 and ticks the box. */
async function askedWithYes(t: ReturnType<typeof setup>) {
  const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as { requestState: string };
  const yes = t.request({
    requestState: asked.requestState,
    inputResponses: {
      confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } },
    },
  });
  return { asked, yes };
}

describe('gate.tool(): one declaration per gated tool', () => {
  it("a declaration's check asks again with the same ticket, and spends nothing", async () => {
    const t = setup();
    t.copies.possible = false;
    const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as {
      requestState: string;
    };
    const answer = (keep_copy: boolean) =>
      t.tool.handler(
        { title: 'Dup' },
        t.request({
          requestState: asked.requestState,
          inputResponses: {
            confirm: { action: 'accept', content: { note_id: 'n1', confirm: true, keep_copy } },
          },
        }),
      );
    const again = (await answer(true)) as unknown as {
      resultType: string;
      requestState: string;
      inputRequests: { confirm: { params: { message: string } } };
    };
    expect(again.resultType).toBe('input_required');
    expect(again.requestState).toBe(asked.requestState);
    expect(again.inputRequests.confirm.params.message).toMatch(/^No copy can be kept/);
    expect(t.deleted).toEqual([]);
    expect(t.events.at(-1)).toMatchObject({ outcome: 'asked_again', reason: 'check_failed' });
    // The same ticket, answered within the rule: carried out once.
    expect(await answer(false)).toMatchObject({ content: [{ text: 'Deleted n1.' }] });
    expect(t.deleted).toEqual(['n1']);
  });

  it('derives inputSchema from the argument schema, closed to undeclared arguments', () => {
    const { tool } = setup();
    expect(tool.inputSchema).toMatchObject({
      type: 'object',
      properties: { title: { type: 'string', minLength: 1 } },
      required: ['title'],
      additionalProperties: false,
    });
    expect(tool.annotations).toEqual({ destructiveHint: true, idempotentHint: false });
  });

  it('refuses undeclared and invalid arguments with -32602 naming the argument, never echoing the value', () => {
    const { tool } = setup();
    const secretish = 'x'.repeat(900_000);
    const undeclared = (() => {
      try {
        tool.parse({ title: 'Dup', blob: secretish });
      } catch (e) {
        return e;
      }
    })() as McpError;
    expect(undeclared).toBeInstanceOf(McpError);
    expect(undeclared.code).toBe(-32602);
    expect(undeclared.message).toBe(
      'Invalid arguments for tool notes_delete: blob: is not an argument of this tool',
    );
    expect(undeclared.data).toEqual({
      argument: 'blob',
      problem: 'is not an argument of this tool',
    });
    expect(undeclared.message.length).toBeLessThan(200);
    // A name that would reorder, erase or break the message is quoted with U+FFFD instead.
    const hostile = (() => {
      try {
        tool.parse({ title: 'Dup', '\u202e\u001b[2J\u0000\u009b\u2028\ud800': 1 });
      } catch (e) {
        return e;
      }
    })() as McpError;
    expect(hostile.message).toBe(
      'Invalid arguments for tool notes_delete: \ufffd\ufffd[2J\ufffd\ufffd\ufffd\ufffd: is not an argument of this tool',
    );
    expect(() => tool.parse({ title: '' })).toThrow(/title/);
    expect(tool.parse({ title: 'Dup' })).toEqual({ title: 'Dup' });
  });

  it('asks with titled options (each candidate labelled), a consent box and an option', async () => {
    const t = setup();
    const asked = await t.tool.handler({ title: 'Dup' }, t.request());
    expect(asked.resultType).toBe('input_required');
    const params = (
      asked as {
        inputRequests: Record<string, { params: Record<string, unknown>; method: string }>;
      }
    ).inputRequests.confirm?.params as {
      requestedSchema: { properties: Record<string, unknown>; required: string[] };
    };
    expect(params.requestedSchema.properties.note_id).toEqual({
      type: 'string',
      title: 'Note to delete',
      oneOf: [
        { const: 'n1', title: 'n1: Dup' },
        { const: 'n2', title: 'n2: Dup' },
      ],
    });
    expect(params.requestedSchema.properties.keep_copy).toEqual({
      type: 'boolean',
      title: 'Keep a copy',
      default: false,
    });
    expect(params.requestedSchema.required).toEqual(['note_id', 'confirm']);
  });

  it('performs once on an accept with the box ticked; a candidate not offered is asked again', async () => {
    const t = setup();
    const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as {
      requestState: string;
      inputRequests: any;
    };
    const ids = fieldOptions(asked.inputRequests.confirm.params.requestedSchema.properties.note_id);
    const retry = (content: Record<string, unknown>) =>
      t.tool.handler(
        { title: 'Dup' },
        t.request({
          requestState: asked.requestState,
          inputResponses: { confirm: { action: 'accept', content } },
        }),
      );
    const forged = await retry({ note_id: 'n9', confirm: true });
    expect(forged.resultType).toBe('input_required');
    expect(t.deleted).toEqual([]);
    const done = await retry({ note_id: ids[1], confirm: true, keep_copy: true });
    expect(done).toMatchObject({ resultType: 'complete', isError: false });
    expect(t.deleted).toEqual(['n2+copy']);
  });

  it('an unticked box is a decline that uses the ticket up', async () => {
    const t = setup();
    const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as { requestState: string };
    const no = await t.tool.handler(
      { title: 'Dup' },
      t.request({
        requestState: asked.requestState,
        inputResponses: {
          confirm: { action: 'accept', content: { note_id: 'n1', confirm: false } },
        },
      }),
    );
    expect(no).toMatchObject({ resultType: 'complete', isError: false });
    const yes = await t.tool.handler(
      { title: 'Dup' },
      t.request({
        requestState: asked.requestState,
        inputResponses: {
          confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } },
        },
      }),
    );
    expect(yes).toMatchObject({ isError: true });
    expect(t.deleted).toEqual([]);
  });

  it('a question whose live data changed is asked afresh under a new ticket, nothing deleted', async () => {
    const t = setup();
    const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as { requestState: string };
    t.rows.set('n3', { id: 'n3', title: 'Dup' }); // a third match appears: the question changes
    const again = (await t.tool.handler(
      { title: 'Dup' },
      t.request({
        requestState: asked.requestState,
        inputResponses: {
          confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } },
        },
      }),
    )) as { requestState: string; inputRequests: any };
    expect(again.requestState).not.toBe(asked.requestState);
    expect(
      fieldOptions(again.inputRequests.confirm.params.requestedSchema.properties.note_id),
    ).toHaveLength(3);
    expect(again.inputRequests.confirm.params.message).toMatch(/has changed/);
    expect(t.deleted).toEqual([]);
    expect(t.events.map((e) => [e.outcome, e.reason])).toContainEqual([
      'asked_again',
      'question_changed',
    ]);
  });

  it('the same answer sent again after its fresh question was lost gets that question again, not "already used" (helper-164 M1)', async () => {
    const t = setup();
    const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as { requestState: string };
    t.rows.set('n3', { id: 'n3', title: 'Dup' });
    const answer = t.request({
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } } },
    });
    const lost = (await t.tool.handler({ title: 'Dup' }, answer)) as { requestState: string };
    const again = (await t.tool.handler({ title: 'Dup' }, answer)) as {
      requestState: string;
      inputRequests: any;
      resultType: string;
    };
    expect(again.resultType).toBe('input_required');
    expect(again.inputRequests.confirm.params.message).toMatch(/has changed/);
    expect(t.deleted).toEqual([]);
    // Each fresh question comes with its own ticket; the one answered deletes once.
    const yes = t.request({
      requestState: again.requestState,
      inputResponses: { confirm: { action: 'accept', content: { note_id: 'n3', confirm: true } } },
    });
    expect(await t.tool.handler({ title: 'Dup' }, yes)).toMatchObject({ isError: false });
    expect(lost.requestState).not.toBe(again.requestState);
    expect(t.deleted).toEqual(['n3']);
  });

  it('a ticket whose question was put afresh is spent: its yes cannot override a later no (helper-118)', async () => {
    const t = setup();
    const { asked, yes } = await askedWithYes(t);
    t.rows.set('n3', { id: 'n3', title: 'Dup' }); // the question changes
    const again = (await t.tool.handler({ title: 'Dup' }, yes)) as { requestState: string };
    const no = await t.tool.handler(
      { title: 'Dup' },
      t.request({
        requestState: again.requestState,
        inputResponses: { confirm: { action: 'decline' } },
      }),
    );
    expect(no).toMatchObject({ resultType: 'complete', isError: false });
    t.rows.delete('n3'); // the target reads as it did when the person said yes
    for (const request of [
      yes,
      t.request({ requestState: asked.requestState }),
      t.request({
        requestState: asked.requestState,
        inputResponses: { confirm: { action: 'cancel' } },
      }),
    ]) {
      const late = await t.tool.handler({ title: 'Dup' }, request);
      expect(late).toMatchObject({ resultType: 'complete', isError: true });
      expect(JSON.stringify(late)).toMatch(/already used; this request changed nothing/);
    }
    expect(t.deleted).toEqual([]);
    expect(t.events.map((e) => [e.outcome, e.reason])).toContainEqual(['refused', 'nonce_used']);
  });

  it('a store that cannot spend the replaced ticket fails closed: the new question not sent, the same request then asks', async () => {
    const t = setup();
    const { asked, yes } = await askedWithYes(t);
    t.rows.set('n3', { id: 'n3', title: 'Dup' });
    t.store.downFor = digestCanonical('{"superseded":true}');
    const error = await t.tool.handler({ title: 'Dup' }, yes).catch((e) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/changed nothing/),
    });
    // Recorded against the ticket presented, not the one minted for the question not sent.
    const minted = t.events.find((e) => e.outcome === 'asked' && e.nonce !== t.events[0]?.nonce);
    expect(minted).toBeDefined();
    expect(t.events.at(-1)).toMatchObject({ outcome: 'failed', nonce: t.events[0]?.nonce });
    t.store.downFor = undefined;
    const again = (await t.tool.handler({ title: 'Dup' }, yes)) as { requestState: string };
    expect(again.requestState).not.toBe(asked.requestState);
    expect(t.deleted).toEqual([]);
  });

  it('an identical re-send after the deletion gets the recorded result, though the target is gone', async () => {
    const t = setup();
    const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as { requestState: string };
    const resend = () =>
      t.tool.handler(
        { title: 'Dup' },
        t.request({
          requestState: asked.requestState,
          inputResponses: {
            confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } },
          },
        }),
      );
    const first = await resend();
    expect(first).toMatchObject({ isError: false, content: [{ text: 'Deleted n1.' }] });
    t.rows.clear(); // n2 goes too: the question can no longer be put at all
    expect(await resend()).toEqual(first);
    expect(t.deleted).toEqual(['n1']);
    expect(t.events.at(-1)).toMatchObject({ outcome: 'replayed' });
    // Another answer on the used ticket is no replay: the target is gone, nothing runs.
    const other = await t.tool.handler(
      { title: 'Dup' },
      t.request({
        requestState: asked.requestState,
        inputResponses: {
          confirm: { action: 'accept', content: { note_id: 'n2', confirm: true } },
        },
      }),
    );
    expect(other).toMatchObject({ isError: true });
    expect(t.deleted).toEqual(['n1']);
  });

  it('a target gone by the retry is refused without a claim: the ticket stays unused', async () => {
    const t = setup();
    const asked = (await t.tool.handler({ title: 'Dup' }, t.request())) as { requestState: string };
    t.rows.clear();
    const gone = await t.tool.handler(
      { title: 'Dup' },
      t.request({
        requestState: asked.requestState,
        inputResponses: {
          confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } },
        },
      }),
    );
    expect(gone).toMatchObject({ isError: true, content: [{ text: 'No such note.' }] });
    expect(t.events.at(-1)).toMatchObject({ outcome: 'refused', reason: 'target_unavailable' });
  });

  it('fails at construction for a form without a consent field', () => {
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    expect(() =>
      gate.tool({
        name: 'x',
        description: 'x',
        args: z.object({}),
        form: { reason: text({ title: 'Why', minLength: 5 }) },
        ask: async () => ({ message: 'm', view: null }),
        perform: async () => textResult('done'),
      }),
    ).toThrow(/consent field/);
    // Plain JavaScript without a form at all: the same rule, named.
    const declaration = {
      name: 'y',
      description: 'y',
      args: z.object({}),
      ask: async () => ({ message: 'm', view: null }),
      perform: async () => textResult('done'),
    };
    expect(() => gate.tool(declaration as unknown as Parameters<typeof gate.tool>[0])).toThrow(
      'gated tool y needs a consent field in its form (confirm or typeToConfirm)',
    );
  });

  it('fails at construction for a level the gate cannot serve, and still takes form or a function', () => {
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    const declare = (level: unknown) =>
      gate.tool({
        name: 'wipe',
        description: 'x',
        args: z.object({}),
        form: { confirm: confirm({ title: 'Yes' }) },
        level: level as 'form',
        ask: async () => ({ message: 'm', view: null }),
        perform: async () => textResult('done'),
      });
    for (const level of ['url', 'presence', 'form-or-url'])
      expect(() => declare(level)).toThrow(
        `gated tool wipe has level ${level}, which puts the question on the approval page, but the gate has no approvals channel`,
      );
    expect(() => declare('URL')).toThrow('gated tool wipe has level "URL": a level is form, url');
    expect(declare('form').name).toBe('wipe');
    expect(declare(() => 'url').name).toBe('wipe'); // judged per call
    expect(declare(undefined).name).toBe('wipe');
  });

  it('run refuses a spec whose fixed level needs approvals the gate lacks, before anything is read', async () => {
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    let prepared = 0;
    const spec = {
      key: 'confirm',
      level: 'url' as const,
      prepare: async () => {
        prepared++;
        return { view: null };
      },
      question: () => ({
        message: 'm',
        requestedSchema: { type: 'object' as const, properties: {} },
      }),
      consents: () => true,
      perform: async () => textResult('done'),
    };
    await expect(
      gate.run(
        {
          principal: 'alice',
          method: 'tools/call',
          name: 'wipe',
          arguments: {},
          capabilities: { elicitation: { url: {} } },
        } as GateRequest,
        spec,
      ),
    ).rejects.toThrow(
      'the spec of wipe has level url, which puts the question on the approval page',
    );
    expect(prepared).toBe(0);
  });

  it('hands perform 0 where a retry sends -0: the ticket binds RFC 8785 text, which writes both as 0', async () => {
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    const done: unknown[] = [];
    const tool = gate.tool({
      name: 'transfer',
      description: 'Move an amount.',
      args: z.object({ amount: z.number(), legs: z.array(z.object({ amount: z.number() })) }),
      form: { confirm: confirm({ title: 'Yes' }) },
      ask: async ({ args }) => ({ message: `Transfer ${args.amount}?`, view: args }),
      perform: async ({ args }) => {
        done.push(args);
        return textResult('moved');
      },
    });
    const request = (args: unknown, extra: Partial<GateRequest> = {}) =>
      callOf('transfer', args, extra);
    const shown = { amount: 0, legs: [{ amount: 0 }] };
    const asked = (await tool.handler(tool.parse(shown), request(shown))) as {
      requestState: string;
    };
    const sent = JSON.parse('{"amount":-0,"legs":[{"amount":-0}]}');
    const result = await tool.handler(
      tool.parse(sent),
      request(sent, {
        requestState: asked.requestState,
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      }),
    );
    expect(result).toMatchObject({ isError: false });
    const [args] = done as { amount: number; legs: { amount: number }[] }[];
    expect(Object.is(args?.amount, 0)).toBe(true);
    expect(Object.is(args?.legs[0]?.amount, 0)).toBe(true);
    // What the caller sent is left as it was.
    expect(Object.is(sent.amount, -0)).toBe(true);
    expect(Object.is(sent.legs[0].amount, -0)).toBe(true);
  });

  it('hands perform 0 where the schema itself makes -0 (coercion), and leaves frozen input intact', async () => {
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    const done: unknown[] = [];
    const tool = gate.tool({
      name: 'transfer',
      description: 'Move an amount.',
      args: z.object({
        amount: z.coerce.number(),
        when: z
          .string()
          .transform((iso) => new Date(iso))
          .optional(),
      }),
      form: { confirm: confirm({ title: 'Yes' }) },
      ask: async ({ args }) => ({ message: `Transfer ${args.amount}?`, view: args }),
      perform: async ({ args }) => {
        done.push(args);
        return textResult('moved');
      },
    });
    const parsed = tool.parse(Object.freeze({ amount: '-0' })) as { amount: number };
    expect(Object.is(parsed.amount, 0)).toBe(true);
    // Only plain objects and arrays are copied: a Date the schema outputs stays a Date.
    const out = tool.parse({ amount: '-0', when: '1970-01-01T00:00:00Z' }) as { when: unknown };
    expect(out.when).toBeInstanceOf(Date);
    expect(done).toEqual([]);
  });

  it('typeToConfirm: a mismatch is asked again saying what was typed and what is expected', async () => {
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    const done: string[] = [];
    const tool = gate.tool({
      name: 'delete_file',
      description: 'Delete a file.',
      args: z.object({ path: z.string() }),
      form: {
        confirm_name: typeToConfirm({ title: 'Type the path' }),
        reason: text({ title: 'Why', minLength: 5, maxLength: 200 }),
      },
      ask: async ({ args }) => ({
        message: `Delete ${args.path}?`,
        view: args.path,
        expect: { confirm_name: args.path },
      }),
      perform: async ({ view, answer }) => {
        done.push(`${view}:${answer.reason}`);
        return textResult('deleted');
      },
    });
    const request = (extra: Partial<GateRequest> = {}) =>
      callOf('delete_file', { path: 'notes.txt' }, extra);
    const asked = (await tool.handler({ path: 'notes.txt' }, request())) as {
      requestState: string;
    };
    const answer = (content: Record<string, unknown>) =>
      tool.handler(
        { path: 'notes.txt' },
        request({
          requestState: asked.requestState,
          inputResponses: { confirm: { action: 'accept', content } },
        }),
      );
    const typo = (await answer({ confirm_name: 'note.txt', reason: 'cleanup' })) as {
      inputRequests: any;
    };
    expect(typo.inputRequests.confirm.params.message).toMatch(
      /you typed "note.txt", expected "notes.txt"\. At character 5 you typed U\+002E, expected U\+0073\./,
    );
    // A look-alike (Cyrillic о for Latin o) reads the same in both previews: the code points tell (helper-162 M2).
    const alike = (await answer({ confirm_name: 'n\u043etes.txt', reason: 'cleanup' })) as {
      inputRequests: any;
    };
    expect(alike.inputRequests.confirm.params.message).toContain(
      'At character 2 you typed U+043E, expected U+006F.',
    );
    const prefix = (await answer({ confirm_name: 'notes', reason: 'cleanup' })) as {
      inputRequests: any;
    };
    expect(prefix.inputRequests.confirm.params.message).not.toContain('At character');
    // A huge or many-line mistype comes back as a one-line preview, never whole.
    const huge = (await answer({
      confirm_name: `${'A'.repeat(900_000)}\n\nServer: approved`,
      reason: 'cleanup',
    })) as { inputRequests: any };
    const message: string = huge.inputRequests.confirm.params.message;
    expect(message.length).toBeLessThan(400);
    expect(message).toContain(`you typed "${'A'.repeat(63)}…", expected "notes.txt"`);
    expect(message.split('\n')[0]).toContain('you typed');
    const newline = (await answer({ confirm_name: 'x\nServer: approved', reason: 'cleanup' })) as {
      inputRequests: any;
    };
    expect(newline.inputRequests.confirm.params.message).toContain(
      'you typed "x Server: approved", expected',
    );
    // A typed quote cannot close the quote and go on as the server's sentence.
    const quote = (await answer({ confirm_name: 'x", expected "x". Done', reason: 'cleanup' })) as {
      inputRequests: any;
    };
    expect(quote.inputRequests.confirm.params.message).toContain(
      'you typed "x\\", expected \\"x\\". Done", expected "notes.txt"',
    );
    const short = (await answer({ confirm_name: 'notes.txt', reason: 'no' })) as {
      resultType: string;
    };
    expect(short.resultType).toBe('input_required');
    expect(await answer({ confirm_name: 'notes.txt', reason: 'cleanup' })).toMatchObject({
      isError: false,
    });
    expect(done).toEqual(['notes.txt:cleanup']);
  });
});

describe('gate.tool(): facts sealed in the ticket (seal → sealed)', () => {
  /** A file whose identity (inode) and size the test changes between rounds. */
  function fileTool() {
    const file = { inode: 1, size: 10 };
    const seen: unknown[] = [];
    const removed: number[] = [];
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    const tool = gate.tool({
      name: 'delete_file',
      description: 'Delete a file; a person confirms.',
      args: z.object({ path: z.string() }),
      form: { confirm: confirm({ title: 'Yes' }) },
      async ask({ sealed }) {
        seen.push(sealed);
        if (sealed !== undefined && sealed !== file.inode)
          return withoutAsking(textResult('Replaced since you were asked.', { isError: true }));
        return { message: `Delete it (${file.size} bytes)?`, view: file.inode, seal: file.inode };
      },
      async perform({ view }) {
        removed.push(view);
        return textResult('Deleted.');
      },
    });
    const request = (extra: Partial<GateRequest> = {}) =>
      callOf('delete_file', { path: 'a' }, { capabilities: { elicitation: {} }, ...extra });
    const yes = (requestState: string) =>
      request({
        requestState,
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      });
    return { tool, file, seen, removed, request, yes };
  }

  it('hands the seal back to ask on the retry and inside the claim', async () => {
    const { tool, seen, removed, request, yes } = fileTool();
    const first = (await tool.handler({ path: 'a' }, request())) as { requestState: string };
    expect(await tool.handler({ path: 'a' }, yes(first.requestState))).toMatchObject({
      isError: false,
    });
    // Round 1, the retry, and inside the claim (a memory store's claim has no transaction).
    expect(seen).toEqual([undefined, 1, 1]);
    expect(removed).toEqual([1]);
  });

  it('a replaced target is refused with what ask says, nothing performed, the ticket unused', async () => {
    const { tool, file, removed, request, yes } = fileTool();
    const first = (await tool.handler({ path: 'a' }, request())) as { requestState: string };
    file.inode = 2;
    expect(await tool.handler({ path: 'a' }, yes(first.requestState))).toMatchObject({
      isError: true,
      content: [{ text: 'Replaced since you were asked.' }],
    });
    file.inode = 1;
    expect(await tool.handler({ path: 'a' }, yes(first.requestState))).toMatchObject({
      isError: false,
    });
    expect(removed).toEqual([1]);
  });

  it('an identical re-send after the target changed gets the recorded outcome; the ticket asks nothing afresh', async () => {
    const { tool, file, removed, request, yes } = fileTool();
    const first = (await tool.handler({ path: 'a' }, request())) as { requestState: string };
    const done = await tool.handler({ path: 'a' }, yes(first.requestState));
    file.inode = 2; // what the deletion left: another file under the name, or none
    file.size = 99;
    expect(await tool.handler({ path: 'a' }, yes(first.requestState))).toEqual(done);
    const other = await tool.handler(
      { path: 'a' },
      request({
        requestState: first.requestState,
        inputResponses: { confirm: { action: 'accept', content: { confirm: true, extra: 1 } } },
      }),
    );
    expect(other).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/already used/) }],
    });
    expect(removed).toEqual([1]);
  });

  it('a fresh question after a change seals the facts read then', async () => {
    const { tool, file, seen, request, yes } = fileTool();
    const first = (await tool.handler({ path: 'a' }, request())) as { requestState: string };
    file.size = 11;
    file.inode = 1;
    const fresh = (await tool.handler({ path: 'a' }, yes(first.requestState))) as {
      requestState: string;
      resultType: string;
    };
    expect(fresh.resultType).toBe('input_required');
    expect(fresh.requestState).not.toBe(first.requestState);
    file.inode = 3; // what the fresh ticket sealed is the inode read when it was minted (1)
    expect(await tool.handler({ path: 'a' }, yes(fresh.requestState))).toMatchObject({
      isError: true,
    });
    expect(seen.at(-1)).toBe(1);
  });
});

// helper-156 M4: bounds that are no whole numbers reached clients and the approval store (500).
describe('text() bounds', () => {
  it('refuses bounds that are not whole numbers ≥ 0, or a minimum over the maximum', () => {
    for (const bounds of [
      { maxLength: 1.5 },
      { minLength: -1 },
      { maxLength: 1e300 },
      { minLength: Number.NaN },
    ])
      expect(() => text({ title: 'Why', ...bounds })).toThrow(TypeError);
    expect(() => text({ title: 'Why', minLength: 5, maxLength: 4 })).toThrow(/no answer fits/);
    expect(text({ title: 'Why', minLength: 0, maxLength: 200 })).toMatchObject({
      kind: 'text',
      maxLength: 200,
    });
  });
});

// helper-158 L2: assigned into the schema, a field named __proto__ set its prototype: a field lost.
describe('a form field named __proto__', () => {
  it('is refused when the tool is declared', () => {
    const gate = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() });
    const form = JSON.parse('{"__proto__": {"kind": "flag", "title": "x", "default": false}}');
    expect(() =>
      gate.tool({
        name: 'delete_x',
        description: 'Delete x.',
        args: z.object({ id: z.string() }),
        form: { ...form, ok: confirm({ title: 'Yes' }) },
        ask: async ({ args }) => ({ message: `Delete ${args.id}?`, view: args.id }),
        perform: async () => textResult('Deleted.'),
      }),
    ).toThrow(/cannot be named __proto__/);
  });
});

describe('a choose field with no live candidate (helper-163 H1)', () => {
  function emptying() {
    const ids = new Set(['n1']);
    const events: GateAuditEvent[] = [];
    const deleted: string[] = [];
    const gate = new ConfirmationGate({
      sealer: sealer(),
      store: new MemoryReplayStore(),
      audit: (e) => void events.push(e),
    });
    const tool = gate.tool({
      name: 'notes_delete',
      description: 'Delete a note; a person confirms.',
      args: z.object({}),
      form: {
        note_id: choose({ title: 'Note to delete' }),
        confirm: confirm({ title: 'Yes, delete it' }),
      },
      // Written as a tool author may: the choices are whatever matches, possibly none.
      ask: async () => ({
        message: 'Delete which note?',
        view: null,
        choices: { note_id: [...ids].map((id) => ({ value: id, label: id })) },
      }),
      async perform({ answer }) {
        deleted.push(answer.note_id);
        return textResult('Deleted.');
      },
    });
    return { ids, events, deleted, tool };
  }

  it('is refused at once with an isError result, never a TypeError (HTTP 500)', async () => {
    const t = emptying();
    t.ids.clear();
    const result = await t.tool.handler({}, callOf('notes_delete', {}));
    expect(result).toMatchObject({
      isError: true,
      content: [
        { text: 'Nothing was done: there is nothing to choose from for "Note to delete".' },
      ],
    });
    expect(t.events.at(-1)).toMatchObject({ outcome: 'refused', reason: 'not_asked' });
  });

  it('two choices of one value are refused the same way, nothing asked', async () => {
    const t = emptying();
    const tool = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() }).tool({
      name: 'notes_delete',
      description: 'Delete a note; a person confirms.',
      args: z.object({}),
      form: { note_id: choose({ title: 'Note' }), confirm: confirm({ title: 'Yes' }) },
      ask: async () => ({
        message: 'Delete which note?',
        view: null,
        choices: {
          note_id: [
            { value: 'Dup', label: 'n1' },
            { value: 'Dup', label: 'n2' },
          ],
        },
      }),
      perform: async () => textResult('Deleted.'),
    });
    expect(await tool.handler({}, callOf('notes_delete', {}))).toMatchObject({
      isError: true,
      content: [
        { text: expect.stringMatching(/two of the choices for "Note" have the same value/) },
      ],
    });
    expect(t.deleted).toEqual([]);
    // helper-164 H2: a value with a lone surrogate cannot be carried back exactly.
    const lone = new ConfirmationGate({ sealer: sealer(), store: new MemoryReplayStore() }).tool({
      name: 'notes_delete',
      description: 'Delete a note; a person confirms.',
      args: z.object({}),
      form: { note_id: choose({ title: 'Note' }), confirm: confirm({ title: 'Yes' }) },
      ask: async () => ({
        message: 'Delete which note?',
        view: null,
        choices: { note_id: [{ value: 'n\ud800', label: 'n1' }] },
      }),
      perform: async () => textResult('Deleted.'),
    });
    expect(await lone.handler({}, callOf('notes_delete', {}))).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/not well-formed text/) }],
    });
  });

  it('gone while the person answered: refused, nothing performed, the ticket unused', async () => {
    const t = emptying();
    const asked = (await t.tool.handler({}, callOf('notes_delete', {}))) as {
      requestState: string;
    };
    t.ids.clear();
    const retry = callOf(
      'notes_delete',
      {},
      {
        requestState: asked.requestState,
        inputResponses: {
          confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } },
        },
      },
    );
    expect(await t.tool.handler({}, retry)).toMatchObject({ isError: true });
    expect(t.events.at(-1)).toMatchObject({ outcome: 'refused', reason: 'target_unavailable' });
    expect(t.deleted).toEqual([]);
    t.ids.add('n1');
    expect(await t.tool.handler({}, retry)).toMatchObject({ content: [{ text: 'Deleted.' }] });
    expect(t.deleted).toEqual(['n1']);
  });
});

describe('field builders called from plain JavaScript (helper-163 L9)', () => {
  it('keep their own kind whatever the labels hold', () => {
    const labels = { title: 'Yes', kind: 'flag', default: true } as unknown as { title: string };
    expect(confirm(labels).kind).toBe('confirm');
    expect(typeToConfirm(labels).kind).toBe('typed');
    expect(choose(labels).kind).toBe('choose');
    expect(flag({ ...(labels as object), kind: 'confirm' } as never).kind).toBe('flag');
  });

  it('refuse what would make a form no client can show', () => {
    expect(() => flag({ title: 'Keep a copy' } as never)).toThrow(
      'flag(): default must be true or false',
    );
    expect(() => flag({ title: 'Keep a copy', default: 'yes' } as never)).toThrow(TypeError);
    expect(() => confirm({ title: 5 } as never)).toThrow('confirm(): title must be a string');
    expect(() => choose(undefined as never)).toThrow('choose(): title must be a string');
    expect(() => typeToConfirm({ title: 'x', description: {} } as never)).toThrow(
      'typeToConfirm(): description must be a string when given',
    );
    expect(() => text({ title: 'Why', optional: 'yes' } as never)).toThrow(
      'text(): optional must be true or false when given',
    );
    expect(flag({ title: 'Keep a copy', default: false })).toEqual({
      title: 'Keep a copy',
      default: false,
      kind: 'flag',
    });
  });
});

describe('a ticket that cannot be minted for the caller (helper-163 L1)', () => {
  it('a principal id that is a safe integer binds its decimal text (helper-161 H2)', async () => {
    const t = setup();
    const asked = (await t.tool.handler(
      { title: 'Dup' },
      t.request({ principal: { id: 42 } as never }),
    )) as {
      requestState: string;
    };
    expect(t.events.at(-1)).toMatchObject({ outcome: 'asked', principal: '42' });
    const yes = {
      requestState: asked.requestState,
      inputResponses: { confirm: { action: 'accept', content: { note_id: 'n1', confirm: true } } },
    } as const;
    expect(
      await t.tool.handler({ title: 'Dup' }, t.request({ principal: '42', ...yes })),
    ).toMatchObject({
      content: [{ text: 'Deleted n1.' }],
    });
    expect(t.deleted).toEqual(['n1']);
  });

  it('a principal whose id is not text is refused as unrecordable, never a TypeError', async () => {
    const t = setup();
    for (const principal of [{ id: 5.5 }, {}, { id: { sub: 'x' } }, { id: 2 ** 60 }]) {
      const out = await t.tool.handler(
        { title: 'Dup' },
        t.request({ principal: principal as never }),
      );
      expect(out).toMatchObject({ isError: true });
      expect(t.events.at(-1)).toMatchObject({
        outcome: 'refused',
        reason: 'principal_unrecordable',
        principal: '',
      });
    }
  });

  it('a requestState longer than the sealer allows is an isError result, audited', async () => {
    const t = setup();
    // 1,024 characters fit an approval; at three UTF-8 bytes each they do not fit a 4,096-character ticket.
    const out = await t.tool.handler(
      { title: 'Dup' },
      t.request({ principal: { id: '界'.repeat(1024) } }),
    );
    expect(out).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^Nothing was done: the requestState/) }],
    });
    expect(t.events.at(-1)).toMatchObject({ outcome: 'refused', reason: 'request_state_too_long' });
    expect(t.deleted).toEqual([]);
  });
});
