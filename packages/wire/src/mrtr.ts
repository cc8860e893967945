import { z } from 'zod';
import { RequestedSchemaSchema } from './form.js';
import { RequestMetaSchema } from './meta.js';

/** `ElicitRequestFormParams`: ask the person to fill in a flat form. */
export const ElicitRequestFormParamsSchema = z.object({
  mode: z.literal('form').optional(),
  message: z.string(),
  requestedSchema: RequestedSchemaSchema,
  _meta: z.record(z.string(), z.unknown()).optional(),
});
/** `ElicitRequestURLParams`: send the person to a URL (for flows that must not pass the client). */
export const ElicitRequestURLParamsSchema = z.object({
  mode: z.literal('url'),
  message: z.string(),
  url: z.string().url(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
/** `ElicitRequest`: an `elicitation/create` input request, in form or URL mode. */
export const ElicitRequestSchema = z.object({
  method: z.literal('elicitation/create'),
  params: z.union([ElicitRequestURLParamsSchema, ElicitRequestFormParamsSchema]),
});
/** `ElicitRequest` of MCP 2026-07-28. */
export type ElicitRequest = z.infer<typeof ElicitRequestSchema>;
/** `ElicitRequestFormParams` of MCP 2026-07-28. */
export type ElicitRequestFormParams = z.infer<typeof ElicitRequestFormParamsSchema>;

/** `CreateMessageRequest` (`sampling/createMessage`); params kept loose here. */
export const CreateMessageRequestSchema = z.object({
  method: z.literal('sampling/createMessage'),
  params: z.looseObject({ messages: z.array(z.unknown()), maxTokens: z.number().int() }),
});
/** `ListRootsRequest` (`roots/list`). */
export const ListRootsRequestSchema = z.object({
  method: z.literal('roots/list'),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** `InputRequest`: one server-to-client request embedded in an `InputRequiredResult`. */
export const InputRequestSchema = z.union([
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

/** The values an `ElicitResult.content` field may carry. */
export const ElicitContentValueSchema = z.union([
  z.string(),
  z.number(),
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

/**
 * `InputResponses`: keys of the earlier `InputRequests` to the client's results.
 * Values are kept unparsed here because their type depends on the request the
 * key named; read one with {@link ElicitResultSchema} and friends.
 */
export const InputResponsesSchema = z.record(z.string(), z.unknown());
/** `InputResponses` of MCP 2026-07-28 (values unparsed). */
export type InputResponses = z.infer<typeof InputResponsesSchema>;

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
    _meta: z.record(z.string(), z.unknown()).optional(),
  })
  // "At least one of `inputRequests` or `requestState` MUST be present." (schema.ts)
  .refine((r) => r.inputRequests !== undefined || r.requestState !== undefined, {
    message: 'an InputRequiredResult needs inputRequests or requestState',
  });

const MrtrParams = {
  _meta: RequestMetaSchema.optional(),
  inputResponses: InputResponsesSchema.optional(),
  requestState: z.string().optional(),
};

/** `CallToolRequestParams`: `{name, arguments?, _meta, inputResponses?, requestState?}`. */
export const CallToolRequestParamsSchema = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
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
