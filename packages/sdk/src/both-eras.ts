import {
  type AuthInfo,
  type CreateMcpHandlerOptions,
  createMcpHandler,
  isInitializeRequest,
  isJSONRPCResponse,
  isLegacyRequest,
  type McpRequestContext,
  type McpServer,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { headerMismatchError } from '@mrtr/wire';
import {
  DEFAULT_MAX_BODY_DEPTH,
  DEFAULT_MAX_BODY_ITEMS,
  jsonWithin,
  MAX_META_MEMBERS,
  metaTooLarge,
  SDK_DEFAULT_MAX_BODY_BYTES,
  scanBody,
} from './depth.js';
import {
  isRequestId,
  jsonRpcError,
  jsonRpcResponse,
  requestEncodingProblem,
  requestIdOf,
  screenedError,
  unsupportedVersion,
} from './http.js';
import { principalOfAuthInfo } from './principal.js';
import {
  cursorRefusal,
  legacyParamsRefusal,
  PAGED_METHODS,
  retryFieldsRefusal,
} from './retry-fields.js';
import { illFormedPlace, illFormedRefusal } from './well-formed.js';

/** The revision without `initialize` or sessions (`MCP-Protocol-Version`). */
const MODERN_REVISION = '2026-07-28';

/** Every `MCP-Protocol-Version` either leg serves: this revision, then the SDK's handshake-era ones. */
const SERVED_VERSIONS: readonly string[] = [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS];

/** Options of {@link serveBothEras}. */
export interface BothErasOptions {
  /** Options of the 2026-07-28 leg, the SDK's `createMcpHandler` (its `legacy` is always `'reject'`). */
  modern?: Omit<CreateMcpHandlerOptions, 'legacy'>;
  /** A 2025-era session unused this long is closed, milliseconds (default 1 800 000, 30 minutes). */
  sessionIdleMs?: number;
  /** At most this many 2025-era sessions at once (default 1000); one more `initialize` gets HTTP 503. */
  maxSessions?: number;
  /**
   * At most this many 2025-era sessions per principal (default 32): a
   * principal's next `initialize` closes its own least recently used idle
   * session (a busy one only when all are), so one caller cannot fill
   * `maxSessions` and lock the others out. Callers without a principal are
   * not counted (nothing tells them apart): only `maxSessions` holds there.
   */
  maxSessionsPerPrincipal?: number;
  /** Clock for session idleness, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /**
   * Largest nesting of objects and arrays in a request body, the JSON-RPC
   * envelope being level 1 (default 65: `params` 64 deep, as `@mrtr/server`
   * allows). A deeper body gets HTTP 400 with `-32600` before the SDK reads
   * it: the SDK's recursive validation would overflow the call stack. The
   * check reads a copy of at most `modern.maxRequestBodySize` bytes (the
   * SDK's bound, default 4 MiB); a larger body is the SDK's 413.
   */
  maxBodyDepth?: number;
  /**
   * Most `:` and `,` outside strings a request body may hold, about two per
   * object member and one per array element (default 100,000: some 50,000
   * members). A body with more gets HTTP 400 with `-32600` before the SDK
   * reads it: the work of reading it grows with that count (a 4 MiB body of
   * 340,000 members held the event loop for four seconds). Counted by the
   * same scan as `maxBodyDepth`.
   */
  maxBodyItems?: number;
}

/** The web-standard handler {@link serveBothEras} returns (the face of the SDK's `McpHttpHandler`). */
export interface BothErasHandler {
  /** Serve one HTTP request with the caller's verified `authInfo` (never read from headers here). */
  fetch(request: Request, options?: { authInfo?: AuthInfo }): Promise<Response>;
  /** Close every 2025-era session and the 2026-07-28 leg. */
  close(): Promise<void>;
  /** 2025-era sessions open now. */
  readonly sessions: number;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  /** The principal that opened the session: no one else may use it. */
  owner: string | undefined;
  lastSeen: number;
  /** POST responses still streaming (a call waiting on `elicitation/create`): evicted last. */
  busy: number;
  /** Its `initialize` is not answered yet: never closed to make room (its client awaits it). */
  opening: boolean;
}

/**
 * `response` with `session.busy` counted down once its body has been read
 * to the end, has failed, or was cancelled by its reader, or once `signal`
 * aborts (the request's: Node adapters abort it when the client's socket
 * closes, which a stream idle while a person answers never notices
 * otherwise), or at once without a body: exactly once.
 */
function tracked(session: Session, response: Response, signal: AbortSignal): Response {
  if (response.body === null) {
    session.busy--;
    return response;
  }
  let counted = false;
  const settle = () => {
    if (counted) return;
    counted = true;
    session.busy--;
  };
  const reader = response.body.getReader();
  if (signal.aborted) settle();
  else
    signal.addEventListener(
      'abort',
      () => {
        settle();
        reader.cancel(signal.reason).catch(() => {});
      },
      { once: true },
    );
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          settle();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        settle();
        controller.error(error);
      }
    },
    async cancel(reason) {
      settle();
      await reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * Serve one server factory to both protocol eras over Streamable HTTP:
 *
 * - 2026-07-28 requests go to the SDK's `createMcpHandler(factory, { legacy: 'reject' })`:
 *   a fresh instance per request, nothing kept between requests, any
 *   instance behind a load balancer can serve any round of a confirmation.
 * - 2025-era requests (`isLegacyRequest`) go to a session: `initialize` opens
 *   one (`Mcp-Session-Id`, a random UUID) on a
 *   `WebStandardStreamableHTTPServerTransport` with an instance of its own,
 *   later requests of that session reach it. A 2025-era client can be asked
 *   for a confirmation only this way: the SDK sends `elicitation/create` to
 *   the client on the SSE stream of the open `tools/call` POST, and reads the
 *   client's capabilities from its `initialize`. A per-request (stateless)
 *   2025 instance never saw one, so a gated tool refuses there (`-32021`).
 *   Sessions live in this process: put 2025-era clients on sticky routing
 *   (by `Mcp-Session-Id`); the gate's replay store is what keeps a
 *   confirmation single-use across instances.
 *
 * A session belongs to the principal of its `initialize`
 * ({@link principalOfAuthInfo}); the same session id with another principal,
 * an unknown id or a closed one gets HTTP 404 (the client starts a new
 * session). A request without `Mcp-Session-Id` that names
 * `MCP-Protocol-Version: 2026-07-28` but that the SDK classifies as 2025-era
 * traffic (a `GET`, `PUT`, `DELETE`, `OPTIONS`; a `POST` of a JSON-RPC
 * response) gets `@mrtr/server`'s answer (405 with `Allow: POST`; 400
 * `-32600` "a request has no result member"), not the 2025-era "send
 * initialize first": 2026-07-28 has neither. No Origin or Host validation happens here: put the SDK's
 * `originValidationResponse` / `hostHeaderValidationResponse` in front.
 *
 * @example
 * ```ts
 * import type { AuthInfo, McpServer } from '@modelcontextprotocol/server';
 * import { serveBothEras } from '@mrtr/sdk';
 *
 * declare function buildServer(): McpServer; // a new McpServer with its tools
 * declare function verify(request: Request): Promise<AuthInfo>; // your token check
 * declare const request: Request;
 * const handler = serveBothEras(() => buildServer());
 * const response = await handler.fetch(request, { authInfo: await verify(request) });
 * ```
 * A request body nested deeper than `maxBodyDepth` gets HTTP 400 with
 * `-32600` before the SDK reads it; a JSON body in a charset other than
 * UTF-8, or under a `Content-Encoding` other than `identity`, gets 415 with
 * `-32600`, as `@mrtr/server` answers it; a `tools/call` whose
 * `params.arguments` is present but not a JSON object gets `-32602`
 * "Invalid tools/call params: arguments must be a JSON object" with its id,
 * on either leg (the SDK answered `-32602` with its zod issues as the
 * message); a 2026-07-28 `tools/call` whose
 * `inputResponses` is not a JSON object of JSON objects, or whose
 * `requestState` is not a string, gets `-32602` naming the field (the SDK
 * read `null` as absent); a list request (`tools/list`, `prompts/list`,
 * `resources/list`, `resources/templates/list`) whose `params.cursor` is
 * present but not a string gets `-32602` with its id, on either leg (the
 * SDK answered `-32603` with its parse issues); a `params._meta` of more than 1,000 members and
 * elements gets 400 with `-32600` (the SDK's check of it takes time that
 * grows with their square); a request whose `id` is a string that is not
 * well-formed Unicode (a lone surrogate) gets 400 with `-32600` and no `id`,
 * and one with such a string or member name under `params` (but in
 * `inputResponses`) 400 with `-32602` naming it, as `@mrtr/server` answers
 * them (the SDK served both, and echoed the id). An error carries the request's id, or no `id`
 * member when there is none to read (2026-07-28 has no `"id": null`): on
 * either leg the SDK's JSON error answers lose an `id` that is no
 * `RequestId`, and on a 2025-era session its transport's `"id": null` to a
 * request it could read (an unsupported `MCP-Protocol-Version`, an `Accept`
 * without both JSON and SSE, a second `initialize`) becomes that request's
 * id; an error's message quotes what the client sent only as `shownText` of
 * `@mrtr/wire` shows it (see `screenedError`).
 *
 * @throws {TypeError} for a `maxSessionsPerPrincipal`, `maxBodyDepth` or
 *   `maxBodyItems` that is not a positive integer, a `maxSessions` that is
 *   not an integer from 0 (0: no 2025-era session is opened), or a
 *   `sessionIdleMs` that is not a positive number of milliseconds.
 */
export function serveBothEras(
  factory: (ctx: McpRequestContext) => McpServer | Promise<McpServer>,
  options: BothErasOptions = {},
): BothErasHandler {
  const modern = createMcpHandler(factory, { ...options.modern, legacy: 'reject' });
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 1000;
  const perPrincipal = options.maxSessionsPerPrincipal ?? 32;
  // `Number(process.env.X)` of an unset X is NaN: it would lift the bound, or close every session.
  if (!Number.isInteger(maxSessions) || maxSessions < 0)
    throw new TypeError(`maxSessions must be an integer from 0, got ${maxSessions}`);
  if (!(idleMs > 0))
    throw new TypeError(`sessionIdleMs must be a positive number of milliseconds, got ${idleMs}`);
  if (!Number.isInteger(perPrincipal) || perPrincipal < 1)
    throw new TypeError(`maxSessionsPerPrincipal must be a positive integer, got ${perPrincipal}`);
  const now = options.now ?? Date.now;
  const maxDepth = options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH;
  // The depth scan reads no more of a body than the SDK itself would.
  const maxBytes = options.modern?.maxRequestBodySize ?? SDK_DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxDepth) || maxDepth < 1)
    throw new TypeError(`maxBodyDepth must be a positive integer, got ${maxDepth}`);
  const maxItems = options.maxBodyItems ?? DEFAULT_MAX_BODY_ITEMS;
  if (!Number.isInteger(maxItems) || maxItems < 1)
    throw new TypeError(`maxBodyItems must be a positive integer, got ${maxItems}`);
  const sessions = new Map<string, Session>();
  /** Initializes being answered: not in `sessions` yet, but counted against `maxSessions`. */
  let opening = 0;

  async function drop(id: string, session: Session) {
    sessions.delete(id);
    await session.transport.close().catch(() => {});
    await session.server.close().catch(() => {});
  }

  /**
   * Close `owner`'s least recently used sessions until it holds at most
   * `perPrincipal`, idle ones first: one with a call in progress (waiting on
   * the person) goes only when all are busy. The session being opened
   * (`opened`) is never one of them: it is the one asked for. Without a
   * principal there is no one to count: every anonymous caller is the same
   * `undefined`.
   */
  async function keepWithinShare(owner: string | undefined, opened: string) {
    if (owner === undefined) return;
    // Sessions whose initialize is still being answered are left out (their clients wait for
    // them); the share is applied again as each is answered (see `open`).
    const own = [...sessions].filter(
      ([id, session]) => session.owner === owner && id !== opened && !session.opening,
    );
    const excess = own.length + 1 - perPrincipal;
    if (excess <= 0) return;
    own.sort(([, x], [, y]) => Number(x.busy > 0) - Number(y.busy > 0) || x.lastSeen - y.lastSeen);
    for (const [id, session] of own.slice(0, excess)) await drop(id, session);
  }

  async function sweep() {
    const cutoff = now() - idleMs;
    for (const [id, session] of sessions) if (session.lastSeen < cutoff) await drop(id, session);
  }

  async function legacy(request: Request, authInfo: AuthInfo | undefined): Promise<Response> {
    await sweep();
    const handle = authInfo ? { authInfo } : {};
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session = sessions.get(id);
      if (!session || session.owner !== principalOfAuthInfo(authInfo))
        return jsonRpcError(404, -32001, 'Session not found');
      session.lastSeen = now();
      const body = request.method === 'POST' ? await jsonWithin(request, maxBytes) : undefined;
      // Arguments or a cursor of another type: the SDK's session answers its zod issues, as on 2026-07-28.
      const refusal = body === undefined ? undefined : legacyParamsRefusal(request, body);
      if (refusal) return refusal;
      // The transport's refusals say `"id": null` even to a request whose id it could read.
      if (request.method !== 'POST') {
        // A GET's stream stays open for the session's life, a call's only until it is answered:
        // only calls make a session busy, or every connected official client would be.
        const answer = await session.transport.handleRequest(request, handle);
        return screenedError(answer, requestIdOf(request, body));
      }
      session.busy++;
      let answer: Response;
      try {
        answer = await session.transport.handleRequest(request, handle);
      } catch (error) {
        session.busy--;
        throw error;
      }
      return tracked(
        session,
        await screenedError(answer, requestIdOf(request, body)),
        request.signal,
      );
    }
    const body = request.method === 'POST' ? await bodyOf(request) : undefined;
    // A body that is not JSON is a parse error (JSON-RPC 2.0 §5.1), whatever else is missing.
    if (request.method === 'POST' && body === undefined)
      return jsonRpcError(400, -32700, 'Parse error: body is not valid JSON');
    // Sent as 2026-07-28, which has neither initialize nor sessions: no 2025-era advice.
    const modernRefusal = notServedOnModern(request, body);
    if (modernRefusal) return modernRefusal;
    if (!isInitializeRequest(body))
      return jsonRpcError(
        400,
        -32000,
        'Bad Request: no valid Mcp-Session-Id; send initialize first',
      );
    // Counted before the first await: concurrent initializes would each see room otherwise.
    if (sessions.size + opening >= maxSessions)
      return jsonRpcError(503, -32000, 'Too many sessions; try again later');
    opening++;
    try {
      return await open(request, authInfo, handle, body);
    } finally {
      opening--;
    }
  }

  /** A new session for `request`, an `initialize` (see {@link legacy}). */
  async function open(
    request: Request,
    authInfo: AuthInfo | undefined,
    handle: { authInfo?: AuthInfo },
    body: unknown,
  ): Promise<Response> {
    const server = await factory({ era: 'legacy', ...handle, requestInfo: request });
    const session: Session = {
      server,
      owner: principalOfAuthInfo(authInfo),
      lastSeen: now(),
      busy: 0,
      opening: true,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, session);
          void keepWithinShare(session.owner, sid);
        },
        onsessionclosed: (sid) => {
          sessions.delete(sid);
        },
      }),
    };
    await server.connect(session.transport);
    try {
      const answer = await session.transport.handleRequest(request, handle);
      return screenedError(answer, requestIdOf(request, body));
    } finally {
      session.opening = false;
      // Sessions spared while they opened together may hold the principal over its share.
      const sid = session.transport.sessionId;
      if (sid !== undefined && sessions.get(sid) === session)
        void keepWithinShare(session.owner, sid);
    }
  }

  return {
    async fetch(request, fetchOptions = {}) {
      // Before anything reads the body, in either era: a body in another charset or under a
      // coding would be read as UTF-8 JSON as it stands (RFC 9110 §8.4: a coding not applied
      // is never ignored).
      const unreadable = request.method === 'POST' ? requestEncodingProblem(request) : undefined;
      if (unreadable)
        return jsonRpcError(415, -32600, unreadable, { 'accept-encoding': 'identity' });
      const scan =
        request.method === 'POST' && request.body !== null
          ? await scanBody(request, maxDepth, maxBytes)
          : undefined;
      // As `@mrtr/server` answers it: bytes that are not UTF-8 are no JSON text, not text to repair.
      if (scan && ('notUtf8' in scan || 'notJson' in scan))
        return jsonRpcError(400, -32700, 'Parse error: body is not valid JSON');
      if (scan?.deeper)
        return jsonRpcError(
          400,
          -32600,
          `Invalid Request: the body is nested deeper than ${maxDepth} levels`,
        );
      // Before the _meta check below, which parses the body: a body over the bound is not parsed.
      if (scan && scan.items > maxItems)
        return jsonRpcError(
          400,
          -32600,
          `Invalid Request: the body holds more than ${maxItems} ":" and "," outside strings (about two per member, one per element)`,
        );
      // Parsed only when the whole body holds about that many items: every request pays the scan alone.
      if (
        scan &&
        scan.items > MAX_META_MEMBERS &&
        metaTooLarge(await jsonWithin(request, maxBytes))
      )
        return jsonRpcError(
          400,
          -32600,
          `Invalid Request: params._meta holds more than ${MAX_META_MEMBERS} members and elements`,
        );
      // Parsed only when the body escapes a surrogate, which no ordinary request does.
      if (scan && 'surrogateEscapes' in scan && scan.surrogateEscapes) {
        const body = await jsonWithin(request, maxBytes);
        const place = illFormedPlace(body);
        if (place) return illFormedRefusal(body, place);
      }
      // A version neither leg serves: the SDK reads any later date (and any word) as the modern
      // era and asks for its `_meta`, so the client never learns which versions to fall back to.
      const version = request.headers.get('mcp-protocol-version')?.replace(/^[ \t]+|[ \t]+$/g, '');
      if (version !== undefined && !SERVED_VERSIONS.includes(version)) {
        const body = request.method === 'POST' ? await jsonWithin(request, maxBytes) : undefined;
        // Repeated fields arrive joined with ", " (RFC 9110 §5.3); no version holds a comma.
        if (version.includes(','))
          return jsonRpcResponse(
            400,
            requestIdOf(request, body),
            headerMismatchError('MCP-Protocol-Version must be sent once, with one version'),
          );
        return unsupportedVersion(version, SERVED_VERSIONS, requestIdOf(request, body));
      }
      // Batching left the protocol in 2025-06-18: a session of that version or later (which names
      // it in every request) may not send one, though the SDK's transport serves it.
      if (scan && 'batch' in scan && scan.batch && version !== undefined && version >= '2025-06-18')
        return jsonRpcError(
          400,
          -32600,
          `Invalid Request: JSON-RPC batches are not part of protocol version ${version} (they were removed in 2025-06-18)`,
        );
      // Under the modern leg's bound: a larger body is classified modern, which answers it 413.
      if (await isLegacyRequest(request, undefined, { maxRequestBodySize: maxBytes }))
        return legacy(request, fetchOptions.authInfo);
      // The SDK reads some malformed retry fields as absent, dumps its zod issues for arguments that
      // are no object, and reads a cursor of another type as its own fault (-32603): say what is wrong.
      const rpcMethod = request.method === 'POST' ? request.headers.get('mcp-method') : null;
      if (rpcMethod === 'tools/call') {
        const refusal = retryFieldsRefusal(request, await jsonWithin(request, maxBytes));
        if (refusal) return refusal;
      } else if (rpcMethod !== null && PAGED_METHODS.has(rpcMethod)) {
        const refusal = cursorRefusal(request, await jsonWithin(request, maxBytes));
        if (refusal) return refusal;
      }
      // 2026-07-28 has no `"id": null`.
      return screenedError(await modern.fetch(request, fetchOptions), undefined, { modern: true });
    },
    async close() {
      for (const [id, session] of [...sessions]) await drop(id, session);
      await modern.close();
    },
    get sessions() {
      return sessions.size;
    },
  };
}

/**
 * The answer to a request that names 2026-07-28 in `MCP-Protocol-Version`,
 * carries no `Mcp-Session-Id`, and that the SDK classifies as 2025-era
 * traffic all the same, or `undefined` for any other (a 2025-era `GET`
 * stream or `DELETE` carries its session id and never gets here). The
 * words are `@mrtr/server`'s (its endpoint on `@mrtr/node`), not a
 * session's: 2026-07-28 has no `initialize` and no session
 * (`basic/transports/streamable-http`: a client sends each message as a
 * `POST`).
 *
 * - any HTTP method but `POST` (`GET`, `PUT`, `DELETE`, `OPTIONS`, …): 405
 *   with `Allow: POST` and `-32600` "Method not allowed: use POST", no `id`.
 * - a `POST` whose body is a JSON-RPC response (a `result` or `error`
 *   member, JSON-RPC 2.0 §5): 400 with `-32600` "Invalid JSON-RPC request:
 *   a request has no result member (JSON-RPC 2.0 §4): with one it is a
 *   response, which a client does not send" (`error` for an error
 *   response), with the body's `id` when it is a `RequestId` (a string or a
 *   safe integer), else without one.
 */
function notServedOnModern(request: Request, body: unknown): Response | undefined {
  if (request.headers.get('mcp-protocol-version') !== MODERN_REVISION) return undefined;
  if (request.method !== 'POST')
    return jsonRpcError(405, -32600, 'Method not allowed: use POST', { allow: 'POST' });
  if (!isJSONRPCResponse(body)) return undefined;
  const member = 'result' in body ? 'result' : 'error';
  const id: unknown = body.id;
  const error = {
    code: -32600,
    message: `Invalid JSON-RPC request: a request has no ${member} member (JSON-RPC 2.0 §4): with one it is a response, which a client does not send`,
  };
  return Response.json(
    { jsonrpc: '2.0', ...(isRequestId(id) ? { id } : {}), error },
    { status: 400 },
  );
}

/** The JSON body of `request` (read from a clone), or `undefined` when it is not JSON. */
async function bodyOf(request: Request): Promise<unknown> {
  try {
    return await request.clone().json();
  } catch {
    return undefined;
  }
}
