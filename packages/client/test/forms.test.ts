import { describe, expect, it } from 'vitest';
import { checkRenderable, InvalidAnswerError, McpClient } from '../src/index.js';
import { confirmSchema, done, formRequest, scriptedAnswerer, serveScripted } from './helpers.js';

const serve = serveScripted();
/** A server that asks `inputRequests` once, then completes. */
const askOnce = (inputRequests: Record<string, unknown>) =>
  serve((_b, n) =>
    n === 0 ? { result: { resultType: 'input_required', inputRequests } } : done(),
  );

describe('checkRenderable: the flat subset of client/elicitation', () => {
  it('accepts every field kind of the subset', () => {
    const r = checkRenderable({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        s: {
          type: 'string',
          title: 'S',
          minLength: 1,
          maxLength: 5,
          format: 'email',
          default: 'a@b.c',
        },
        n: { type: 'number', minimum: 0, maximum: 1 },
        i: { type: 'integer', description: 'whole' },
        b: { type: 'boolean', default: false },
        e: { type: 'string', enum: ['x', 'y'], enumNames: ['X', 'Y'] },
        o: { type: 'string', oneOf: [{ const: 'x', title: 'X' }] },
        m: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 1 },
        t: { type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }] } },
      },
      required: ['s', 'b'],
    });
    expect(r.ok).toBe(true);
  });

  it.each([
    [
      'a nested object',
      { p: { type: 'object', properties: { q: { type: 'string' } } } },
      /type "object"/,
    ],
    ['a pattern it cannot enforce', { p: { type: 'string', pattern: '^a+$' } }, /"pattern"/],
    [
      'an array of objects',
      { p: { type: 'array', items: { type: 'object' } } },
      /list of something other/,
    ],
    ['a composition keyword', { p: { anyOf: [{ type: 'string' }] } }, /type undefined/],
    ['a $ref', { p: { $ref: '#/defs/x' } }, /type undefined/],
    ['a minLength on an enum', { p: { type: 'string', enum: ['a'], minLength: 1 } }, /"minLength"/],
  ])('declines %s', (_label, properties, reason) => {
    const r = checkRenderable({ type: 'object', properties });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reasons.join('; ')).toMatch(reason);
  });

  // helper-153 #1: zod's copy of these dropped a field or turned a choice into free text.
  it.each([
    ['an enum of numbers', { p: { type: 'string', enum: [1, 2] } }],
    ['options without titles', { p: { type: 'string', oneOf: [{ const: 'keep' }] } }],
    ['a numeric const', { p: { type: 'string', oneOf: [{ const: 1, title: 'One' }] } }],
    ['enumNames of another type', { p: { type: 'string', enum: ['a', 'b'], enumNames: ['A', 2] } }],
    [
      'an option with a member no form shows',
      { p: { type: 'string', oneOf: [{ const: 'a', title: 'A', x: 1 }] } },
    ],
  ])('declines a choice it would show as something else: %s', (_label, properties) => {
    const r = checkRenderable({ type: 'object', properties });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reasons.join('; ')).toMatch(/field "p"/);
  });

  it('declines a field named __proto__ rather than leave it out of the form', () => {
    const schema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"boolean","title":"DELETE ALL","default":true},"keep":{"type":"boolean"}}}',
    );
    const r = checkRenderable(schema);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reasons.join('; ')).toMatch(/field "__proto__" cannot be shown as sent/);
    // `$comment`, which no form shows, does not make a field another one.
    const commented = { type: 'object', properties: { k: { type: 'boolean', $comment: 'x' } } };
    expect(checkRenderable(commented).ok).toBe(true);
  });

  it('declines a required name that is not a property, and a non-object schema', () => {
    const r = checkRenderable({ type: 'object', properties: {}, required: ['ghost'] });
    expect(r.ok).toBe(false);
    expect(checkRenderable({ type: 'array', items: {} }).ok).toBe(false);
    expect(checkRenderable('form').ok).toBe(false);
    expect(checkRenderable({ type: 'object', properties: {}, allOf: [] }).ok).toBe(false);
  });
});

describe('form answers', () => {
  it('declines a form it cannot draw without asking, reports it, and still asks the rest', async () => {
    const nested = { type: 'object', properties: { addr: { type: 'object', properties: {} } } };
    const s = await askOnce({ bad: formRequest(nested), good: formRequest(confirmSchema) });
    const { answerer, questions } = scriptedAnswerer([
      { action: 'accept', content: { confirm: true } },
    ]);
    const seen: unknown[] = [];
    const out = await new McpClient({ url: s.url, answerer }).callTool(
      't',
      {},
      { onEvent: (e) => seen.push(e) },
    );
    expect(questions.map((q) => q.key)).toEqual(['good']);
    expect(s.requests[1]?.body.params.inputResponses).toEqual({
      bad: { action: 'decline' },
      good: { action: 'accept', content: { confirm: true } },
    });
    expect(out.autoDeclined).toHaveLength(1);
    expect(out.autoDeclined[0]).toMatchObject({ type: 'auto-declined', key: 'bad', mode: 'form' });
    expect(out.autoDeclined[0]?.reasons.join()).toMatch(/addr/);
    expect(seen).toContainEqual(out.autoDeclined[0]);
  });

  it('declines a form when it never declared form elicitation', async () => {
    const s = await askOnce({ q: formRequest(confirmSchema) });
    const urlOnly = { url: { ask: async () => ({ action: 'accept' as const }), open() {} } };
    const out = await new McpClient({ url: s.url, answerer: urlOnly }).callTool('t');
    expect(s.requests[1]?.body.params.inputResponses).toEqual({ q: { action: 'decline' } });
    expect(out.autoDeclined[0]?.reasons).toEqual(['this client did not declare form elicitation']);
  });

  it('validates accepted content before sending and asks again with the issues', async () => {
    const schema = {
      type: 'object',
      properties: {
        id: { type: 'string', enum: ['n1', 'n2'] },
        reason: { type: 'string', minLength: 5 },
        keep: { type: 'integer', minimum: 0, maximum: 3 },
      },
      required: ['id', 'reason'],
    };
    const s = await askOnce({ q: formRequest(schema) });
    const { answerer, questions } = scriptedAnswerer([
      { action: 'accept', content: { id: 'n9', reason: 'no', keep: 7, extra: true } as any },
      { action: 'accept', content: { id: 'n2', reason: 'tidy up' } },
    ]);
    const out = await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1]?.body.params.inputResponses.q).toEqual({
      action: 'accept',
      content: { id: 'n2', reason: 'tidy up' },
    });
    const retry = (questions[1] as any).retry;
    expect(retry.issues.map((i: any) => i.field).sort()).toEqual(['extra', 'id', 'keep', 'reason']);
    expect(retry.content.id).toBe('n9');
    expect(out.events.filter((e) => e.type === 'invalid-answer')).toHaveLength(1);
  });

  it('sends nothing when the answerer keeps giving invalid content', async () => {
    const s = await askOnce({ q: formRequest(confirmSchema) });
    const bad = { action: 'accept' as const, content: { confirm: 'yes' } as any };
    const { answerer, questions } = scriptedAnswerer([bad, bad, bad]);
    const error = await new McpClient({ url: s.url, answerer }).callTool('t').catch((e) => e);
    expect(error).toBeInstanceOf(InvalidAnswerError);
    expect(error.issues[0].field).toBe('confirm');
    expect(questions).toHaveLength(3);
    expect(s.requests).toHaveLength(1);
  });

  it('never reads missing content as consent: accept without content fails validation', async () => {
    const s = await askOnce({ q: formRequest(confirmSchema) });
    const { answerer } = scriptedAnswerer([
      { action: 'accept' } as any,
      { action: 'accept' } as any,
      { action: 'accept' } as any,
    ]);
    await expect(new McpClient({ url: s.url, answerer }).callTool('t')).rejects.toBeInstanceOf(
      InvalidAnswerError,
    );
    expect(s.requests).toHaveLength(1);
  });

  it('strips content from decline and cancel, and rejects an answer that is not an action', async () => {
    const s = await askOnce({ a: formRequest(confirmSchema), b: formRequest(confirmSchema) });
    const { answerer } = scriptedAnswerer([
      { action: 'decline', content: { confirm: true } } as any,
      { action: 'cancel', content: { confirm: true } } as any,
    ]);
    await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(s.requests[1]?.body.params.inputResponses).toEqual({
      a: { action: 'decline' },
      b: { action: 'cancel' },
    });

    const s2 = await askOnce({ a: formRequest(confirmSchema) });
    const odd = scriptedAnswerer([{ action: 'approve' } as any]);
    await expect(
      new McpClient({ url: s2.url, answerer: odd.answerer }).callTool('t'),
    ).rejects.toBeInstanceOf(InvalidAnswerError);
  });

  it('cancels a question nobody answers within answerTimeoutMs, and aborts the prompt', async () => {
    const s = await askOnce({ q: formRequest(confirmSchema) });
    let aborted = false;
    const { answerer } = scriptedAnswerer([
      (q) =>
        new Promise(() => {
          q.signal.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    ]);
    const out = await new McpClient({ url: s.url, answerer, answerTimeoutMs: 50 }).callTool('t');
    expect(aborted).toBe(true);
    expect(s.requests[1]?.body.params.inputResponses).toEqual({ q: { action: 'cancel' } });
    expect(out.events).toContainEqual({
      type: 'timed-out',
      key: 'q',
      request: { method: 'tools/call', target: 't', arguments: {} },
      round: 1,
      afterMs: 50,
    });
  });

  it('shows the question with the server identity, the message verbatim and the call it belongs to', async () => {
    const message = 'Delete "a"?\n• note-1 (created 2026-01-01)\u202E';
    const s = await askOnce({ q: formRequest(confirmSchema, message) });
    const { answerer, questions } = scriptedAnswerer([{ action: 'decline' }]);
    await new McpClient({ url: s.url, answerer }).callTool('notes_delete', { title: 'a' });
    const q = questions[0] as any;
    expect(q.message).toBe(message);
    expect(q.server.url).toBe(s.url);
    expect(q.server.host).toBe(new URL(s.url).host);
    expect(q.request).toEqual({
      method: 'tools/call',
      target: 'notes_delete',
      arguments: { title: 'a' },
    });
    expect(q.round).toBe(1);
  });
});

describe('checkRenderable: forms no answer fits, or that cannot be shown faithfully (helper-163 L14)', () => {
  const form = (field: Record<string, unknown>) => ({
    type: 'object',
    properties: { f: field },
    required: ['f'],
  });
  it('are declined, each with its reason', () => {
    for (const [field, reason] of [
      [{ type: 'string', enum: [] }, /offers no choice/],
      [{ type: 'string', oneOf: [] }, /offers no choice/],
      [{ type: 'string', minLength: 5, maxLength: 2 }, /minLength above maxLength/],
      [{ type: 'number', minimum: 5, maximum: 2 }, /minimum above maximum/],
      [{ type: 'string', enum: ['a', 'b'], enumNames: ['A'] }, /1 labels for 2 options/],
      [{ type: 'string', enum: ['a', 'b'], default: 'c' }, /default that is not among/],
      [
        { type: 'array', items: { type: 'string', enum: ['a'] }, minItems: 2 },
        /more choices than it offers/,
      ],
    ] as const) {
      const r = checkRenderable(form(field));
      expect(r.ok, JSON.stringify(field)).toBe(false);
      if (!r.ok) expect(r.reasons.join('; '), JSON.stringify(field)).toMatch(reason);
    }
  });
  it('leave forms that fit alone', () => {
    for (const field of [
      { type: 'string', enum: ['a', 'b'], enumNames: ['A', 'B'], default: 'b' },
      { type: 'string', minLength: 2, maxLength: 2 },
      { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 1, default: ['a'] },
      { type: 'boolean', default: false },
    ])
      expect(checkRenderable(form(field)).ok, JSON.stringify(field)).toBe(true);
  });
});
