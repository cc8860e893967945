import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmationGate,
  type GateAuditEvent,
  type GateRequest,
  type GateSpec,
} from '../src/index.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('gate-test');
const propagator = new CompositePropagator({
  propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
});
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  contextManager.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

const secret = 'b'.repeat(32);
const CLIENT_1 = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '00f067aa0ba902b7' };
const CLIENT_2 = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '53995c3f42cd8ad8' };
const traceparent = (c: { traceId: string; spanId: string }) => `00-${c.traceId}-${c.spanId}-01`;

function setup(options: { traced?: boolean } = {}) {
  const events: GateAuditEvent[] = [];
  const seen: { baggage?: string; parentOfChild?: string } = {};
  const sealer = new TicketSealer({ keys: [{ kid: 'k1', secret }] });
  const gate = new ConfirmationGate({
    sealer,
    store: new MemoryReplayStore(),
    audit: (e) => {
      events.push(e);
    },
    ...(options.traced === false ? {} : { tracer, propagator }),
  });
  const spec: GateSpec<{ name: string }, void> = {
    key: 'confirm_delete',
    prepare: async () => ({ view: { name: 'api-prod' } }),
    question: ({ view }) => ({
      message: `Delete ${view.name}?`,
      requestedSchema: {
        type: 'object',
        properties: { serviceName: { type: 'string' } },
        required: ['serviceName'],
      },
    }),
    check: (content, { view }) => (content.serviceName === view.name ? undefined : 'No match.'),
    consents: () => true, // typing the name (check) is the consent
    perform: async () => {
      // Runs in the round's context: baggage from _meta, and the round span as parent of child spans.
      seen.baggage = propagation.getBaggage(context.active())?.getEntry('tenant')?.value;
      const child = tracer.startSpan('db.delete');
      seen.parentOfChild = (child as unknown as ReadableSpan).parentSpanContext?.spanId;
      child.end();
      return textResult('Deleted api-prod.');
    },
  };
  let id = 0;
  const request = (
    client: { traceId: string; spanId: string } | undefined,
    extra: Partial<GateRequest> = {},
  ): GateRequest => ({
    principal: 'alice',
    method: 'tools/call',
    name: 'delete_service',
    arguments: { serviceId: 'svc_1' },
    capabilities: { elicitation: {} },
    inputResponses: undefined,
    requestState: undefined,
    requestId: ++id,
    meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      ...(client
        ? {
            traceparent: traceparent(client),
            tracestate: 'rojo=00f067aa0ba902b7',
            baggage: 'tenant=acme',
          }
        : {}),
    },
    ...extra,
  });
  const answer = (state: string, response: Record<string, unknown>, client = CLIENT_2) =>
    gate.run(
      request(client, { requestState: state, inputResponses: { confirm_delete: response } }),
      spec,
    );
  return { gate, spec, sealer, events, seen, request, answer };
}

const gateSpans = () => exporter.getFinishedSpans().filter((s) => s.name.startsWith('tools/call'));

describe('round spans', () => {
  it('a completed operation: one SERVER span per round, children of the _meta trace context, linked to the asking round', async () => {
    const t = setup();
    const first = (await t.gate.run(t.request(CLIENT_1), t.spec)) as { requestState: string };
    await t.answer(first.requestState, { action: 'accept', content: { serviceName: 'api-prd' } });
    await t.answer(first.requestState, { action: 'accept', content: { serviceName: 'api-prod' } });
    const [ask, again, done] = gateSpans();
    expect(gateSpans()).toHaveLength(3);
    const nonce = t.events[0]?.nonce as string;

    for (const s of [ask, again, done]) {
      expect(s?.name).toBe('tools/call delete_service');
      expect(s?.kind).toBe(SpanKind.SERVER);
      expect(s?.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'delete_service',
        'gen_ai.operation.name': 'execute_tool',
        'mcp.protocol.version': '2026-07-28',
        'mrtr.gate.phase': 'confirm',
        'mrtr.ticket.nonce': nonce,
      });
    }
    // Round 1 continues the client's trace: same trace id, the client span as parent, tracestate kept.
    expect(ask?.spanContext().traceId).toBe(CLIENT_1.traceId);
    expect(ask?.parentSpanContext?.spanId).toBe(CLIENT_1.spanId);
    expect(ask?.parentSpanContext?.traceState?.get('rojo')).toBe('00f067aa0ba902b7');
    expect(ask?.attributes).toMatchObject({
      'jsonrpc.request.id': '1',
      'mrtr.gate.outcome': 'asked',
    });
    expect(ask?.links).toEqual([]);
    // Later rounds arrive in another trace; each links back to the round that minted the ticket.
    for (const s of [again, done]) {
      expect(s?.spanContext().traceId).toBe(CLIENT_2.traceId);
      expect(s?.links).toHaveLength(1);
      expect(s?.links[0]?.context).toMatchObject({
        traceId: ask?.spanContext().traceId,
        spanId: ask?.spanContext().spanId,
      });
      expect(s?.links[0]?.attributes).toEqual({ 'mrtr.link': 'previous_round' });
    }
    expect(again?.attributes).toMatchObject({
      'mrtr.gate.outcome': 'asked_again',
      'mrtr.gate.reason': 'check_failed',
      'mrtr.gate.answer.action': 'accept',
    });
    expect(done?.attributes).toMatchObject({
      'jsonrpc.request.id': '3',
      'mrtr.gate.outcome': 'completed',
      'mrtr.gate.answer.action': 'accept',
    });
    expect(done?.events.map((e) => e.name)).toEqual(['mrtr.gate.accepted', 'mrtr.gate.completed']);
    expect(done?.status.code).toBe(SpanStatusCode.UNSET);
    // perform ran in the round's context
    expect(t.seen).toEqual({ baggage: 'acme', parentOfChild: done?.spanContext().spanId });
    // The audit records name their round's span.
    expect(t.events.map((e) => e.trace?.spanId)).toEqual([
      ask?.spanContext().spanId,
      again?.spanContext().spanId,
      done?.spanContext().spanId,
      done?.spanContext().spanId,
    ]);
  });

  it('declined and cancelled rounds end with their outcome and no error status', async () => {
    const t = setup();
    const a = (await t.gate.run(t.request(CLIENT_1), t.spec)) as { requestState: string };
    await t.answer(a.requestState, { action: 'cancel' });
    await t.answer(a.requestState, { action: 'decline' });
    const [, cancelled, declined] = gateSpans();
    expect(cancelled?.attributes['mrtr.gate.outcome']).toBe('cancelled');
    expect(cancelled?.attributes['mrtr.gate.answer.action']).toBe('cancel');
    expect(declined?.attributes['mrtr.gate.outcome']).toBe('declined');
    for (const s of [cancelled, declined]) {
      expect(s?.status.code).toBe(SpanStatusCode.UNSET);
      expect(s?.links[0]?.context.spanId).toBe(gateSpans()[0]?.spanContext().spanId);
    }
  });

  it('refused rounds are errors: a broken ticket (no link: it did not open), a used nonce', async () => {
    const t = setup();
    const a = (await t.gate.run(t.request(CLIENT_1), t.spec)) as { requestState: string };
    // The second-to-last character: all six of its bits are data whatever the length, so the
    // ticket stays canonical base64url and fails its MAC (the last one's low bits may be padding).
    const broken = `${a.requestState.slice(0, -2)}${a.requestState.at(-2) === 'A' ? 'B' : 'A'}${a.requestState.at(-1)}`;
    await expect(t.answer(broken, { action: 'decline' })).rejects.toMatchObject({ code: -32602 });
    await t.answer(a.requestState, { action: 'decline' });
    await t.answer(a.requestState, { action: 'accept', content: { serviceName: 'api-prod' } });
    const [, bad, , used] = gateSpans();
    expect(bad?.attributes).toMatchObject({
      'mrtr.gate.outcome': 'refused',
      'mrtr.gate.reason': 'ticket_mac',
      'error.type': 'McpError',
    });
    expect(bad?.attributes['mrtr.ticket.nonce']).toBeUndefined();
    expect(bad?.status.code).toBe(SpanStatusCode.ERROR);
    expect(bad?.links).toEqual([]);
    expect(used?.attributes).toMatchObject({
      'mrtr.gate.outcome': 'refused',
      'mrtr.gate.reason': 'nonce_used',
      'error.type': 'tool_error',
    });
    expect(used?.status.code).toBe(SpanStatusCode.ERROR);
    expect(used?.links).toHaveLength(1);
  });

  it('without _meta trace context the round span is a root span (or the active span’s child)', async () => {
    const t = setup();
    await t.gate.run(t.request(undefined), t.spec);
    expect(gateSpans()[0]?.parentSpanContext).toBeUndefined();
    const outer = tracer.startSpan('http.request');
    await context.with(trace.setSpan(context.active(), outer), () =>
      t.gate.run(t.request(undefined), t.spec),
    );
    outer.end();
    expect(gateSpans()[1]?.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
  });

  it('the ticket carries the asking span only when a span records: no SDK, no extra bytes', async () => {
    const traced = setup();
    const untraced = setup({ traced: false });
    const binding = { sub: 'alice', op: 'tools/call:delete_service' };
    const open = async (s: ReturnType<typeof setup>) => {
      const r = (await s.gate.run(s.request(CLIENT_1), s.spec)) as { requestState: string };
      const argsDigest = s.events[0]?.argumentsDigest as string;
      const opened = s.sealer.open<string>(r.requestState, { ...binding, argsDigest });
      if (!opened.ok) throw new Error(opened.reason);
      return { data: opened.claims.data, length: r.requestState.length };
    };
    const withSpan = await open(traced);
    const without = await open(untraced);
    expect(withSpan.data).toBe(
      `${gateSpans()[0]?.spanContext().traceId}${gateSpans()[0]?.spanContext().spanId}01`,
    );
    expect(without.data).toBeUndefined();
    expect(withSpan.length).toBeGreaterThan(without.length);
    expect(untraced.events[0]?.trace).toBeUndefined();
  });
});
