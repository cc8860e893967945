import { z } from 'zod';
import { JSONObjectSchema } from './jsonrpc.js';
import { IconSchema } from './meta.js';

/**
 * Content blocks of MCP 2026-07-28 (`server/tools`, "Tool Result"; `server/prompts`;
 * `client/sampling`). Every object keeps unknown members: the schema is open.
 */

const Meta = { _meta: JSONObjectSchema.optional() };

/** `Role`: who a message or content is for. */
export const RoleSchema = z.enum(['user', 'assistant']);
/** `Role` of MCP 2026-07-28. */
export type Role = z.infer<typeof RoleSchema>;

/** `Annotations`: hints about audience, priority (0 to 1) and last modification (ISO 8601). */
export const AnnotationsSchema = z.looseObject({
  audience: z.array(RoleSchema).optional(),
  priority: z.number().min(0).max(1).optional(),
  lastModified: z.string().optional(),
});
/** `Annotations` of MCP 2026-07-28. */
export type Annotations = z.infer<typeof AnnotationsSchema>;

/** `TextContent`. */
export const TextContentSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  annotations: AnnotationsSchema.optional(),
  ...Meta,
});
/** `TextContent` of MCP 2026-07-28. */
export type TextContent = z.infer<typeof TextContentSchema>;

/** `ImageContent`: Base64 `data` (RFC 4648 §4) with its MIME type. */
export const ImageContentSchema = z.looseObject({
  type: z.literal('image'),
  data: z.string(),
  mimeType: z.string(),
  annotations: AnnotationsSchema.optional(),
  ...Meta,
});
/** `ImageContent` of MCP 2026-07-28. */
export type ImageContent = z.infer<typeof ImageContentSchema>;

/** `AudioContent`: Base64 `data` (RFC 4648 §4) with its MIME type. */
export const AudioContentSchema = z.looseObject({
  type: z.literal('audio'),
  data: z.string(),
  mimeType: z.string(),
  annotations: AnnotationsSchema.optional(),
  ...Meta,
});
/** `AudioContent` of MCP 2026-07-28. */
export type AudioContent = z.infer<typeof AudioContentSchema>;

/** `TextResourceContents`: the text of a resource at `uri`. */
export const TextResourceContentsSchema = z.looseObject({
  uri: z.string(),
  mimeType: z.string().optional(),
  text: z.string(),
  ...Meta,
});
/** `TextResourceContents` of MCP 2026-07-28. */
export type TextResourceContents = z.infer<typeof TextResourceContentsSchema>;

/** `BlobResourceContents`: the bytes of a resource at `uri`, Base64 in `blob`. */
export const BlobResourceContentsSchema = z.looseObject({
  uri: z.string(),
  mimeType: z.string().optional(),
  blob: z.string(),
  ...Meta,
});
/** `BlobResourceContents` of MCP 2026-07-28. */
export type BlobResourceContents = z.infer<typeof BlobResourceContentsSchema>;

/** `TextResourceContents | BlobResourceContents`. */
export const ResourceContentsSchema = z.union([
  TextResourceContentsSchema,
  BlobResourceContentsSchema,
]);
/** One entry of `ReadResourceResult.contents`. */
export type ResourceContents = z.infer<typeof ResourceContentsSchema>;

/** `EmbeddedResource`: a resource's contents inside a message or tool result. */
export const EmbeddedResourceSchema = z.looseObject({
  type: z.literal('resource'),
  resource: ResourceContentsSchema,
  annotations: AnnotationsSchema.optional(),
  ...Meta,
});
/** `EmbeddedResource` of MCP 2026-07-28. */
export type EmbeddedResource = z.infer<typeof EmbeddedResourceSchema>;

/** `ResourceLink`: a reference to a resource the client may read. */
export const ResourceLinkSchema = z.looseObject({
  type: z.literal('resource_link'),
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  size: z.number().int().optional(),
  icons: z.array(IconSchema).optional(),
  annotations: AnnotationsSchema.optional(),
  ...Meta,
});
/** `ResourceLink` of MCP 2026-07-28. */
export type ResourceLink = z.infer<typeof ResourceLinkSchema>;

/** `ContentBlock`: what tool results and prompt messages carry. */
export const ContentBlockSchema = z.discriminatedUnion('type', [
  TextContentSchema,
  ImageContentSchema,
  AudioContentSchema,
  ResourceLinkSchema,
  EmbeddedResourceSchema,
]);
/** `ContentBlock` of MCP 2026-07-28. */
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** `ToolUseContent`: a model's request to use a tool, in sampling. */
export const ToolUseContentSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: JSONObjectSchema,
  ...Meta,
});
/** `ToolUseContent` of MCP 2026-07-28. */
export type ToolUseContent = z.infer<typeof ToolUseContentSchema>;

/** `ToolResultContent`: the result of a tool use, in sampling. */
export const ToolResultContentSchema = z.looseObject({
  type: z.literal('tool_result'),
  toolUseId: z.string(),
  content: z.array(ContentBlockSchema),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
  ...Meta,
});
/** `ToolResultContent` of MCP 2026-07-28. */
export type ToolResultContent = z.infer<typeof ToolResultContentSchema>;

/** `SamplingMessageContentBlock`. */
export const SamplingMessageContentBlockSchema = z.discriminatedUnion('type', [
  TextContentSchema,
  ImageContentSchema,
  AudioContentSchema,
  ToolUseContentSchema,
  ToolResultContentSchema,
]);
/** `SamplingMessageContentBlock` of MCP 2026-07-28. */
export type SamplingMessageContentBlock = z.infer<typeof SamplingMessageContentBlockSchema>;

/** `SamplingMessage`: one message of a `sampling/createMessage` conversation. */
export const SamplingMessageSchema = z.looseObject({
  role: RoleSchema,
  content: z.union([SamplingMessageContentBlockSchema, z.array(SamplingMessageContentBlockSchema)]),
  ...Meta,
});
/** `SamplingMessage` of MCP 2026-07-28. */
export type SamplingMessage = z.infer<typeof SamplingMessageSchema>;

/** `PromptMessage`: one message of a `GetPromptResult`. */
export const PromptMessageSchema = z.looseObject({
  role: RoleSchema,
  content: ContentBlockSchema,
});
/** `PromptMessage` of MCP 2026-07-28. */
export type PromptMessage = z.infer<typeof PromptMessageSchema>;
