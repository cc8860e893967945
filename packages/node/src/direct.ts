/**
 * The direct path of `toNodeHandler`: an `IncomingMessage` read as the
 * endpoint's `HttpExchange` and its `HttpReply` written to the
 * `ServerResponse`, without the web `Request` and `Response` the conversion
 * of `@hono/node-server` builds. It runs the same endpoint code
 * (`McpEndpoint.serve`), and takes only requests whose outcome cannot differ
 * from the converted path's: HTTP/1, a plain `Host`, a plain request-target
 * and a body nobody has read yet. Everything else goes through the conversion.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
// Node's own, not the global: fake timers in an application's tests replace the global and would hold every reply.
import { setImmediate as atTurnEnd } from 'node:timers';
import type { BodyRead, HttpExchange, HttpReply } from '@mrtr/server';
import { bodyText, DISCARD_LIMIT_BYTES, DISCARD_TIMEOUT_MS } from '@mrtr/server';
import { lazyRequest } from './request.js';

// Request-targets `@hono/node-server` takes without parsing a URL (it validates others, with 400s of
// its own) and Hosts whose URL needs no normalizing: outside them the converted path answers.
const PLAIN_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;
/** A lower-case name and a port of 1000 to 65535 without a leading zero (no default port to normalize away). */
const PLAIN_HOST = /^[a-z0-9._-]+(?::([1-9]\d{3,4}))?$/;

/** Whether `host` is a `Host` the direct path serves as it is (see {@link PLAIN_HOST}). */
function plainHost(host: string): boolean {
  const match = PLAIN_HOST.exec(host);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
}

/** Whether the direct path may serve `req`, whose target `path` (or any, when `false`) matched. */
export function directlyServable(req: IncomingMessage): boolean {
  const host = req.headers.host;
  const target = req.url ?? '';
  return (
    req.httpVersionMajor === 1 &&
    typeof host === 'string' &&
    plainHost(host) &&
    PLAIN_TARGET.test(target) &&
    !DOT_SEGMENT.test(target) &&
    (req as IncomingMessage & { rawBody?: unknown }).rawBody === undefined &&
    // Nobody has read or drained the body (a body parser may have consumed an empty one); a
    // pause is undone when the body is read. One set flowing with no listener may have lost data.
    req.readableFlowing !== true &&
    !req.readableDidRead &&
    !req.readableEnded
  );
}

/** Fields Node keeps once (it drops repeats) where `Headers.get` joins them: read from `rawHeaders`. */
const KEPT_ONCE = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'cookie',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'set-cookie',
  'user-agent',
]);

/** A header of `req` as `Headers.get` gives it: repeated fields joined with `", "`, `null` when absent. */
export function headerOf(req: IncomingMessage, name: string): string | null {
  if (!KEPT_ONCE.has(name)) {
    const value = Object.hasOwn(req.headers, name) ? req.headers[name] : undefined;
    if (typeof value === 'string') return value;
    if (value === undefined) return null;
  }
  const raw = req.rawHeaders;
  let joined: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i] as string;
    if (field.length === name.length && field.toLowerCase() === name) {
      const value = raw[i + 1] as string;
      joined = joined === null ? value : `${joined}, ${value}`;
    }
  }
  return joined;
}

/**
 * Read the whole body of `req`, refusing it past `maxBytes`. A body past it
 * is read to its end and dropped (at most 16 MiB more, for at most 5 s), so
 * a client still sending gets the 413 rather than a reset; a declared
 * `Content-Length` beyond that is refused before a byte is read.
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  if (req.readableEnded || req.destroyed)
    return Promise.resolve({ ok: false, reason: 'unreadable' });
  const declared = headerOf(req, 'content-length');
  const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : undefined;
  if (length !== undefined && length > maxBytes + DISCARD_LIMIT_BYTES)
    return Promise.resolve({ ok: false, reason: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const done = (read: BodyRead) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onBroken).off('close', onBroken);
      req.off('data', discard).off('end', tooLarge).off('error', tooLarge).off('close', tooLarge);
      resolve(read);
    };
    const tooLarge = () => done({ ok: false, reason: 'too-large' });
    // Past the limit, the rest is read and dropped, so that the client, still sending, reads the
    // 413 instead of a reset connection; within bounds, else the 413 goes out at once.
    const discard = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes + DISCARD_LIMIT_BYTES) tooLarge();
    };
    const dropTheRest = () => {
      chunks.length = 0;
      req.off('data', onData).off('end', onEnd).off('error', onBroken).off('close', onBroken);
      req.on('data', discard).on('end', tooLarge).on('error', tooLarge).on('close', tooLarge);
      timer = setTimeout(tooLarge, DISCARD_TIMEOUT_MS);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else dropTheRest();
    };
    const onEnd = () =>
      done(bodyText(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), maxBytes));
    const onBroken = () => done({ ok: false, reason: 'unreadable' });
    req.on('data', onData).on('end', onEnd).on('error', onBroken).on('close', onBroken);
    // Declared too large: nothing of it is kept, and the 5 s bound starts now.
    if (length !== undefined && length > maxBytes) dropTheRest();
    // A middleware that paused the request (`req.pause()`) left it so: a `data` listener does not
    // resume it, and the body, all received, would never be read nor time out (helper-161 L1).
    if (req.isPaused()) req.resume();
  });
}

/**
 * The exchange of one request: everything is read from `req` when the endpoint asks. A class,
 * not an object literal: a literal with getters is a new set of functions per request, which
 * V8 keeps as a slow dictionary-mode object and whose reach it promotes to the old generation
 * (docs/benchmarks.md, "Garbage").
 */
class NodeExchange implements HttpExchange {
  readonly method: string;
  #controller: AbortController | undefined;
  #request: Request | undefined;
  #body: string | undefined;
  /** The real web Request took the unread body stream (`authenticate` read it): the endpoint cannot. */
  #taken = false;
  readonly #host: string;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    this.method = req.method ?? 'GET';
    this.#host = req.headers.host as string;
  }

  header(name: string): string | null {
    return headerOf(this.req, name);
  }

  host(): string {
    return headerOf(this.req, 'host') ?? this.#host;
  }

  async readBody(maxBytes: number): Promise<BodyRead> {
    if (this.#taken) return { ok: false, reason: 'unreadable' };
    const read = await readBody(this.req, maxBytes);
    if (read.ok) this.#body = read.text;
    return read;
  }

  get request(): Request {
    this.#request ??= lazyRequest(this.req, this, () => {
      if (this.#body === undefined) this.#taken = true;
      return this.#body;
    });
    return this.#request;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      const c = new AbortController();
      this.#controller = c;
      const res = this.res;
      // The client went away before the reply was written: the request is cancelled.
      if (res.destroyed && !res.writableFinished) c.abort();
      else res.once('close', () => res.writableFinished || c.abort());
    }
    return this.#controller.signal;
  }
}

/** The exchange of one request: everything is read from `req` when the endpoint asks. */
export function nodeExchange(req: IncomingMessage, res: ServerResponse): HttpExchange {
  return new NodeExchange(req, res);
}

/** A whole reply waiting for the end of the event loop's turn (see {@link writeReply}). */
class PendingReply {
  constructor(
    readonly res: ServerResponse,
    readonly reply: HttpReply,
    readonly body: string | null,
    readonly resolve: () => void,
    readonly reject: (error: unknown) => void,
  ) {}

  write(): void {
    const { res, reply, body } = this;
    try {
      const length = body === null ? 0 : Buffer.byteLength(body);
      // `...{}` first: V8 (Node 20) promotes a leading spread's copy once a property is added to it.
      res.writeHead(reply.status, { ...{}, ...reply.headers, 'content-length': String(length) });
      res.end(body ?? undefined);
      this.resolve();
    } catch (error) {
      this.reject(error);
    }
  }
}

let pending: PendingReply[] = [];
let writesOnExit = false;

function writePending(): void {
  const batch = pending;
  pending = [];
  for (const reply of batch) reply.write();
}

/**
 * Write `reply` to `res`: a text body with its length, none, or an SSE stream chunk by chunk.
 *
 * A whole (text or empty) body is written at the end of the event loop's
 * current turn (`setImmediate`, the check phase), together with every other
 * reply finished in that turn, not the moment it is ready. Each write to a
 * socket whose peer sleeps pays for waking the peer (an inter-processor
 * interrupt, dear on a virtual machine); replies written back to back find it
 * awake. Node runs each socket's callback and its microtasks to the end
 * before the next socket's, so a reply written at once would always wake.
 * The cost: a reply waits for the rest of its turn (the other requests read
 * in it), never longer. An SSE stream's headers and events go out at once.
 * @returns a promise that settles once the reply is handed to the socket; it
 *   rejects with what `res.writeHead` or `res.end` threw (an invalid header).
 */
export async function writeReply(res: ServerResponse, reply: HttpReply): Promise<void> {
  const { status, headers, body } = reply;
  if (typeof body === 'string' || body === null) {
    return new Promise<void>((resolve, reject) => {
      const whole = new PendingReply(res, reply, body, resolve, reject);
      if (pending.length === 0) atTurnEnd(writePending);
      // A process that exits or crashes before the turn ends still hands its finished replies to the sockets.
      if (!writesOnExit) {
        writesOnExit = true;
        process.on('exit', writePending);
      }
      pending.push(whole);
    });
  }
  res.writeHead(status, headers);
  res.flushHeaders();
  const reader = body.getReader();
  // The client closed the stream: cancel it, which aborts the request (see the endpoint's respond).
  const cancel = () => res.writableFinished || reader.cancel().catch(() => {});
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const written = res.write(value);
      // A compressing middleware (`compression()`) holds what is written until flushed: an event
      // held is no event (helper-161 L2). Without one, `flush` is absent (or Node's no-op).
      (res as typeof res & { flush?: () => void }).flush?.();
      if (!written) await new Promise((r) => res.once('drain', r).once('close', r));
      if (res.destroyed) return;
    }
    res.end();
  } catch (error) {
    res.destroy(error instanceof Error ? error : new Error(String(error)));
  } finally {
    res.off('close', cancel);
  }
}
