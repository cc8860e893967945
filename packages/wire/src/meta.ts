import { z } from 'zod';
import { JSONObjectSchema } from './jsonrpc.js';

/** The protocol revision this project speaks. */
export const PROTOCOL_VERSION = '2026-07-28';

/** The `_meta` keys MCP 2026-07-28 defines on every request (`basic/index`, "_meta"). */
export const MetaKey = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  /** Result `_meta` key naming the server (`basic/index`, "Per-response protocol fields"). */
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const);

/**
 * `ClientCapabilities`: what the client can do for this one request. Unknown
 * capabilities are kept: the set is open by the spec.
 */
export const ClientCapabilitiesSchema = z.looseObject({
  elicitation: z
    .looseObject({ form: JSONObjectSchema.optional(), url: JSONObjectSchema.optional() })
    .optional(),
  sampling: z
    .looseObject({ context: JSONObjectSchema.optional(), tools: JSONObjectSchema.optional() })
    .optional(),
  roots: JSONObjectSchema.optional(),
  experimental: z.record(z.string(), JSONObjectSchema).optional(),
  extensions: z.record(z.string(), JSONObjectSchema).optional(),
});
/** `ClientCapabilities` of MCP 2026-07-28. */
export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

/** `Icon`: an image a client may show beside a tool, prompt, resource or implementation. */
export const IconSchema = z.looseObject({
  src: z.string(),
  mimeType: z.string().optional(),
  sizes: z.array(z.string()).optional(),
  theme: z.enum(['light', 'dark']).optional(),
});
/** `Icon` of MCP 2026-07-28. */
export type Icon = z.infer<typeof IconSchema>;

/** `Implementation`: the name and version a client or server reports about itself. */
export const ImplementationSchema = z.looseObject({
  name: z.string(),
  version: z.string(),
  title: z.string().optional(),
  icons: z.array(IconSchema).optional(),
  websiteUrl: z.string().optional(),
});
/** `Implementation` of MCP 2026-07-28. */
export type Implementation = z.infer<typeof ImplementationSchema>;

/** `LoggingLevel` (RFC 5424 severities, as MCP names them), least severe first. */
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
/** `LoggingLevel` of MCP 2026-07-28. */
export type LoggingLevel = z.infer<typeof LoggingLevelSchema>;

/** `ProgressToken`: the `_meta.progressToken` that opts a request into `notifications/progress`. */
export const ProgressTokenSchema = z.union([z.string(), z.number().int()]);
/** `ProgressToken` of MCP 2026-07-28. */
export type ProgressToken = z.infer<typeof ProgressTokenSchema>;

/**
 * `RequestMetaObject`: the request `_meta`, with the protocol version, client
 * identity and capabilities of this request, `progressToken`, and the W3C
 * trace context keys `traceparent`, `tracestate` and `baggage`. Every key is
 * optional here so that a server can tell *which* required key is missing
 * (`basic/index`, "Per-request protocol fields": `protocolVersion` and
 * `clientCapabilities` are required, see {@link missingRequiredMetaKeys}).
 * Other keys are kept untouched.
 */
export const RequestMetaSchema = z.looseObject({
  progressToken: ProgressTokenSchema.optional(),
  [MetaKey.protocolVersion]: z.string().optional(),
  [MetaKey.clientInfo]: ImplementationSchema.optional(),
  [MetaKey.clientCapabilities]: ClientCapabilitiesSchema.optional(),
  [MetaKey.logLevel]: LoggingLevelSchema.optional(),
  traceparent: z.string().optional(),
  tracestate: z.string().optional(),
  baggage: z.string().optional(),
});
/** The request `_meta` object (`RequestMetaObject`). */
export type RequestMeta = z.infer<typeof RequestMetaSchema>;
/** Zod schema of `RequestMetaObject`; the same as {@link RequestMetaSchema}. */
export const RequestMetaObjectSchema = RequestMetaSchema;
/** `RequestMetaObject` of MCP 2026-07-28. */
export type RequestMetaObject = RequestMeta;

/**
 * The `_meta` keys every request must carry that this one lacks
 * (`io.modelcontextprotocol/protocolVersion`, `io.modelcontextprotocol/clientCapabilities`).
 * @param meta the raw `params._meta`, anything
 * @returns the missing keys, in that order; `[]` when both are present. A
 *   `_meta` that is not an object lacks both.
 */
export function missingRequiredMetaKeys(meta: unknown): string[] {
  const required = [MetaKey.protocolVersion, MetaKey.clientCapabilities];
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return required;
  return required.filter((key) => !Object.hasOwn(meta, key));
}

/** `ResultMetaObject`: a result's `_meta`, where the server names itself. */
export const ResultMetaObjectSchema = z.looseObject({
  [MetaKey.serverInfo]: ImplementationSchema.optional(),
});
/** `ResultMetaObject` of MCP 2026-07-28. */
export type ResultMetaObject = z.infer<typeof ResultMetaObjectSchema>;

/** `ServerCapabilities`: what `server/discover` says this server offers. Open set. */
export const ServerCapabilitiesSchema = z.looseObject({
  completions: JSONObjectSchema.optional(),
  experimental: z.record(z.string(), JSONObjectSchema).optional(),
  extensions: z.record(z.string(), JSONObjectSchema).optional(),
  logging: JSONObjectSchema.optional(),
  prompts: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  resources: z
    .looseObject({ listChanged: z.boolean().optional(), subscribe: z.boolean().optional() })
    .optional(),
  tools: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
});
/** `ServerCapabilities` of MCP 2026-07-28. */
export type ServerCapabilities = z.infer<typeof ServerCapabilitiesSchema>;

/**
 * Whether these capabilities allow a form-mode `elicitation/create`:
 * `{elicitation: {form: {}}}`, or the empty `{elicitation: {}}`, which
 * "is equivalent to declaring support for `form` mode only"
 * (`client/elicitation`, "Capabilities"). A declaration of other modes only
 * (`url`, or one this revision does not name) does not: servers MUST NOT
 * send a mode the client did not declare. Nor does one that is no object
 * (`form: false`, `form: null`, `elicitation: []`).
 */
export function supportsFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const e = ownMember(capabilities, 'elicitation');
  if (!isPlainObject(e)) return false;
  if (ownMember(e, 'form') !== undefined) return isPlainObject(ownMember(e, 'form'));
  return Object.keys(e).length === 0;
}

/**
 * Whether these capabilities allow a URL-mode `elicitation/create` (`{elicitation: {url: {}}}`).
 * A declaration is an object: `url: false`, `url: null` or an `elicitation` that is a list declare nothing.
 */
export function supportsUrlElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const e = ownMember(capabilities, 'elicitation');
  return isPlainObject(e) && isPlainObject(ownMember(e, 'url'));
}

/** An object that is not a list: what a capability declaration is (`{}` and its settings). */
const isPlainObject = (v: unknown): v is object =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value[key]` when `value` is an object holding `key` as an own member, else
 * `undefined`: what a client sent is read from what it sent, never through a
 * prototype. Code that copies a `"__proto__"` member by assignment (the SDK
 * 2.4 does, sorting `inputResponses`) makes it the object's prototype, where
 * `value.confirm` would find a member the object does not hold.
 * @param value any value (a parsed request member).
 * @param key the member's name.
 * @returns the own member, or `undefined`; never throws for a plain JSON value.
 */
export function ownMember(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
