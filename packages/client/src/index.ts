/**
 * @mrtr/client: the client side of MCP 2026-07-28 Multi Round-Trip Requests
 * over Streamable HTTP, with a person answering every elicitation.
 *
 * Answers come only from the {@link Answerer} the caller supplies; the client
 * never answers, confirms or consents on anyone's behalf. It declares the
 * elicitation modes that answerer can show, validates accepted content
 * against the `requestedSchema` before sending, declines (and reports) forms
 * it cannot draw faithfully, and opens a URL only after the person saw it and
 * consented.
 *
 * @example
 * ```ts
 * import { type Answerer, type FormAnswer, type FormQuestion, McpClient } from '@mrtr/client';
 *
 * declare function showForm(q: FormQuestion): Promise<FormAnswer>; // your user interface
 * const person: Answerer = {
 *   async form(q) {
 *     // Show q.server, q.message verbatim and a field per property of q.requestedSchema;
 *     // return exactly what the person entered.
 *     return await showForm(q);
 *   },
 * };
 * const client = new McpClient({
 *   url: 'http://127.0.0.1:3000/mcp',
 *   headers: { Authorization: `Bearer ${process.env.MRTR_TOKEN}` },
 *   answerer: person,
 * });
 * await client.discover();
 * const { result, rounds } = await client.callTool('notes_delete', {
 *   workspaceUri: 'notes://team',
 *   title: 'Meeting notes',
 * });
 * console.log(result.content, result.isError, rounds);
 * ```
 * @module @mrtr/client
 * @packageDocumentation
 */
export type {
  Answerer,
  AskingRequest,
  FormAnswer,
  FormQuestion,
  ServerIdentity,
  UrlAnswer,
  UrlQuestion,
} from './answerer.js';
export { capabilitiesFor } from './answerer.js';
export {
  type CallOptions,
  type CallOutcome,
  type ContentBlock,
  MAX_KEPT_NOTIFICATION_CHARS,
  MAX_KEPT_NOTIFICATIONS,
  MAX_LIST_PAGES,
  MAX_LISTED_TOOLS,
  MAX_LISTING_BYTES,
  McpClient,
  type McpClientOptions,
  type ToolInfo,
  type ToolList,
  type ToolResult,
} from './client.js';
export {
  AbortedError,
  InvalidAnswerError,
  JsonRpcError,
  LimitError,
  MAX_ERROR_MESSAGE_LENGTH,
  McpClientError,
  type McpClientErrorCode,
  ProtocolError,
  RoundLimitError,
  TransportError,
} from './errors.js';
export type { AutoDeclined, ClientEvent, QuestionContext } from './events.js';
export { MAX_REISSUES } from './exchange.js';
export {
  checkRenderable,
  MAX_FIELD_CHOICES,
  MAX_FORM_FIELDS,
  type Renderable,
} from './form.js';
export { paramHeaders } from './headers.js';
export { type ElicitResponse, MAX_QUESTIONS_PER_ROUND } from './inputs.js';
export {
  MAX_REDIRECTS,
  MAX_RESPONSE_BYTES,
  protocolHeaders,
  type ServerNotification,
} from './transport.js';
export { inspectUrl, type UrlFacts, type UrlInspection } from './url.js';
