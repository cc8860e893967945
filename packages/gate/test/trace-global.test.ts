import { MemoryReplayStore } from '@mrtr/replay';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfirmationGate, TRACER_NAME } from '../src/index.js';

afterAll(() => {
  trace.disable();
  propagation.disable();
});

describe('with a globally registered SDK and no tracer option', () => {
  it('uses the global tracer and propagator: the round span continues the _meta trace', async () => {
    // The gate is built before the SDK is registered, as in an app that sets up tracing later.
    const gate = new ConfirmationGate({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: 'c'.repeat(32) }] }),
      store: new MemoryReplayStore(),
    });
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    await gate.run(
      {
        principal: 'alice',
        method: 'tools/call',
        name: 'delete_volume',
        arguments: { volumeId: 'vol_1' },
        capabilities: { elicitation: { form: {} } },
        inputResponses: undefined,
        requestState: undefined,
        meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      },
      {
        key: 'confirm',
        prepare: async () => ({ view: undefined }),
        question: () => ({
          message: 'Delete vol_1?',
          requestedSchema: { type: 'object', properties: {} },
        }),
        consents: () => true,
        perform: async () => textResult('done'),
      },
    );
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('tools/call delete_volume');
    expect(span?.instrumentationScope.name).toBe(TRACER_NAME);
    expect(span?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
  });
});
