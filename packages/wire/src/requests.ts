import { z } from 'zod';
import { JSONObjectSchema, RequestIdSchema } from './jsonrpc.js';
import { LoggingLevelSchema, ProgressTokenSchema, RequestMetaSchema } from './meta.js';
import {
  CallToolRequestParamsSchema,
  GetPromptRequestParamsSchema,
  ReadResourceRequestParamsSchema,
} from './mrtr.js';

/**
 * Client requests of MCP 2026-07-28 as complete JSON-RPC messages, and the
 * server notifications this project sends on a request's SSE stream. Every
 * request's `params._meta` is required (`basic/index`, "Per-request protocol fields").
 */

function request<M extends string, P extends z.ZodType>(method: M, params: P) {
  return z.object({
    jsonrpc: z.literal('2.0'),
    id: RequestIdSchema,
    method: z.literal(method),
    params,
  });
}

/** `RequestParams`: the params of a request that has nothing but `_meta`. */
export const RequestParamsSchema = z.looseObject({ _meta: RequestMetaSchema });
/** `PaginatedRequestParams`: `_meta` and an opaque `cursor`. */
export const PaginatedRequestParamsSchema = z.looseObject({
  _meta: RequestMetaSchema,
  cursor: z.string().optional(),
});
/** `PaginatedRequestParams` of MCP 2026-07-28. */
export type PaginatedRequestParams = z.infer<typeof PaginatedRequestParamsSchema>;

/** `DiscoverRequest` (`server/discover`, `server/discover.mdx`). */
export const DiscoverRequestSchema = request('server/discover', RequestParamsSchema);
/** `ListToolsRequest` (`tools/list`). */
export const ListToolsRequestSchema = request('tools/list', PaginatedRequestParamsSchema);
/** `CallToolRequest` (`tools/call`). */
export const CallToolRequestSchema = request('tools/call', CallToolRequestParamsSchema);
/** `ListPromptsRequest` (`prompts/list`). */
export const ListPromptsRequestSchema = request('prompts/list', PaginatedRequestParamsSchema);
/** `GetPromptRequest` (`prompts/get`). */
export const GetPromptRequestSchema = request('prompts/get', GetPromptRequestParamsSchema);
/** `ListResourcesRequest` (`resources/list`). */
export const ListResourcesRequestSchema = request('resources/list', PaginatedRequestParamsSchema);
/** `ListResourceTemplatesRequest` (`resources/templates/list`). */
export const ListResourceTemplatesRequestSchema = request(
  'resources/templates/list',
  PaginatedRequestParamsSchema,
);
/** `ReadResourceRequest` (`resources/read`). */
export const ReadResourceRequestSchema = request('resources/read', ReadResourceRequestParamsSchema);

/** `PromptReference` or `ResourceTemplateReference`: what a completion is for. */
export const CompletionReferenceSchema = z.union([
  z.looseObject({ type: z.literal('ref/prompt'), name: z.string() }),
  z.looseObject({ type: z.literal('ref/resource'), uri: z.string() }),
]);
/** `CompleteRequestParams`: the argument being completed and its context. */
export const CompleteRequestParamsSchema = z.looseObject({
  _meta: RequestMetaSchema,
  ref: CompletionReferenceSchema,
  argument: z.looseObject({ name: z.string(), value: z.string() }),
  context: z.looseObject({ arguments: z.record(z.string(), z.string()).optional() }).optional(),
});
/** `CompleteRequestParams` of MCP 2026-07-28. */
export type CompleteRequestParams = z.infer<typeof CompleteRequestParamsSchema>;
/** `CompleteRequest` (`completion/complete`). */
export const CompleteRequestSchema = request('completion/complete', CompleteRequestParamsSchema);

/** `ProgressNotificationParams`: progress so far (and total, if known) of the request named by `progressToken`. */
export const ProgressNotificationParamsSchema = z.looseObject({
  progressToken: ProgressTokenSchema,
  progress: z.number(),
  total: z.number().optional(),
  message: z.string().optional(),
  _meta: JSONObjectSchema.optional(),
});
/** `ProgressNotificationParams` of MCP 2026-07-28. */
export type ProgressNotificationParams = z.infer<typeof ProgressNotificationParamsSchema>;
/** `ProgressNotification` (`notifications/progress`). */
export const ProgressNotificationSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.literal('notifications/progress'),
  params: ProgressNotificationParamsSchema,
});

/** `LoggingMessageNotificationParams`: one log record at `level`; `data` is any JSON. */
export const LoggingMessageNotificationParamsSchema = z.looseObject({
  level: LoggingLevelSchema,
  logger: z.string().optional(),
  data: z.unknown(),
  _meta: JSONObjectSchema.optional(),
});
/** `LoggingMessageNotificationParams` of MCP 2026-07-28. */
export type LoggingMessageNotificationParams = z.infer<
  typeof LoggingMessageNotificationParamsSchema
>;
/** `LoggingMessageNotification` (`notifications/message`). */
export const LoggingMessageNotificationSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.literal('notifications/message'),
  params: LoggingMessageNotificationParamsSchema,
});
