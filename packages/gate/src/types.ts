import type { TicketClaims } from '@mrtr/ticket';
import type {
  CallToolResult,
  ClientCapabilities,
  Implementation,
  RequestedSchema,
} from '@mrtr/wire';

/**
 * What the gate needs to know about the request it guards. `@mrtr/server`'s
 * request context satisfies it; any other server can build one.
 */
export interface GateRequest {
  /** The authenticated principal, or its id. Never taken from the request body. */
  principal: string | { id: string };
  /** The JSON-RPC method, e.g. `tools/call`. */
  method: string;
  /** The tool or prompt name, or the resource URI. */
  name: string;
  /** The request arguments as received (bound into the ticket by digest). */
  arguments: Record<string, unknown>;
  /** `io.modelcontextprotocol/clientCapabilities` of this request's `_meta`, as received. */
  capabilities: ClientCapabilities | undefined;
  /** `params.inputResponses` as received (unvalidated). */
  inputResponses: Record<string, unknown> | undefined;
  /** `params.requestState` as received (attacker-controlled). */
  requestState: string | undefined;
  /** The JSON-RPC id of this request (audit records, span attribute `jsonrpc.request.id`). */
  requestId?: string | number | undefined;
  /**
   * The request `_meta` as received. The gate reads `traceparent`,
   * `tracestate` and `baggage` (W3C Trace Context and Baggage; MCP
   * 2026-07-28 `basic/index`, "OpenTelemetry trace context"),
   * `io.modelcontextprotocol/protocolVersion` and, unless `clientInfo` is
   * given, `io.modelcontextprotocol/clientInfo`.
   */
  meta?: Record<string, unknown> | undefined;
  /** `io.modelcontextprotocol/clientInfo` of this request: self-reported, recorded in the audit, never trusted. */
  clientInfo?: Implementation | undefined;
}

/** The question a gate puts to the person: a form-mode `elicitation/create`. */
export interface GateQuestion {
  /** Text shown to the person; say exactly what will happen. */
  message: string;
  /** The flat form schema (`requestedSchema`). */
  requestedSchema: RequestedSchema;
}

/** Data sealed in the ticket at round 1 and handed back on every later round. */
export interface SealedContext<App> {
  /** Candidate ids offered in the form (signed). */
  candidates: string[] | undefined;
  /** Application data sealed at round 1. */
  app: App;
}

/** What `prepare` returns: the sealed context of a question, or a final result (e.g. nothing matched). */
export type Preparation<App> =
  | { candidates?: string[]; app: App; result?: undefined }
  | { result: CallToolResult };

/** What `perform` receives once every check passed. */
export interface PerformInput<App, Tx> {
  /** The accepted content, validated against the schema, the candidates and `check`. */
  content: Record<string, string | number | boolean | string[]>;
  /** The verified ticket claims. */
  claims: TicketClaims<App>;
  /** Sealed candidates and application data. */
  sealed: SealedContext<App>;
  /** What the replay store hands over, e.g. a database transaction. */
  tx: Tx;
}

/**
 * One gated operation, as a tool author declares it.
 * `App` is the application data sealed in the ticket; `Tx` the replay store's transaction type.
 */
export interface GateSpec<App, Tx> {
  /** The `inputRequests` key of the question, e.g. `delete_choice`. */
  key: string;
  /** Phase label sealed in the ticket (default `confirm`). */
  phase?: string;
  /**
   * Round 1: compute what only the server knows (the candidates and what the
   * form will state). Also called for a fresh question when the target changed.
   */
  prepare(): Promise<Preparation<App>>;
  /**
   * Build the question from sealed data. Pure: called at round 1 and again,
   * with a `notice`, whenever the person must be asked again.
   */
  question(sealed: SealedContext<App>, notice?: string): GateQuestion;
  /**
   * The form field whose value must be one of the sealed candidates, if any.
   */
  candidateField?: string;
  /**
   * Whether an accepted, valid answer gives consent, e.g.
   * `(content) => content.confirm === true`. Required: in form mode `accept`
   * only means the person submitted the form, so a form with a "yes, delete"
   * box must say here that the box was ticked. Return `true` only when
   * submitting the form is itself the consent (a typed name checked by
   * `check`). `false` is treated like `decline`: nothing happens and the
   * ticket is used up.
   */
  consents(content: PerformInput<App, Tx>['content'], sealed: SealedContext<App>): boolean;
  /**
   * Rules a schema cannot say (a typed name equals the target). Return a
   * notice to ask again with the same ticket, or `undefined` to go on.
   */
  check?(content: PerformInput<App, Tx>['content'], sealed: SealedContext<App>): string | undefined;
  /**
   * Re-authorize, re-read the live record and mutate, inside the replay
   * store's claim. Throw {@link StaleTargetError} when the record changed
   * since the question was asked: the claim is released and a fresh question
   * is put.
   */
  perform(input: PerformInput<App, Tx>): Promise<CallToolResult>;
  /** Result for `decline` or a non-consenting accept (default: a plain refusal). */
  declined?(sealed: SealedContext<App>): CallToolResult;
  /** Result for `cancel` (default: says nothing was done). */
  cancelled?(sealed: SealedContext<App>): CallToolResult;
}

/**
 * Thrown from `perform` when the live target no longer matches what the
 * person was shown (gone, moved, renamed, changed). Nothing is mutated and a
 * fresh question is put.
 */
export class StaleTargetError extends Error {
  override readonly name = 'StaleTargetError';
}
