/**
 * @mrtr/express: mount an `@mrtr/server` MCP endpoint on Express 5.
 *
 * The endpoint stays web-standard; this adapter only translates Express's
 * request into a `Request`, hands over the principal your authentication
 * middleware already resolved, and writes the `Response` back. Errors go to
 * `next(error)`, so your Express error handlers see them.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createMcpEndpoint } from '@mrtr/server';
 * import { mcpHandler } from '@mrtr/express';
 *
 * const app = express();
 * app.use(myAuth); // sets req.user = { id: 'alice' }
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools });
 * app.all('/api/mcp', mcpHandler(endpoint, { principal: (req) => req.user }));
 * app.listen(3000, '127.0.0.1');
 * ```
 * @packageDocumentation
 */
import type { McpEndpoint, Principal } from '@mrtr/server';
import type {
  Request as ExpressRequest,
  Response as ExpressResponse,
  NextFunction,
  RequestHandler,
} from 'express';

/** Options of {@link mcpHandler}. */
export interface ExpressHandlerOptions {
  /**
   * The principal your middleware resolved for this request (e.g. `req.user`,
   * `res.locals.principal`). When it returns `undefined`, the endpoint's own
   * `authenticate` decides, and without one the answer is 401.
   */
  principal?: (
    req: ExpressRequest,
    res: ExpressResponse,
  ) => Principal | undefined | Promise<Principal | undefined>;
}

/** Read the raw body of a request whose stream no body parser consumed. */
async function readBody(req: ExpressRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/**
 * Convert an Express request to a web-standard `Request`. When a body parser
 * (`express.json()`) already consumed the stream, its parsed `req.body` is
 * re-serialized as JSON; otherwise the raw bytes are passed on unchanged.
 */
export async function toWebRequest(req: ExpressRequest): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const url = `${req.protocol}://${req.get('host') ?? 'localhost'}${req.originalUrl}`;
  let body: Uint8Array<ArrayBuffer> | string | undefined;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    if (req.readableEnded || req.body !== undefined) {
      body = req.body === undefined ? undefined : JSON.stringify(req.body);
      headers.delete('content-length');
      headers.delete('content-encoding');
      headers.delete('transfer-encoding');
    } else {
      body = new Uint8Array(await readBody(req));
    }
  }
  return new Request(url, { method: req.method, headers, ...(body !== undefined ? { body } : {}) });
}

/**
 * An Express request handler serving `endpoint`. Mount it on the route of
 * your choice (`app.all(path, …)` or `router.post(path, …)`); the endpoint
 * itself answers other methods with 405.
 * @returns `(req, res, next) => Promise<void>`; conversion and endpoint errors go to `next`.
 */
export function mcpHandler(
  endpoint: McpEndpoint,
  options: ExpressHandlerOptions = {},
): RequestHandler {
  return async (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
    try {
      const principal = options.principal ? await options.principal(req, res) : undefined;
      const response = await endpoint(await toWebRequest(req), principal ? { principal } : {});
      res.status(response.status);
      response.headers.forEach((value, name) => {
        res.setHeader(name, value);
      });
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      next(error);
    }
  };
}
