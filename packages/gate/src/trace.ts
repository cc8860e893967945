import {
  type Context,
  context,
  isSpanContextValid,
  type Link,
  propagation,
  type Span,
  type SpanContext,
  SpanKind,
  type TextMapGetter,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { recordedText } from './recorded-text.js';

/** The W3C trace context keys MCP 2026-07-28 reserves in a request `_meta` (`basic/index`, "OpenTelemetry trace context"). */
export const TRACE_META_KEYS = Object.freeze(['traceparent', 'tracestate', 'baggage'] as const);

/** Instrumentation scope name of the gate's spans. */
export const TRACER_NAME = '@mrtr/gate';

/** Span attribute keys the gate sets (OpenTelemetry MCP semantic conventions, plus `mrtr.*`). */
export const SpanAttribute = Object.freeze({
  method: 'mcp.method.name',
  tool: 'gen_ai.tool.name',
  prompt: 'gen_ai.prompt.name',
  resource: 'mcp.resource.uri',
  operationName: 'gen_ai.operation.name',
  requestId: 'jsonrpc.request.id',
  protocolVersion: 'mcp.protocol.version',
  errorType: 'error.type',
  phase: 'mrtr.gate.phase',
  outcome: 'mrtr.gate.outcome',
  reason: 'mrtr.gate.reason',
  action: 'mrtr.gate.answer.action',
  argumentsDigest: 'mrtr.gate.arguments_digest',
  nonce: 'mrtr.ticket.nonce',
  link: 'mrtr.link',
} as const);

/** Reads `traceparent`, `tracestate` and `baggage` (strings only) from a `_meta` carrier. */
const metaGetter: TextMapGetter<Record<string, string>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/**
 * The context a round's span starts in: the active context with the trace
 * context of the request `_meta` extracted onto it, so the span is a child of
 * the client's span (OpenTelemetry MCP semantic conventions, "Context
 * propagation"). Only the three reserved keys reach the propagator.
 * @param meta the request `_meta` as received (anything).
 * @param propagator the W3C propagator to use (default: the global one, a no-op until an SDK sets it).
 */
export function parentContext(
  meta: unknown,
  propagator?: Pick<TextMapPropagator, 'extract'>,
): Context {
  const active = context.active();
  if (meta === null || typeof meta !== 'object') return active;
  const carrier: Record<string, string> = {};
  for (const key of TRACE_META_KEYS) {
    const value = (meta as Record<string, unknown>)[key];
    if (typeof value === 'string') carrier[key] = value;
  }
  if (Object.keys(carrier).length === 0) return active;
  return (propagator ?? propagation).extract(active, carrier, metaGetter);
}

/**
 * Start the span of one round: name `{mcp.method.name} {target}` with the tool
 * or prompt name as target (a resource URI is an attribute only: it is not low-cardinality), kind SERVER.
 */
export function startRoundSpan(
  tracer: Tracer,
  parent: Context,
  request: {
    method: string;
    name: string;
    requestId?: string | number | undefined;
    meta?: unknown;
  },
  phase: string,
): Span {
  const attributes: Record<string, string> = {
    [SpanAttribute.method]: request.method,
    [SpanAttribute.phase]: phase,
  };
  let target = '';
  if (request.method === 'tools/call') {
    attributes[SpanAttribute.tool] = request.name;
    attributes[SpanAttribute.operationName] = 'execute_tool';
    target = ` ${request.name}`;
  } else if (request.method === 'prompts/get') {
    attributes[SpanAttribute.prompt] = request.name;
    target = ` ${request.name}`;
  } else if (request.method === 'resources/read') {
    attributes[SpanAttribute.resource] = recordedText(request.name);
  }
  if (request.requestId !== undefined)
    attributes[SpanAttribute.requestId] = recordedText(String(request.requestId));
  const version = (request.meta as Record<string, unknown> | undefined)?.[
    'io.modelcontextprotocol/protocolVersion'
  ];
  if (typeof version === 'string') attributes[SpanAttribute.protocolVersion] = version;
  return tracer.startSpan(
    `${request.method}${target}`,
    { kind: SpanKind.SERVER, attributes },
    parent,
  );
}

let cachedProvider: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/**
 * The default tracer: the global provider's, resolved when used (a no-op until an SDK is registered).
 * Kept while the global provider stays the same object: the API's proxy provider hands out a new
 * proxy tracer on every call until an SDK registers, and each one looks its delegate up when used.
 */
export function defaultTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (provider !== cachedProvider || cachedTracer === undefined) {
    cachedTracer = provider.getTracer(TRACER_NAME);
    cachedProvider = provider;
  }
  return cachedTracer;
}

const SEALED = /^([0-9a-f]{32})([0-9a-f]{16})([0-9a-f]{2})$/;

/**
 * The compact form of a recording span's context sealed in a ticket (trace
 * id, span id and flags as 50 hex digits), so a later round can link to the
 * round that asked. `undefined` when the span records nothing: with no SDK the
 * ticket stays as small as before.
 */
export function sealTraceContext(span: Span): string | undefined {
  if (!span.isRecording()) return undefined;
  const c = span.spanContext();
  if (!isSpanContextValid(c)) return undefined;
  return `${c.traceId}${c.spanId}${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The link from a round to the round that minted its ticket, or `undefined` for a malformed value. */
export function previousRoundLink(sealed: string): Link | undefined {
  const m = SEALED.exec(sealed);
  if (!m) return undefined;
  const spanContext: SpanContext = {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16),
    isRemote: true,
  };
  if (!isSpanContextValid(spanContext)) return undefined;
  return { context: spanContext, attributes: { [SpanAttribute.link]: 'previous_round' } };
}
