import { z } from 'zod';
import {
  AnnotationsSchema,
  type ContentBlock,
  ContentBlockSchema,
  PromptMessageSchema,
  ResourceContentsSchema,
} from './content.js';
import { JSONObjectSchema } from './jsonrpc.js';
import { IconSchema, ResultMetaObjectSchema, ServerCapabilitiesSchema } from './meta.js';

/**
 * Results of MCP 2026-07-28. Every result carries `resultType` (`basic/index`,
 * "ResultType"); the cacheable ones (`server/discover`, the four lists and
 * `resources/read`) carry `ttlMs` (milliseconds, integer ≥ 0) and `cacheScope`.
 */

const ResultMeta = { _meta: ResultMetaObjectSchema.optional() };

/** `ResultType`: `"complete"`, `"input_required"`, or an extension's value. */
export const ResultTypeSchema = z.string();
/** `ResultType` of MCP 2026-07-28. */
export type ResultType = 'complete' | 'input_required' | (string & {});

/** `Result`: any result object; `resultType` is required from 2026-07-28 on. */
export const ResultSchema = z.looseObject({ resultType: ResultTypeSchema, ...ResultMeta });
/** `Result` of MCP 2026-07-28. */
export type Result = z.infer<typeof ResultSchema>;

/** `cacheScope`: `"public"` may be shared across authorization contexts, `"private"` may not. */
export const CacheScopeSchema = z.enum(['public', 'private']);
/** `cacheScope` of a `CacheableResult`. */
export type CacheScope = z.infer<typeof CacheScopeSchema>;
/** The caching hints of a `CacheableResult`: `ttlMs` in milliseconds (integer ≥ 0). */
const Cacheable = { ttlMs: z.number().int().nonnegative(), cacheScope: CacheScopeSchema };
/** `CacheableResult`: a result with `ttlMs` and `cacheScope`. */
export const CacheableResultSchema = z.looseObject({
  resultType: ResultTypeSchema,
  ...Cacheable,
  ...ResultMeta,
});
/** `CacheableResult` of MCP 2026-07-28. */
export type CacheableResult = z.infer<typeof CacheableResultSchema>;

/** `CallToolResult` with `resultType: "complete"`. */
export interface CallToolResult {
  resultType: 'complete';
  content: ContentBlock[];
  /** Any JSON value, per the 2026-07-28 schema. */
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}
/** Zod schema of a complete `CallToolResult`. */
export const CallToolResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  content: z.array(ContentBlockSchema),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
  ...ResultMeta,
});

/** `ToolAnnotations`: untrusted hints about a tool's behaviour. */
export const ToolAnnotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
/** `ToolAnnotations` of MCP 2026-07-28. */
export type ToolAnnotations = z.infer<typeof ToolAnnotationsSchema>;

/** `Tool`: a tool definition as `tools/list` returns it. */
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  outputSchema?: { [k: string]: unknown };
  annotations?: ToolAnnotations;
  icons?: z.infer<typeof IconSchema>[];
  _meta?: Record<string, unknown>;
}
/** Zod schema of {@link Tool}. */
export const ToolSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.literal('object'), $schema: z.string().optional() }),
  outputSchema: z.looseObject({ $schema: z.string().optional() }).optional(),
  annotations: ToolAnnotationsSchema.optional(),
  icons: z.array(IconSchema).optional(),
  _meta: JSONObjectSchema.optional(),
});

/** `ListToolsResult` with the 2026-07-28 caching hints (`ttlMs` in milliseconds). */
export interface ListToolsResult {
  resultType: 'complete';
  tools: Tool[];
  nextCursor?: string;
  ttlMs: number;
  cacheScope: CacheScope;
  _meta?: Record<string, unknown>;
}
/** Zod schema of {@link ListToolsResult}. */
export const ListToolsResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  tools: z.array(ToolSchema),
  nextCursor: z.string().optional(),
  ...Cacheable,
  ...ResultMeta,
});

/** `PromptArgument`: one argument a prompt template accepts. */
export const PromptArgumentSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  required: z.boolean().optional(),
});
/** `PromptArgument` of MCP 2026-07-28. */
export type PromptArgument = z.infer<typeof PromptArgumentSchema>;

/** `Prompt`: a prompt template as `prompts/list` returns it. */
export const PromptSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z.array(PromptArgumentSchema).optional(),
  icons: z.array(IconSchema).optional(),
  _meta: JSONObjectSchema.optional(),
});
/** `Prompt` of MCP 2026-07-28. */
export type Prompt = z.infer<typeof PromptSchema>;

/** `ListPromptsResult`. */
export const ListPromptsResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  prompts: z.array(PromptSchema),
  nextCursor: z.string().optional(),
  ...Cacheable,
  ...ResultMeta,
});
/** `ListPromptsResult` of MCP 2026-07-28. */
export type ListPromptsResult = z.infer<typeof ListPromptsResultSchema>;

/** `GetPromptResult` with `resultType: "complete"`. */
export const GetPromptResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  description: z.string().optional(),
  messages: z.array(PromptMessageSchema),
  ...ResultMeta,
});
/** `GetPromptResult` of MCP 2026-07-28. */
export type GetPromptResult = z.infer<typeof GetPromptResultSchema>;

/** `Resource`: a directly readable resource as `resources/list` returns it. */
export const ResourceSchema = z.looseObject({
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  size: z.number().int().optional(),
  annotations: AnnotationsSchema.optional(),
  icons: z.array(IconSchema).optional(),
  _meta: JSONObjectSchema.optional(),
});
/** `Resource` of MCP 2026-07-28. */
export type Resource = z.infer<typeof ResourceSchema>;

/** `ResourceTemplate`: a family of resources named by an RFC 6570 URI template. */
export const ResourceTemplateSchema = z.looseObject({
  uriTemplate: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  annotations: AnnotationsSchema.optional(),
  icons: z.array(IconSchema).optional(),
  _meta: JSONObjectSchema.optional(),
});
/** `ResourceTemplate` of MCP 2026-07-28. */
export type ResourceTemplate = z.infer<typeof ResourceTemplateSchema>;

/** `ListResourcesResult`. */
export const ListResourcesResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  resources: z.array(ResourceSchema),
  nextCursor: z.string().optional(),
  ...Cacheable,
  ...ResultMeta,
});
/** `ListResourcesResult` of MCP 2026-07-28. */
export type ListResourcesResult = z.infer<typeof ListResourcesResultSchema>;

/** `ListResourceTemplatesResult`. */
export const ListResourceTemplatesResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  resourceTemplates: z.array(ResourceTemplateSchema),
  nextCursor: z.string().optional(),
  ...Cacheable,
  ...ResultMeta,
});
/** `ListResourceTemplatesResult` of MCP 2026-07-28. */
export type ListResourceTemplatesResult = z.infer<typeof ListResourceTemplatesResultSchema>;

/** `ReadResourceResult` with `resultType: "complete"` and caching hints. */
export const ReadResourceResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  contents: z.array(ResourceContentsSchema),
  ...Cacheable,
  ...ResultMeta,
});
/** `ReadResourceResult` of MCP 2026-07-28. */
export type ReadResourceResult = z.infer<typeof ReadResourceResultSchema>;

/**
 * `DiscoverResult`: what `server/discover` answers. The server's identity
 * travels in `_meta["io.modelcontextprotocol/serverInfo"]`; `ttlMs` is milliseconds.
 */
export interface DiscoverResult {
  resultType: 'complete';
  supportedVersions: string[];
  capabilities: z.infer<typeof ServerCapabilitiesSchema>;
  instructions?: string;
  ttlMs: number;
  cacheScope: CacheScope;
  _meta?: Record<string, unknown>;
}
/** Zod schema of {@link DiscoverResult}. */
export const DiscoverResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  supportedVersions: z.array(z.string()),
  capabilities: ServerCapabilitiesSchema,
  instructions: z.string().optional(),
  ...Cacheable,
  ...ResultMeta,
});

/** `CompleteResult`: up to 100 completion `values` for one argument. */
export const CompleteResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  completion: z.looseObject({
    values: z.array(z.string()).max(100),
    total: z.number().int().optional(),
    hasMore: z.boolean().optional(),
  }),
  ...ResultMeta,
});
/** `CompleteResult` of MCP 2026-07-28. */
export type CompleteResult = z.infer<typeof CompleteResultSchema>;

/** A complete text result: `{resultType: "complete", content: [{type: "text", text}], isError}`. */
export function textResult(
  text: string,
  options: { isError?: boolean; structuredContent?: Record<string, unknown> } = {},
): CallToolResult {
  const result: CallToolResult = {
    resultType: 'complete',
    content: [{ type: 'text', text }],
    isError: options.isError ?? false,
  };
  if (options.structuredContent) result.structuredContent = options.structuredContent;
  return result;
}
