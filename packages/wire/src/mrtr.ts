import { z } from 'zod';
import { RoleSchema, SamplingMessageContentBlockSchema, SamplingMessageSchema } from './content.js';
import { type RequestedSchema, RequestedSchemaSchema } from './form.js';
import { JSONObjectSchema } from './jsonrpc.js';
import { RequestMetaSchema, ResultMetaObjectSchema } from './meta.js';

/**
 * Multi Round-Trip Requests (MCP 2026-07-28, `basic/patterns/mrtr`): the input
 * requests a server embeds in an `InputRequiredResult`, the responses a client
 * sends back in `inputResponses`, and the params of the three requests that
 * may carry them (`tools/call`, `prompts/get`, `resources/read`).
 */

const Meta = { _meta: JSONObjectSchema.optional() };

/** `ElicitRequestFormParams`: ask the person to fill in a flat form (`client/elicitation`, "Form Mode"). */
export const ElicitRequestFormParamsSchema = z.object({
  mode: z.literal('form').optional(),
  message: z.string(),
  requestedSchema: RequestedSchemaSchema,
  ...Meta,
});
/** `ElicitRequestFormParams` of MCP 2026-07-28. */
export type ElicitRequestFormParams = z.infer<typeof ElicitRequestFormParamsSchema>;

/** `ElicitRequestURLParams`: send the person to a URL, for what must not pass through the client ("URL Mode"). */
export const ElicitRequestURLParamsSchema = z.object({
  mode: z.literal('url'),
  message: z.string(),
  url: z.string().url(),
  ...Meta,
});
/** `ElicitRequestURLParams` of MCP 2026-07-28. */
export type ElicitRequestURLParams = z.infer<typeof ElicitRequestURLParamsSchema>;

/** `ElicitRequestParams`: form or URL mode; a missing `mode` means form. */
export const ElicitRequestParamsSchema = z.union([
  ElicitRequestURLParamsSchema,
  ElicitRequestFormParamsSchema,
]);
/** `ElicitRequestParams` of MCP 2026-07-28. */
export type ElicitRequestParams = z.infer<typeof ElicitRequestParamsSchema>;

/** `ElicitRequest`: an `elicitation/create` input request, in form or URL mode. */
export const ElicitRequestSchema = z.looseObject({
  method: z.literal('elicitation/create'),
  params: ElicitRequestParamsSchema,
});
/** `ElicitRequest` of MCP 2026-07-28. */
export type ElicitRequest = z.infer<typeof ElicitRequestSchema>;

/** `ModelPreferences`: hints and priorities (each 0 to 1) for the client's model choice. */
export const ModelPreferencesSchema = z.looseObject({
  hints: z.array(z.looseObject({ name: z.string().optional() })).optional(),
  costPriority: z.number().min(0).max(1).optional(),
  speedPriority: z.number().min(0).max(1).optional(),
  intelligencePriority: z.number().min(0).max(1).optional(),
});
/** `ModelPreferences` of MCP 2026-07-28. */
export type ModelPreferences = z.infer<typeof ModelPreferencesSchema>;

/** `CreateMessageRequestParams`: the conversation and limits of a `sampling/createMessage`. */
export const CreateMessageRequestParamsSchema = z.looseObject({
  messages: z.array(SamplingMessageSchema),
  maxTokens: z.number().int(),
  modelPreferences: ModelPreferencesSchema.optional(),
  systemPrompt: z.string().optional(),
  includeContext: z.enum(['none', 'thisServer', 'allServers']).optional(),
  temperature: z.number().optional(),
  stopSequences: z.array(z.string()).optional(),
  metadata: JSONObjectSchema.optional(),
  tools: z.array(z.looseObject({ name: z.string() })).optional(),
  toolChoice: z.looseObject({ mode: z.enum(['auto', 'none', 'required']).optional() }).optional(),
  ...Meta,
});
/** `CreateMessageRequestParams` of MCP 2026-07-28. */
export type CreateMessageRequestParams = z.infer<typeof CreateMessageRequestParamsSchema>;

/** `CreateMessageRequest` (`sampling/createMessage`). */
export const CreateMessageRequestSchema = z.looseObject({
  method: z.literal('sampling/createMessage'),
  params: CreateMessageRequestParamsSchema,
});
/** `CreateMessageRequest` of MCP 2026-07-28. */
export type CreateMessageRequest = z.infer<typeof CreateMessageRequestSchema>;

/** `ListRootsRequest` (`roots/list`). */
export const ListRootsRequestSchema = z.looseObject({
  method: z.literal('roots/list'),
  params: z.looseObject({ ...Meta }).optional(),
});
/** `ListRootsRequest` of MCP 2026-07-28. */
export type ListRootsRequest = z.infer<typeof ListRootsRequestSchema>;

/** `InputRequest`: one server-to-client request embedded in an `InputRequiredResult`. */
export const InputRequestSchema = z.discriminatedUnion('method', [
  ElicitRequestSchema,
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
]);
/** `InputRequest` of MCP 2026-07-28. */
export type InputRequest = z.infer<typeof InputRequestSchema>;
/** `InputRequests`: server-assigned keys to input requests. */
export const InputRequestsSchema = z.record(z.string(), InputRequestSchema);
/** `InputRequests` of MCP 2026-07-28. */
export type InputRequests = z.infer<typeof InputRequestsSchema>;

/** The values an `ElicitResult.content` field may carry (the schema allows integers, not fractions). */
export const ElicitContentValueSchema = z.union([
  z.string(),
  z.number().int(),
  z.boolean(),
  z.array(z.string()),
]);
/** `ElicitResult`: the person's action and, for `accept` in form mode, the content. */
export const ElicitResultSchema = z.looseObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), ElicitContentValueSchema).optional(),
});
/** `ElicitResult` of MCP 2026-07-28. */
export type ElicitResult = z.infer<typeof ElicitResultSchema>;

/** `CreateMessageResult`: the client's model answer to `sampling/createMessage`. */
export const CreateMessageResultSchema = z.looseObject({
  role: RoleSchema,
  content: z.union([SamplingMessageContentBlockSchema, z.array(SamplingMessageContentBlockSchema)]),
  model: z.string(),
  stopReason: z.string().optional(),
  ...Meta,
});
/** `CreateMessageResult` of MCP 2026-07-28. */
export type CreateMessageResult = z.infer<typeof CreateMessageResultSchema>;

/** `Root`: a directory or file the client exposes, as a `file://` (or other) URI. */
export const RootSchema = z.looseObject({
  uri: z.string(),
  name: z.string().optional(),
  ...Meta,
});
/** `Root` of MCP 2026-07-28. */
export type Root = z.infer<typeof RootSchema>;

/** `ListRootsResult`: the client's answer to `roots/list`. */
export const ListRootsResultSchema = z.looseObject({ roots: z.array(RootSchema) });
/** `ListRootsResult` of MCP 2026-07-28. */
export type ListRootsResult = z.infer<typeof ListRootsResultSchema>;

/** `InputResponse`: a client's result for one input request. */
export const InputResponseSchema = z.union([
  CreateMessageResultSchema,
  ListRootsResultSchema,
  ElicitResultSchema,
]);
/** `InputResponse` of MCP 2026-07-28. */
export type InputResponse = z.infer<typeof InputResponseSchema>;

/**
 * `InputResponses`: keys of the earlier `InputRequests` to the client's results.
 * Each value must be a JSON object; its type depends on the request the key
 * named, so it is kept unparsed here: read one with {@link ElicitResultSchema},
 * {@link CreateMessageResultSchema} or {@link ListRootsResultSchema}. A
 * malformed value under a known key is the reader's to refuse or re-ask.
 */
export const InputResponsesSchema = z.record(z.string(), z.looseObject({}));
/** `InputResponses` of MCP 2026-07-28 (values unparsed objects). */
export type InputResponses = Record<string, Record<string, unknown>>;

/** `InputRequiredResult`: the server needs input before it can complete. */
export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: InputRequests;
  requestState?: string;
  _meta?: Record<string, unknown>;
}
/** Zod schema of {@link InputRequiredResult}. */
export const InputRequiredResultSchema = z
  .looseObject({
    resultType: z.literal('input_required'),
    inputRequests: InputRequestsSchema.optional(),
    requestState: z.string().optional(),
    _meta: ResultMetaObjectSchema.optional(),
  })
  // "At least one of `inputRequests` or `requestState` MUST be present." (schema.ts)
  .refine((r) => r.inputRequests !== undefined || r.requestState !== undefined, {
    message: 'an InputRequiredResult needs inputRequests or requestState',
  });

/**
 * Build an {@link InputRequiredResult} (`basic/patterns/mrtr`): the input
 * requests to put to the client, keyed as the retry's `inputResponses` will
 * be, and the `requestState` the client must echo unchanged.
 * @param inputRequests server-chosen keys to `elicitation/create`, `sampling/createMessage` or `roots/list` requests.
 * @param requestState opaque state for the retry (e.g. a sealed ticket).
 * @throws {TypeError} when both are absent: the spec requires at least one.
 */
export function inputRequired(
  inputRequests: InputRequests | undefined,
  requestState?: string,
): InputRequiredResult {
  if (inputRequests === undefined && requestState === undefined)
    throw new TypeError('an InputRequiredResult needs inputRequests or requestState');
  const result: InputRequiredResult = { resultType: 'input_required' };
  if (inputRequests !== undefined) result.inputRequests = inputRequests;
  if (requestState !== undefined) result.requestState = requestState;
  return result;
}

/**
 * A form-mode `elicitation/create` request (`client/elicitation`), for
 * {@link inputRequired}. Never ask for secrets in form mode.
 */
export function formElicitation(message: string, requestedSchema: RequestedSchema): ElicitRequest {
  return { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } };
}

/**
 * A URL-mode `elicitation/create` request (`client/elicitation`, "URL Mode"):
 * the person is sent to `url`, a page of the server's own origin.
 */
export function urlElicitation(message: string, url: string): ElicitRequest {
  return { method: 'elicitation/create', params: { mode: 'url', message, url } };
}

/** `InputResponseRequestParams`: the MRTR members of a retried request, and its required `_meta`. */
const MrtrParams = {
  _meta: RequestMetaSchema,
  inputResponses: InputResponsesSchema.optional(),
  requestState: z.string().optional(),
};

/** `CallToolRequestParams`: `{name, arguments?, _meta, inputResponses?, requestState?}`. */
export const CallToolRequestParamsSchema = z.looseObject({
  name: z.string(),
  arguments: JSONObjectSchema.optional(),
  ...MrtrParams,
});
/** `CallToolRequestParams` of MCP 2026-07-28. */
export type CallToolRequestParams = z.infer<typeof CallToolRequestParamsSchema>;

/** `GetPromptRequestParams`: `{name, arguments?, _meta, inputResponses?, requestState?}`. */
export const GetPromptRequestParamsSchema = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.string()).optional(),
  ...MrtrParams,
});
/** `GetPromptRequestParams` of MCP 2026-07-28. */
export type GetPromptRequestParams = z.infer<typeof GetPromptRequestParamsSchema>;

/** `ReadResourceRequestParams`: `{uri, _meta, inputResponses?, requestState?}`. */
export const ReadResourceRequestParamsSchema = z.looseObject({
  uri: z.string(),
  ...MrtrParams,
});
/** `ReadResourceRequestParams` of MCP 2026-07-28. */
export type ReadResourceRequestParams = z.infer<typeof ReadResourceRequestParamsSchema>;
