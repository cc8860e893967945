/**
 * @mrtr/hono: mount an `@mrtr/server` MCP endpoint on Hono 4.
 *
 * Hono already speaks web-standard `Request` and `Response`; this adapter
 * hands the endpoint the principal your middleware put on the context.
 *
 * @example
 * ```ts
 * import { mcpHandler } from '@mrtr/hono';
 * import { type AnyToolDefinition, createMcpEndpoint, type Principal } from '@mrtr/server';
 * import { type Context, Hono } from 'hono';
 *
 * declare const tools: AnyToolDefinition[]; // yours
 * declare function authenticate(c: Context): Promise<Principal | undefined>; // yours
 * type AppEnv = { Variables: { principal: Principal | undefined } };
 * const app = new Hono<AppEnv>();
 * app.use('/mcp', async (c, next) => { c.set('principal', await authenticate(c)); await next(); });
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools });
 * app.all('/mcp', mcpHandler<AppEnv>(endpoint, { principal: (c) => c.get('principal') }));
 * export default app; // or serve(app) with @hono/node-server
 * ```
 * @module @mrtr/hono
 * @packageDocumentation
 */
import { absoluteTargetProblem, type McpEndpoint, type Principal, targetPath } from '@mrtr/server';
import type { Context, Env, Handler } from 'hono';

/** Options of {@link mcpHandler}. */
export interface HonoHandlerOptions<E extends Env> {
  /**
   * The principal your middleware resolved (e.g. `c.get('principal')`). When
   * it returns `undefined`, the endpoint's own `authenticate` decides, and
   * without one the answer is 401.
   */
  principal?: (c: Context<E>) => Principal | undefined | Promise<Principal | undefined>;
  /** Called with errors of `principal` (default `console.error`); the client gets `-32603`. */
  onError?: (error: unknown) => void;
}

/**
 * A Hono handler serving `endpoint` on the route you mount it at. A
 * throwing `principal` is answered with 500 and JSON-RPC `-32603`. On
 * `@hono/node-server`, a request without `Host` (HTTP/1.0 may omit it), or
 * whose absolute-form target names another host than `Host`, gets 400 and
 * `-32600` (`absoluteTargetProblem` of `@mrtr/server`). If an
 * earlier middleware already read the body, Hono's cached copy is passed on
 * instead of the consumed stream (its bytes after `c.req.arrayBuffer()`; its
 * text after `c.req.text()` or `c.req.json()`, refused with 400 `-32700` when
 * it holds U+FFFD or a second BOM, which decoding may have made of bytes that
 * were not UTF-8), with the original request's `signal`, so a client that goes
 * away still aborts the handler.
 * @returns a Hono `Handler` returning the endpoint's `Response`.
 */
export function mcpHandler<E extends Env = Env>(
  endpoint: McpEndpoint,
  options: HonoHandlerOptions<E> = {},
): Handler<E> {
  const onError = options.onError ?? ((e: unknown) => console.error('[mrtr] adapter error', e));
  return async (c) => {
    // On @hono/node-server the raw request-target is at hand: an absolute-form one must name the Host checked.
    const incoming = (c.env as { incoming?: { url?: unknown; headers?: { host?: string } } })
      ?.incoming;
    if (typeof incoming?.url === 'string') {
      // HTTP/1.0 may omit Host; the URL @hono/node-server then makes up names no host the client chose.
      if (typeof incoming.headers?.host !== 'string')
        return rpcError(400, -32600, 'Bad Request: Missing host header');
      const absolute = absoluteTargetProblem(incoming.url, incoming.headers.host);
      if (absolute) return rpcError(400, -32600, absolute);
    }
    let request = c.req.raw;
    if (request.bodyUsed) {
      const kept = await cachedBody(c);
      if (typeof kept === 'object' && 'refused' in kept) return rpcError(400, -32700, kept.refused);
      request = new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: kept,
        signal: request.signal,
      });
    }
    let principal: Principal | undefined;
    try {
      principal = options.principal ? await options.principal(c) : undefined;
    } catch (error) {
      onError(error);
      return rpcError(500, -32603, 'Internal error');
    }
    return endpoint(request, principal ? { principal } : {});
  };
}

/**
 * The `errorHandler` for `@hono/node-server`'s `getRequestListener` (its
 * `serve` takes none): what would otherwise be answered without a body.
 * A request it cannot make a web `Request` of (a `Host` its URL parser
 * writes otherwise, such as `[0:0:0:0:0:0:0:1]` for `[::1]`; a backslash in
 * the path; an absolute URL it cannot parse), which it passes as a
 * `RequestError`, gets 400 with JSON-RPC `-32600` naming the problem, as
 * `@mrtr/node` answers; any other error (the app threw past its own
 * handlers) gets 500 with `-32603` "Internal error" and goes to `onError`
 * (default `console.error`).
 * @example
 * ```ts
 * import { getRequestListener } from '@hono/node-server';
 * import { requestErrorHandler } from '@mrtr/hono';
 * import { createHttpServer } from '@mrtr/node';
 * import { Hono } from 'hono';
 *
 * const app = new Hono();
 * const listener = getRequestListener(app.fetch, { errorHandler: requestErrorHandler() });
 * createHttpServer(listener).listen(3000, '127.0.0.1');
 * ```
 */
export function requestErrorHandler(
  onError: (error: unknown) => void = (e) => console.error('[mrtr] server error', e),
): (error: unknown) => Response {
  return (error) => {
    // Named, not imported: @hono/node-server is the app's choice, not a dependency of this package.
    if (error instanceof Error && error.name === 'RequestError')
      return rpcError(400, -32600, `Bad Request: ${error.message}`);
    onError(error);
    return rpcError(500, -32603, 'Internal error');
  };
}

/**
 * A Hono `getPath` (`new Hono({ getPath: pathAsSent })`) that routes on the
 * path of the request-target exactly as the client sent it, so that
 * `app.all('/mcp', …)` serves `/mcp` (query aside) and nothing else, as
 * `@mrtr/node` does: by default Hono decodes percent-escapes before it
 * matches (`/%6dcp` is `/mcp`), and the URL `@hono/node-server` builds has
 * dot segments resolved (`/a/../mcp`, `/a/%2e%2e/mcp` are `/mcp`). A reverse
 * proxy in front that allows `/mcp` by its exact path then lets through the
 * same requests the app serves.
 *
 * On Node (`@hono/node-server`, whose bindings carry the `IncomingMessage`
 * as `env.incoming`) the path is read from `incoming.url`
 * ({@link targetPath} of `@mrtr/server`); elsewhere (Bun, Deno, Workers) the
 * runtime gives only the parsed `Request.url`, whose path keeps its escapes
 * but has dot segments resolved already. Every route of the app is matched
 * against this path; route parameters (`c.req.param()`) are still decoded.
 * @param request the request Hono routes.
 * @param options Hono's routing options; `env` the app's bindings.
 * @returns the path to route on, without the query.
 */
export function pathAsSent(request: Request, options?: { env?: unknown }): string {
  const incoming = (options?.env as { incoming?: { url?: unknown } } | undefined)?.incoming;
  const target = incoming?.url;
  if (typeof target === 'string' && target !== '') return targetPath(target);
  return new URL(request.url).pathname;
}

/** A JSON-RPC error without an id (`basic/index`: the id could not be read). */
/**
 * The body an earlier middleware read, from Hono's cache: its bytes when the
 * cache holds them (`c.req.arrayBuffer()`, `c.req.blob()`), else its text
 * (`c.req.text()`, `c.req.json()`), which `Request.text()` decoded: every
 * byte that was not UTF-8 written as U+FFFD and one BOM dropped. Such text
 * cannot be passed on as the body, since two bodies would read as one (the
 * endpoint refuses bytes that are not UTF-8 everywhere else, and drops one
 * BOM itself): a U+FFFD or a BOM left in it is refused, as `@mrtr/express`
 * refuses them. A body read past the cache (`c.req.raw.text()`) is gone: the
 * empty body the endpoint then gets is answered `-32700`.
 */
async function cachedBody(c: Context): Promise<ArrayBuffer | string | { refused: string }> {
  const cache = c.req.bodyCache;
  if (cache.arrayBuffer || cache.blob) return c.req.arrayBuffer().catch(() => '');
  const text = await c.req.text().catch(() => '');
  if (text.includes('\uFFFD'))
    return {
      refused:
        'Parse error: a middleware read this body before the handler, and the U+FFFD in its text may stand for bytes that were not UTF-8 (which are refused); read it with c.req.arrayBuffer(), or after the handler',
    };
  if (text.startsWith('\uFEFF'))
    return { refused: 'Parse error: body is not valid JSON (it starts with two byte order marks)' };
  return text;
}

function rpcError(status: number, code: number, message: string): Response {
  const body = { jsonrpc: '2.0', error: { code, message } };
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
