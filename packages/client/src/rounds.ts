import { ErrorCode } from '@mrtr/wire';
import type { Answerer, AskingRequest, ServerIdentity } from './answerer.js';
import { JsonRpcError, ProtocolError, quoted, RoundLimitError } from './errors.js';
import type { AutoDeclined, ClientEvent } from './events.js';
import { answerInputRequests } from './inputs.js';
import type { CallOutcome, ToolResult } from './types.js';

/** What the MRTR loop needs from the client and the call. */
export interface RoundsContext {
  /** Send one request of the call with these extra headers; a new JSON-RPC id each time. */
  send(
    params: Record<string, unknown>,
    headers: Record<string, string>,
  ): Promise<Record<string, unknown>>;
  emit(event: ClientEvent): void;
  /** The events kept for the outcome. */
  events: ClientEvent[];
  /** How many events were left out of {@link RoundsContext.events} so far. */
  droppedEvents(): number;
  answerer: Answerer | undefined;
  server: ServerIdentity;
  serverUrl: URL;
  request: AskingRequest;
  maxRounds: number;
  answerTimeoutMs: number;
  maxInvalidAnswers: number;
  signal: AbortSignal | undefined;
  /** `Mcp-Param-*` headers of the call (empty for prompts and resources). */
  headers: Record<string, string>;
  /**
   * After `-32020` HeaderMismatch: re-read the tool's definition
   * (`tools/list`) and return the headers it now calls for, or `undefined`
   * when the tool is gone or invalid.
   */
  refreshHeaders?(): Promise<Record<string, string> | undefined>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const sameHeaders = (a: Record<string, string>, b: Record<string, string>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/**
 * The MRTR loop (`basic/patterns/mrtr`, "Client Requirements"): send, and
 * while the result is an `InputRequiredResult`, have the answerer answer and
 * retry with the same params, `inputResponses` under the same keys and
 * `requestState` echoed exactly (absent when none was given).
 *
 * Once per call, a `-32020` HeaderMismatch on `tools/call` re-lists the tools
 * and sends the same round again with the headers the fresh definition calls
 * for (`basic/transports/streamable-http`, "Client Behavior"); the answers
 * already given are sent as they were, nobody is asked twice. When the fresh
 * headers equal the ones sent, or the tool is gone, the error is thrown.
 */
export async function runRounds(
  base: Record<string, unknown>,
  ctx: RoundsContext,
): Promise<CallOutcome<Record<string, unknown> & ToolResult>> {
  let headers = ctx.headers;
  let relisted = false;
  const sendRound = async (params: Record<string, unknown>) => {
    try {
      return await ctx.send(params, headers);
    } catch (error) {
      if (
        relisted ||
        !ctx.refreshHeaders ||
        !(error instanceof JsonRpcError) ||
        error.rpcCode !== ErrorCode.HeaderMismatch
      )
        throw error;
      relisted = true;
      const fresh = await ctx.refreshHeaders();
      if (!fresh || sameHeaders(fresh, headers)) throw error;
      headers = fresh;
      ctx.emit({
        type: 'retried',
        method: ctx.request.method,
        reason: 'header-mismatch',
        detail: `tools/list gave ${ctx.request.target} new Mcp-Param headers; sent again`,
      });
      return ctx.send(params, headers);
    }
  };

  let retry: { inputResponses?: Record<string, unknown>; requestState?: string } = {};
  for (let round = 1; ; round++) {
    const result = await sendRound({ ...base, ...retry });
    const type = result.resultType;
    if (type === undefined || type === 'complete') {
      ctx.emit({ type: 'round', round, resultType: 'complete', keys: [] });
      const autoDeclined = ctx.events.filter((e): e is AutoDeclined => e.type === 'auto-declined');
      return {
        result: result as Record<string, unknown> & ToolResult,
        rounds: round,
        autoDeclined,
        events: ctx.events,
        droppedEvents: ctx.droppedEvents(),
      };
    }
    if (type !== 'input_required') throw new ProtocolError(`Unknown resultType ${quoted(type)}`);
    const { inputRequests, requestState } = result;
    if (inputRequests !== undefined && !isObject(inputRequests)) {
      throw new ProtocolError('inputRequests is not an object');
    }
    if (requestState !== undefined && typeof requestState !== 'string') {
      throw new ProtocolError('requestState is not a string');
    }
    if (inputRequests === undefined && requestState === undefined) {
      throw new ProtocolError('An InputRequiredResult needs inputRequests or requestState');
    }
    ctx.emit({ type: 'round', round, resultType: type, keys: Object.keys(inputRequests ?? {}) });
    if (round >= ctx.maxRounds) throw new RoundLimitError(round, result);
    retry = {};
    if (inputRequests !== undefined) {
      retry.inputResponses = await answerInputRequests(inputRequests, { ...ctx, round });
    }
    // Echoed as received; never inspected. Absent here → absent in the retry.
    if (requestState !== undefined) retry.requestState = requestState;
  }
}
