import type { Implementation } from '@mrtr/wire';
import type { Answerer } from './answerer.js';
import type { AutoDeclined, ClientEvent } from './events.js';

/** A content block of a tool result (`text`, `image`, `audio`, `resource_link`, `resource`). */
export type ContentBlock = { type: string; text?: string } & Record<string, unknown>;

/**
 * A complete `CallToolResult`. `resultType` is `"complete"`, or absent when
 * the server predates it (read as complete, per the 2026-07-28 schema).
 */
export interface ToolResult {
  resultType?: 'complete';
  content: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** A tool as `tools/list` describes it. */
export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: {
    type?: string;
    properties?: Record<string, unknown>;
    required?: string[];
  } & Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Options of {@link McpClient}. */
export interface McpClientOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string | URL;
  /** Headers sent with every request, e.g. `{Authorization: "Bearer …"}`. */
  headers?: Record<string, string>;
  /** `io.modelcontextprotocol/clientInfo` (default `{name: "@mrtr/client", version}`, this package's version). */
  clientInfo?: Implementation;
  /** The answerer for calls that do not name their own. Without one, no elicitation is declared. */
  answerer?: Answerer;
  /** `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Requests sent per call at most, the first included: 1 to 1000 (default 8). */
  maxRounds?: number;
  /** Milliseconds a question may stay unanswered before it counts as `cancel` (default 120 000). */
  answerTimeoutMs?: number;
  /** Milliseconds one HTTP exchange may take (default 120 000). */
  requestTimeoutMs?: number;
  /**
   * Milliseconds all the pages of one {@link McpClient.listTools} may take together
   * (default 120 000); past it the listing fails with `TransportError`.
   */
  listTimeoutMs?: number;
  /** Invalid answers to one question before the call fails with `InvalidAnswerError`: 0 to 1000 (default 3). */
  maxInvalidAnswers?: number;
  /** Receives every {@link ClientEvent} as it happens. */
  onEvent?: (event: ClientEvent) => void;
}

/** Per-call options of {@link McpClient.callTool} and friends. */
export interface CallOptions {
  /** Overrides the client's answerer for this call; capabilities follow it. */
  answerer?: Answerer;
  /** Aborts the call: pending HTTP and the open question. */
  signal?: AbortSignal;
  /** The tool definition, to mirror its `x-mcp-header` arguments (default: from the last `listTools`). */
  tool?: ToolInfo;
  /** Overrides {@link McpClientOptions.maxRounds}. */
  maxRounds?: number;
  /** Overrides {@link McpClientOptions.answerTimeoutMs}. */
  answerTimeoutMs?: number;
  /** Receives this call's events (as well as the client's `onEvent`). */
  onEvent?: (event: ClientEvent) => void;
}

/** What a call ended with. */
export interface CallOutcome<R> {
  /** The complete result. */
  result: R;
  /** Requests sent, the first included. */
  rounds: number;
  /** Input requests the client declined without asking anyone, and why. */
  autoDeclined: AutoDeclined[];
  /**
   * Everything that happened, in order, but `notification` and `ignored`
   * events past `MAX_KEPT_NOTIFICATIONS` (1000) or `MAX_KEPT_NOTIFICATION_CHARS`
   * (1 Mi UTF-16 code units of their data) for the call: those reached
   * `onEvent` and were not kept.
   */
  events: ClientEvent[];
  /** How many `notification` and `ignored` events were left out of {@link CallOutcome.events}. */
  droppedEvents: number;
}

/** What {@link McpClient.listTools} returns. */
export interface ToolList {
  tools: ToolInfo[];
  /** Tools left out because their definition is invalid (e.g. a broken `x-mcp-header`). */
  rejected: { name: string; reason: string }[];
}
