import { z } from 'zod';

/** The protocol revision this project speaks. */
export const PROTOCOL_VERSION = '2026-07-28';

/** The `_meta` keys MCP 2026-07-28 defines on every request (`basic/index`, "_meta"). */
export const MetaKey = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
} as const;

const JSONObjectSchema = z.record(z.string(), z.unknown());

/**
 * `ClientCapabilities`: what the client can do for this one request. Unknown
 * capabilities are kept: the set is open by the spec.
 */
export const ClientCapabilitiesSchema = z.looseObject({
  elicitation: z
    .looseObject({ form: JSONObjectSchema.optional(), url: JSONObjectSchema.optional() })
    .optional(),
  sampling: JSONObjectSchema.optional(),
  roots: JSONObjectSchema.optional(),
  experimental: z.record(z.string(), JSONObjectSchema).optional(),
  extensions: z.record(z.string(), JSONObjectSchema).optional(),
});
/** `ClientCapabilities` of MCP 2026-07-28. */
export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

/** `Implementation`: the name and version a client or server reports about itself. */
export const ImplementationSchema = z.looseObject({
  name: z.string(),
  version: z.string(),
  title: z.string().optional(),
});
/** `Implementation` of MCP 2026-07-28. */
export type Implementation = z.infer<typeof ImplementationSchema>;

/** `LoggingLevel` (RFC 5424 severities, as MCP names them). */
export const LoggingLevelSchema = z.enum([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]);

/**
 * `RequestMetaObject`: the request `_meta`, with the protocol version, client
 * identity and capabilities of this request, plus W3C trace context keys.
 * Other keys are kept untouched.
 */
export const RequestMetaSchema = z.looseObject({
  [MetaKey.protocolVersion]: z.string().optional(),
  [MetaKey.clientInfo]: ImplementationSchema.optional(),
  [MetaKey.clientCapabilities]: ClientCapabilitiesSchema.optional(),
  [MetaKey.logLevel]: LoggingLevelSchema.optional(),
  traceparent: z.string().optional(),
  tracestate: z.string().optional(),
  baggage: z.string().optional(),
});
/** The request `_meta` object. */
export type RequestMeta = z.infer<typeof RequestMetaSchema>;

/**
 * Whether these capabilities allow a form-mode `elicitation/create`:
 * `{elicitation: {}}` (form implied) or `{elicitation: {form: {}}}`. A
 * URL-only declaration does not (`client/elicitation`, "Capabilities").
 */
export function supportsFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const e = capabilities?.elicitation;
  if (e === undefined || e === null || typeof e !== 'object') return false;
  if (e.form !== undefined) return true;
  return e.url === undefined;
}

/** Whether these capabilities allow a URL-mode `elicitation/create` (`{elicitation: {url: {}}}`). */
export function supportsUrlElicitation(capabilities: ClientCapabilities | undefined): boolean {
  return capabilities?.elicitation?.url !== undefined;
}
