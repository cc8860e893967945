import { z } from 'zod';

/** `TextContent`: a text block of a tool result. */
export interface TextContent {
  type: 'text';
  text: string;
  _meta?: Record<string, unknown>;
}

/** `ContentBlock`: text here; images, audio and resources pass through unchanged. */
export type ContentBlock = TextContent | ({ type: string } & Record<string, unknown>);

/** `CallToolResult` with `resultType: "complete"`. */
export interface CallToolResult {
  resultType: 'complete';
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** Zod schema of a complete `CallToolResult`. */
export const CallToolResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  content: z.array(z.looseObject({ type: z.string() })),
  // Any JSON value (object, array, string, number, boolean or null), per the 2026-07-28 schema.
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
});

/** `Tool`: a tool definition as `tools/list` returns it. */
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  outputSchema?: { type: 'object'; [k: string]: unknown };
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  _meta?: Record<string, unknown>;
}

/** `ListToolsResult` with the 2026-07-28 caching hints (`ttlMs` in milliseconds). */
export interface ListToolsResult {
  resultType: 'complete';
  tools: Tool[];
  nextCursor?: string;
  ttlMs: number;
  cacheScope: 'public' | 'private';
}

/**
 * `DiscoverResult`: what `server/discover` answers. The server's identity
 * travels in `_meta["io.modelcontextprotocol/serverInfo"]`; `ttlMs` is milliseconds.
 */
export interface DiscoverResult {
  resultType: 'complete';
  supportedVersions: string[];
  capabilities: Record<string, unknown>;
  instructions?: string;
  ttlMs: number;
  cacheScope: 'public' | 'private';
  _meta?: Record<string, unknown>;
}

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
