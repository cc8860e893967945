import {
  type CallToolResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type RegisteredTool,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type {
  ConfirmationGate,
  FormFields,
  GatedTool,
  GatedToolDeclaration,
  GateRequest,
} from '@mrtr/gate';
import { legacyConfirmationFailure } from './legacy-advice.js';
import { type PrincipalOf, principalFromAuthInfo } from './principal.js';
import { eraOf, gateRequestOf } from './request.js';
import { type SdkToolResult, toProtocolError, toSdkResult } from './results.js';
import { type GatedCall, routeGatedTool } from './route.js';
import { argumentsSchema } from './schema.js';

/** Options of {@link registerGatedTool}. */
export interface GatedToolOptions {
  /**
   * Who the call acts for (default {@link principalFromAuthInfo}: the SDK's
   * `authInfo`, subject then client id). A call without one is refused.
   */
  principal?: PrincipalOf;
  /**
   * Receives what the tool threw that is not a JSON-RPC error (a database
   * failure in `ask` or `perform`); the client gets `-32603` "Internal error"
   * without detail. Default: the server's `onerror`, else `console.error`.
   */
  onError?: (error: unknown) => void;
}

/**
 * Register a gated tool on an official-SDK `McpServer`
 * (`@modelcontextprotocol/server` 2.4): the same declaration
 * `gate.tool({...})` takes (`@mrtr/gate`'s `GatedToolDeclaration`: `name`,
 * `args`, `form`, `ask`, `perform`, ...), listed by `tools/list` with the
 * declaration's `inputSchema` and annotations, and served for both
 * protocol eras:
 *
 * - 2026-07-28 (`createMcpHandler`, `serveStdio`): round 1 answers
 *   `input_required` with the form and the sealed ticket as `requestState`;
 *   the client retries on any instance.
 * - 2025-era (`initialize` on a session): the SDK's shim sends the form as an
 *   `elicitation/create` request on the open call and re-enters the tool with
 *   the answer; the ticket stays on the server. The checks are the same:
 *   principal, arguments, single use in the gate's replay store, decline and
 *   cancel. Needs a sessionful transport (see {@link serveBothEras}). The
 *   question stays open no longer than the ticket can be answered
 *   (`gate.ticketAcceptanceMs`: the sealer's ttl plus its skew, 330 s by
 *   default; the shim's `roundTimeoutMs` when sooner): then it is withdrawn
 *   and the call ends with a complete, non-error result saying the
 *   confirmation expired and nothing was changed, the same as for an
 *   answer that comes after the ticket expired (not the gate's `-32602`).
 *
 * Refusals reach the client as JSON-RPC errors: `-32021` (no form
 * elicitation declared: this request's `_meta`, or the session's
 * `initialize`), `-32602` (a ticket that does not open for this principal,
 * tool and arguments), `-32603` (replay store or audit unavailable, nothing
 * changed; no principal; anything else the tool threw, without detail).
 * Invalid arguments are an `isError` result naming the argument (SEP-1303:
 * the model can read and correct it; `@mrtr/server` answers `-32602`). The server's `requestState.verify` hook (e.g. the SDK's
 * `createRequestStateCodec`) keeps verifying the state of its other tools and
 * is not run on the gate's tickets.
 *
 * @returns the SDK's `RegisteredTool` (`disable()`, `enable()`, `remove()`
 *   and renames work; a new `callback` or `paramsSchema` throws `TypeError`)
 * @throws {TypeError} as `gate.tool()` does (a form without a consent field, arguments that are
 *   not an object schema)
 * @throws {Error} when a tool of that name is already registered
 */
export function registerGatedTool<Args, View, F extends FormFields, Tx>(
  server: McpServer,
  gate: ConfirmationGate<Tx>,
  declaration: GatedToolDeclaration<Args, View, F, Tx>,
  options: GatedToolOptions = {},
): RegisteredTool {
  const tool = gate.tool(declaration);
  const principalOf = options.principal ?? principalFromAuthInfo;
  const report =
    options.onError ??
    ((error: unknown) => {
      const onerror = server.server.onerror;
      if (onerror) onerror(error instanceof Error ? error : new Error(String(error)));
      else console.error('[mrtr/sdk] gated tool error', error);
    });

  const registered = server.registerTool(
    tool.name,
    {
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      description: tool.description,
      inputSchema: argumentsSchema(tool),
      annotations: tool.annotations,
    },
    // The router serves every call; were it ever bypassed, nothing is asked or changed.
    () => {
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
    },
  );
  // How long the gate's tickets can be answered: a 2025-era question is withdrawn no later.
  const answerableMs = gate.ticketAcceptanceMs;
  routeGatedTool(server, tool.name, {
    registered,
    serve: (request, ctx, call) =>
      serveGated(server, tool, {
        rawArgs: request.params.arguments ?? {},
        ctx,
        call,
        principalOf,
        report,
        answerableMs,
      }),
    expired: () => expiredResult(tool.name),
  });
  return registered;
}

/** `MissingRequiredClientCapability` (MCP 2026-07-28 `basic/index`, error codes). */
const MISSING_CAPABILITY = -32021;

interface ServeInput {
  rawArgs: unknown;
  ctx: ServerContext;
  call: GatedCall;
  principalOf: PrincipalOf;
  report: (error: unknown) => void;
  /** `ConfirmationGate.ticketAcceptanceMs`: how long a ticket can be answered once minted, ms. */
  answerableMs: number;
}

/**
 * What a 2025-era call answers when its confirmation expired: the ticket
 * could no longer be answered when the wait ended, or when the person's
 * answer arrived. A complete, non-error result (nothing was changed, as
 * after a cancel), never the gate's `-32602` "requestState rejected
 * (expired)": the 2025-era client never saw a `requestState`, and a late
 * answer is no invalid parameter.
 */
function expiredResult(name: string): CallToolResult {
  const text = `The confirmation expired before it was answered: nothing was changed. Call ${name} again to be asked again.`;
  return { content: [{ type: 'text', text }], isError: false };
}

/** Whether `error` is the gate's refusal of a ticket that has expired (`data.reason` `ticket_expired`). */
function isTicketExpired(error: ProtocolError): boolean {
  const data: unknown = error.data;
  return (
    error.code === ProtocolErrorCode.InvalidParams &&
    typeof data === 'object' &&
    data !== null &&
    (data as { reason?: unknown }).reason === 'ticket_expired'
  );
}

/** One round of a gated tool on `server`, in its era. */
async function serveGated<Args>(
  server: McpServer,
  tool: GatedTool<Args>,
  { rawArgs, ctx, call, principalOf, report, answerableMs }: ServeInput,
): Promise<SdkToolResult> {
  // An answer came (or this is the first round): nothing is waiting while the tool runs.
  call.answered();
  let args: Args;
  try {
    args = tool.parse(rawArgs);
  } catch (error) {
    const invalid = toProtocolError(error, report);
    if (invalid.code !== ProtocolErrorCode.InvalidParams) throw invalid;
    // SEP-1303: a result the model can read and correct (@mrtr/server answers -32602).
    return { content: [{ type: 'text', text: invalid.message }], isError: true };
  }
  const principal = await principalOf(ctx);
  if (!principal)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `${tool.name} needs an authenticated principal; nothing was asked or changed`,
    );
  const state = call.requestState;
  if (state !== undefined && typeof state !== 'string')
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid requestState: not a string', {
      reason: 'invalid_request_state',
    });
  const era = eraOf(server);
  const request: GateRequest = gateRequestOf(server, ctx, era, {
    principal,
    name: tool.name,
    rawArgs,
    requestState: state,
  });
  let result: Awaited<ReturnType<GatedTool<Args>['handler']>>;
  // No later than the gate mints a ticket in this round: its end is counted from here.
  const started = Date.now();
  try {
    result = await tool.handler(args, request);
  } catch (error) {
    const refusal = toProtocolError(error, report);
    // A 2025-era answer that came after the ticket (ours, never the client's) expired.
    if (era === 'legacy' && state !== undefined && isTicketExpired(refusal))
      return expiredResult(tool.name);
    const onSession = era === 'legacy' ? legacyConfirmationFailure(error, refusal) : undefined;
    if (onSession) throw onSession;
    if (era === 'legacy' && refusal.code === MISSING_CAPABILITY)
      // The gate's message points at this request's _meta; a 2025-era client declares at initialize.
      throw new ProtocolError(
        refusal.code,
        `${tool.name} needs a person to confirm it through ${modesOf(refusal.data)}elicitation, which this session did not declare at initialize`,
        refusal.data,
      );
    throw refusal;
  }
  if (result.resultType === 'input_required' && era === 'legacy') {
    // The SDK's shim fulfils the question on the open call and re-enters in process: the
    // ticket stays here (see GatedCall) instead of passing through your verify hook.
    // A new ticket can be answered for answerableMs; one asked again keeps its end.
    if (result.requestState !== call.requestState || call.answerBy === undefined)
      call.answerBy = started + answerableMs;
    call.requestState = result.requestState;
    call.waitUntil(call.answerBy);
    const { requestState: _kept, ...asking } = result;
    return toSdkResult(asking);
  }
  return toSdkResult(result);
}

/** The modes a `-32021` names (`data.requiredCapabilities.elicitation`), as `form or url `; else nothing. */
function modesOf(data: unknown): string {
  const needed = (data as { requiredCapabilities?: { elicitation?: unknown } } | undefined)
    ?.requiredCapabilities?.elicitation;
  const modes = needed && typeof needed === 'object' ? Object.keys(needed) : [];
  return modes.length > 0 ? `${modes.join(' or ')} ` : '';
}
