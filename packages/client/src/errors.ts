import { clip, type FormIssue, shownText } from '@mrtr/wire';

/**
 * What `JSON.stringify` leaves as it is but a reader must not meet raw: the C1
 * controls and DEL, format characters (bidi overrides, zero-width, tags), the
 * line and paragraph separators, other default-ignorable code points (Hangul
 * fillers; not the variation selectors emoji need, nor CGJ), the blank braille
 * pattern, private-use and unassigned code points (a font may draw them as
 * nothing). Each UTF-16 unit of one is escaped.
 */
const UNESCAPED =
  /(?![\ufe00-\ufe0f]|\u034f)[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/gu;
/** The UTF-16 unit of `text` at `i` as a JSON escape, `\u202e`. */
const escapeUnit = (text: string, i: number) =>
  `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`;

/**
 * A value the server sent, as an error message or event reason quotes it: a
 * string JSON-quoted (controls, bidi and other format characters as `\uXXXX`)
 * and clipped to 100 UTF-16 code units, a number, boolean
 * or null as JSON writes it, and only the kind of an array or object. Never
 * throws: `JSON.stringify` or `String` of an array nested 20,000 deep recurses
 * until the stack overflows (`RangeError`), which no server may cause.
 */
export function quoted(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(clip(value, 100)).replace(UNESCAPED, (c) =>
      c.length === 1 ? escapeUnit(c, 0) : escapeUnit(c, 0) + escapeUnit(c, 1),
    );
  if (typeof value === 'number' || typeof value === 'boolean' || value === null)
    return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Most UTF-16 code units of a server's `error.message` a {@link JsonRpcError}'s
 * `message` quotes (then `…`). Each of them the message escapes takes six
 * units (`\uXXXX`), so the message itself is at most 6,001 units long.
 */
export const MAX_ERROR_MESSAGE_LENGTH = 1000;

/** What {@link UNESCAPED} leaves raw but a one-line message must not hold: C0 controls and lone surrogates. */
const UNSHOWN_IN_MESSAGE =
  /(?![\ufe00-\ufe0f]|\u034f)[\p{Cc}\p{Cs}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/gu;

/**
 * A server's message as this client's own messages quote it: clipped to
 * {@link MAX_ERROR_MESSAGE_LENGTH}, every control, format, separator,
 * private-use, unassigned or default-ignorable character and lone surrogate
 * as its `\uXXXX` escape, quotes and backslashes as sent.
 */
function escapedMessage(text: string): string {
  return clip(text, MAX_ERROR_MESSAGE_LENGTH).replace(UNSHOWN_IN_MESSAGE, (c) =>
    c.length === 1 ? escapeUnit(c, 0) : escapeUnit(c, 0) + escapeUnit(c, 1),
  );
}

/** Why an {@link McpClientError} was thrown; one string per failure class. */
export type McpClientErrorCode =
  | 'rpc_error'
  | 'transport'
  | 'protocol'
  | 'round_limit'
  | 'invalid_answer'
  | 'aborted'
  | 'limit';

/**
 * Base class of every error `@mrtr/client` throws, discriminated by
 * {@link McpClientError.code}. Whenever one is thrown, nothing more was sent
 * for the call it ends.
 */
export class McpClientError extends Error {
  override readonly name: string = 'McpClientError';
  constructor(
    readonly code: McpClientErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The server answered with a JSON-RPC 2.0 error response (JSON-RPC 2.0 §5.1),
 * e.g. `-32021` MissingRequiredClientCapability with
 * `data.requiredCapabilities`, or `-32020` HeaderMismatch. Its `message` is
 * the server's `error.message` escaped and bounded, as every error of this
 * client quotes what a server sent (controls, bidi and other format
 * characters as `\uXXXX`, at most {@link MAX_ERROR_MESSAGE_LENGTH} code
 * units): a program that logs it, or lets it go uncaught, writes no escape
 * sequence of the server's to a terminal. The text as sent is
 * `serverMessage`; it and `data` are the server's, unescaped and unbounded.
 */
export class JsonRpcError extends McpClientError {
  override readonly name = 'JsonRpcError';
  constructor(
    /** The JSON-RPC `error.code`. */
    readonly rpcCode: number,
    /** The JSON-RPC `error.message` as the server sent it: escape and bound it before showing it. */
    readonly serverMessage: string,
    /** The JSON-RPC `error.data`, unparsed. */
    readonly data: unknown,
    /** The HTTP status the error came with (200, 400, 401, 404, …). */
    readonly httpStatus: number,
  ) {
    super('rpc_error', escapedMessage(serverMessage));
  }
}

/**
 * The HTTP exchange failed: the connection, a timeout, a status without a
 * JSON-RPC body, a body that is neither `application/json` nor
 * `text/event-stream`, or a stream that ended before the response.
 */
export class TransportError extends McpClientError {
  override readonly name = 'TransportError';
  /**
   * Whether the request was sent, or may have been, and its response was
   * lost: the connection failed or closed, or the event stream ended, before
   * the response (`basic/transports/streamable-http`: a broken stream loses
   * the in-flight request). Not set for a timeout, an HTTP error or a
   * response the client refused.
   */
  readonly responseLost: boolean;
  constructor(
    message: string,
    /** The HTTP status, when a response arrived. */
    readonly httpStatus?: number,
    options?: { cause?: unknown; responseLost?: boolean },
  ) {
    super(
      'transport',
      message,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.responseLost = options?.responseLost === true;
  }
}

/**
 * The server broke the protocol (MCP 2026-07-28): a response for another id,
 * an `InputRequiredResult` with neither `inputRequests` nor `requestState`,
 * an input request the client never declared a capability for, an unknown
 * `resultType`. The call stops; nothing is sent for it.
 */
export class ProtocolError extends McpClientError {
  override readonly name = 'ProtocolError';
  constructor(message: string) {
    super('protocol', message);
  }
}

/**
 * The server still wanted input after `maxRounds` requests
 * (`basic/patterns/mrtr`: servers may ask again; the client bounds it).
 * The last round's result was read first: a complete result is never lost
 * to this error.
 */
export class RoundLimitError extends McpClientError {
  override readonly name = 'RoundLimitError';
  constructor(
    /** How many requests were sent for the call. */
    readonly rounds: number,
    /** The last `InputRequiredResult`, as received. */
    readonly lastResult: Record<string, unknown>,
  ) {
    super('round_limit', `The server still asked for input after ${rounds} rounds; gave up.`);
  }
}

/**
 * The answerer kept returning content that fails the `requestedSchema`
 * (`client/elicitation`, "Form Mode Security": clients validate before
 * sending), or returned something that is not an `ElicitResult`. The
 * invalid content was never sent.
 */
export class InvalidAnswerError extends McpClientError {
  override readonly name = 'InvalidAnswerError';
  constructor(
    /** The `inputRequests` key the answer was for. */
    readonly key: string,
    /** What failed, field by field (`field: ""` for the answer as a whole). */
    readonly issues: FormIssue[],
  ) {
    super(
      'invalid_answer',
      `The answer to ${quoted(key)} is not valid: ${shownText(
        issues.map((i) => `${i.field ? quoted(i.field) : 'answer'} ${i.reason}`).join('; '),
        1000,
      )}`,
    );
  }
}

/** The caller aborted the call through its `AbortSignal`; no further request was sent. */
export class AbortedError extends McpClientError {
  override readonly name = 'AbortedError';
  constructor(options?: { cause?: unknown }) {
    super('aborted', 'The call was aborted.', options);
  }
}

/**
 * The server sent more than a client-side bound allows for one operation
 * (e.g. `tools/list` across its pages: more than `MAX_LISTED_TOOLS` tools or
 * `MAX_LISTING_BYTES` bytes). Nothing more was read or kept; the operation
 * stops rather than fill memory.
 */
export class LimitError extends McpClientError {
  override readonly name = 'LimitError';
  constructor(
    /** Which bound was passed, e.g. `MAX_LISTED_TOOLS`. */
    readonly limit: string,
    /** Its value, in the unit the message names (tools, bytes, …). */
    readonly bound: number,
    message: string,
  ) {
    super('limit', message);
  }
}
