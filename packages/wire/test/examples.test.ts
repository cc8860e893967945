import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as wire from '../src/index.js';

/**
 * Every official 2026-07-28 example (vendored under test/fixtures) of a type
 * this package models parses with that type's schema and round-trips
 * unchanged. A folder of a type we do not model must be listed in
 * NOT_MODELED with the reason; a folder in neither list fails the suite.
 */
const FIXTURES = join(import.meta.dirname, 'fixtures', '2026-07-28');

const MODELED: Record<string, z.ZodType> = {
  AudioContent: wire.AudioContentSchema,
  BlobResourceContents: wire.BlobResourceContentsSchema,
  BooleanSchema: wire.BooleanSchemaSchema,
  CallToolRequest: wire.CallToolRequestSchema,
  CallToolRequestParams: wire.CallToolRequestParamsSchema,
  CallToolResult: wire.CallToolResultSchema,
  ClientCapabilities: wire.ClientCapabilitiesSchema,
  CompleteRequest: wire.CompleteRequestSchema,
  CompleteRequestParams: wire.CompleteRequestParamsSchema,
  CompleteResult: wire.CompleteResultSchema,
  CreateMessageRequest: wire.CreateMessageRequestSchema,
  CreateMessageRequestParams: wire.CreateMessageRequestParamsSchema,
  CreateMessageResult: wire.CreateMessageResultSchema,
  DiscoverRequest: wire.DiscoverRequestSchema,
  DiscoverResult: wire.DiscoverResultSchema,
  ElicitRequest: wire.ElicitRequestSchema,
  ElicitRequestFormParams: wire.ElicitRequestFormParamsSchema,
  ElicitRequestURLParams: wire.ElicitRequestURLParamsSchema,
  ElicitResult: wire.ElicitResultSchema,
  EmbeddedResource: wire.EmbeddedResourceSchema,
  GetPromptRequest: wire.GetPromptRequestSchema,
  GetPromptRequestParams: wire.GetPromptRequestParamsSchema,
  GetPromptResult: wire.GetPromptResultSchema,
  HeaderMismatchError: wire.HeaderMismatchErrorSchema,
  ImageContent: wire.ImageContentSchema,
  InputRequests: wire.InputRequestsSchema,
  InputRequiredResult: wire.InputRequiredResultSchema,
  InputResponses: wire.InputResponsesSchema,
  InternalError: wire.InternalErrorSchema,
  InvalidParamsError: wire.InvalidParamsErrorSchema,
  ListPromptsRequest: wire.ListPromptsRequestSchema,
  ListPromptsResult: wire.ListPromptsResultSchema,
  ListResourceTemplatesRequest: wire.ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResult: wire.ListResourceTemplatesResultSchema,
  ListResourcesRequest: wire.ListResourcesRequestSchema,
  ListResourcesResult: wire.ListResourcesResultSchema,
  ListRootsRequest: wire.ListRootsRequestSchema,
  ListRootsResult: wire.ListRootsResultSchema,
  ListToolsRequest: wire.ListToolsRequestSchema,
  ListToolsResult: wire.ListToolsResultSchema,
  LoggingMessageNotification: wire.LoggingMessageNotificationSchema,
  LoggingMessageNotificationParams: wire.LoggingMessageNotificationParamsSchema,
  MethodNotFoundError: wire.MethodNotFoundErrorSchema,
  MissingRequiredClientCapabilityError: wire.MissingRequiredClientCapabilityErrorSchema,
  ModelPreferences: wire.ModelPreferencesSchema,
  NumberSchema: wire.NumberSchemaSchema,
  PaginatedRequestParams: wire.PaginatedRequestParamsSchema,
  ParseError: wire.ParseErrorSchema,
  ProgressNotification: wire.ProgressNotificationSchema,
  ProgressNotificationParams: wire.ProgressNotificationParamsSchema,
  ReadResourceRequest: wire.ReadResourceRequestSchema,
  ReadResourceResult: wire.ReadResourceResultSchema,
  Resource: wire.ResourceSchema,
  ResourceLink: wire.ResourceLinkSchema,
  Root: wire.RootSchema,
  SamplingMessage: wire.SamplingMessageSchema,
  ServerCapabilities: wire.ServerCapabilitiesSchema,
  StringSchema: wire.StringSchemaSchema,
  TextContent: wire.TextContentSchema,
  TextResourceContents: wire.TextResourceContentsSchema,
  TitledMultiSelectEnumSchema: wire.TitledMultiSelectEnumSchemaSchema,
  TitledSingleSelectEnumSchema: wire.TitledSingleSelectEnumSchemaSchema,
  Tool: wire.ToolSchema,
  ToolResultContent: wire.ToolResultContentSchema,
  ToolUseContent: wire.ToolUseContentSchema,
  UnsupportedProtocolVersionError: wire.UnsupportedProtocolVersionErrorSchema,
  UntitledMultiSelectEnumSchema: wire.UntitledMultiSelectEnumSchemaSchema,
  UntitledSingleSelectEnumSchema: wire.UntitledSingleSelectEnumSchemaSchema,
};

/** `<Result>Response` examples: a JSON-RPC result response whose `result` is the named result type. */
const RESPONSES: Record<string, z.ZodType> = {
  CallToolResultResponse: wire.CallToolResultSchema,
  CompleteResultResponse: wire.CompleteResultSchema,
  DiscoverResultResponse: wire.DiscoverResultSchema,
  GetPromptResultResponse: wire.GetPromptResultSchema,
  ListPromptsResultResponse: wire.ListPromptsResultSchema,
  ListResourceTemplatesResultResponse: wire.ListResourceTemplatesResultSchema,
  ListResourcesResultResponse: wire.ListResourcesResultSchema,
  ListToolsResultResponse: wire.ListToolsResultSchema,
  ReadResourceResultResponse: wire.ReadResourceResultSchema,
};

/** Types with examples that this package does not model, and why. */
const NOT_MODELED: Record<string, string> = {
  CancelledNotification:
    'stdio-only: on Streamable HTTP closing the response stream is the cancellation',
  CancelledNotificationParams: 'see CancelledNotification',
  PromptListChangedNotification:
    'list-change notifications travel on subscriptions/listen, which this project does not serve',
  ResourceListChangedNotification: 'see PromptListChangedNotification',
  ToolListChangedNotification: 'see PromptListChangedNotification',
  ResourceUpdatedNotification: 'resource subscriptions (subscriptions/listen) are not served',
  ResourceUpdatedNotificationParams: 'see ResourceUpdatedNotification',
  SubscriptionsAcknowledgedNotification: 'subscriptions/listen is not served',
  SubscriptionsListenRequest: 'subscriptions/listen is not served',
  SubscriptionsListenResult: 'subscriptions/listen is not served',
  SubscriptionsListenResultResponse: 'subscriptions/listen is not served',
};

/** Single examples that contradict schema.json itself; each must keep failing, or be removed here. */
const INVALID_EXAMPLES: Record<string, string> = {
  'ReadResourceResultResponse/read-resource-result-response.json':
    'omits ttlMs and cacheScope, which schema.json requires of every ReadResourceResult; we follow the schema',
};

function folders(): string[] {
  return readdirSync(FIXTURES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

function examples(type: string): [string, unknown][] {
  const dir = join(FIXTURES, type);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8'))]);
}

describe('official 2026-07-28 examples', () => {
  it('every example folder is modeled or listed with a reason', () => {
    const unaccounted = folders().filter(
      (t) => !(t in MODELED) && !(t in RESPONSES) && !(t in NOT_MODELED),
    );
    expect(unaccounted).toEqual([]);
    for (const reason of Object.values(NOT_MODELED)) expect(reason.length).toBeGreaterThan(10);
    // The lists name no folder that is not there (a stale entry would hide a renamed type).
    const present = new Set(folders());
    const named = [...Object.keys(MODELED), ...Object.keys(RESPONSES), ...Object.keys(NOT_MODELED)];
    expect(named.filter((t) => !present.has(t))).toEqual([]);
  });

  const modeled = folders().filter((t) => t in MODELED);
  it.each(modeled)('%s: every example parses unchanged', (type) => {
    const schema = MODELED[type] as z.ZodType;
    const all = examples(type);
    expect(all.length).toBeGreaterThan(0);
    for (const [file, data] of all) {
      const parsed = schema.safeParse(data);
      expect(parsed.success, `${type}/${file}: ${parsed.error?.message}`).toBe(true);
      expect(parsed.data, `${type}/${file}`).toEqual(data);
    }
  });

  const responses = folders().filter((t) => t in RESPONSES);
  it.each(responses)('%s: the envelope and its result parse unchanged', (type) => {
    const schema = RESPONSES[type] as z.ZodType;
    for (const [file, data] of examples(type)) {
      if (`${type}/${file}` in INVALID_EXAMPLES) {
        const result = (data as { result: unknown }).result;
        expect(schema.safeParse(result).success, `${type}/${file} now parses`).toBe(false);
        continue;
      }
      const envelope = wire.JSONRPCResultResponseSchema.parse(data);
      const result = envelope.result as { resultType?: string };
      // A tools/call, prompts/get or resources/read response may carry an InputRequiredResult.
      const parsed =
        result.resultType === 'input_required'
          ? wire.InputRequiredResultSchema.safeParse(result)
          : schema.safeParse(result);
      expect(parsed.success, `${type}/${file}: ${parsed.error?.message}`).toBe(true);
      expect(parsed.data).toEqual((data as { result: unknown }).result);
    }
  });
});
