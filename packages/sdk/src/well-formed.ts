/**
 * Requests whose text is not well-formed Unicode, refused before the SDK
 * reads them, as `@mrtr/server` refuses them. A lone surrogate is no Unicode
 * scalar value (RFC 8259 §8.2): the SDK would serve it, pass it to a tool in
 * `arguments` or `_meta`, and echo it back as the id of its answer, where a
 * strict client cannot read it as its own.
 */
import { clip, shownText } from '@mrtr/wire';
import { isRequestId } from './http.js';

/** What {@link illFormedPlace} found: the `id`, or a member under `params` (its keys from `params` down). */
export type IllFormedPlace = { id: true } | { path: (string | number)[] };

const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * Where the JSON-RPC request `body` holds a string (a value or a member
 * name) that is not well-formed Unicode: its `id`, else the first such
 * string under `params` other than `params.inputResponses` (what an answer
 * carries is for its reader to judge, as `@mrtr/server` leaves it), else
 * `undefined`, also for a body that is no request (a response, a
 * notification, text that is not an object). In a batch, the first request
 * that holds one. The walk is iterative and visits each value once; the
 * body's depth is bounded before this runs (`maxBodyDepth`).
 */
export function illFormedPlace(body: unknown): IllFormedPlace | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  // A batch (a 2025-era session may send one): refused whole for its first such request.
  if (Array.isArray(body)) {
    for (const message of body) {
      const place = illFormedPlace(message);
      if (place) return place;
    }
    return undefined;
  }
  const { id, method, params } = body as Record<string, unknown>;
  // A notification is answered 202 unread, as `@mrtr/server` answers it: nothing to refuse.
  if (typeof method !== 'string' || !('id' in body)) return undefined;
  if (typeof id === 'string' && !wellFormed(id)) return { id: true };
  if (params === null || typeof params !== 'object') return undefined;
  const stack: [unknown, (string | number)[]][] = [[params, []]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [value, path] = next;
    if (typeof value === 'string') {
      if (!wellFormed(value)) return { path };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], [...path, i]]);
    } else if (value !== null && typeof value === 'object') {
      const names = Object.keys(value);
      for (let i = names.length - 1; i >= 0; i--) {
        const name = names[i] as string;
        if (path.length === 0 && name === 'inputResponses') continue;
        if (!wellFormed(name)) return { path: [...path, name] };
        stack.push([(value as Record<string, unknown>)[name], [...path, name]]);
      }
    }
  }
  return undefined;
}

/**
 * The answer to a request {@link illFormedPlace} found text in, `@mrtr/server`'s:
 * HTTP 400 with `-32600` and no `id` for an id ("Invalid JSON-RPC request:
 * id is not well-formed Unicode …"), else `-32602` with the request's id,
 * "Invalid params: params.<path> is not well-formed Unicode (a lone
 * surrogate)" and `data` `{ path, problem: 'ill-formed-unicode' }`, each key
 * shown through `shownText` (a lone surrogate as U+FFFD, at most 64 code
 * units) and the path at most 256. A batch is refused whole, without `id`.
 */
export function illFormedRefusal(body: unknown, place: IllFormedPlace): Response {
  // A batch is refused whole, as one request the server could not read: no id.
  if (Array.isArray(body)) return illFormedRefusal(undefined, place);
  if ('id' in place) {
    const message =
      'Invalid JSON-RPC request: id is not well-formed Unicode (a lone surrogate), which a client cannot read back as its own: use another string';
    return Response.json({ jsonrpc: '2.0', error: { code: -32600, message } }, { status: 400 });
  }
  const where = clip(
    ['params', ...place.path].map((key) => shownText(String(key), 64)).join('.'),
    256,
  );
  const error = {
    code: -32602,
    message: `Invalid params: ${where} is not well-formed Unicode (a lone surrogate)`,
    data: { path: where, problem: 'ill-formed-unicode' },
  };
  const { id } = (body ?? {}) as { id?: unknown };
  return Response.json(
    isRequestId(id) ? { jsonrpc: '2.0', id, error } : { jsonrpc: '2.0', error },
    {
      status: 400,
    },
  );
}
