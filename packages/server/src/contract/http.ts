/**
 * Real-HTTP clients of the adapter contract suite: a conforming POST
 * (`fetch`), a streamed read of the first SSE event, and a raw TCP request
 * for what `fetch` refuses to send (control bytes in headers, broken framing).
 */
import { connect } from 'node:net';
import { CONTRACT_TOKEN } from './fixture.js';

/** Request `_meta` with the two required keys. */
export const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

let nextId = 1;

/** A JSON-RPC request body. */
export function rpc(method: string, params: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id: nextId++, method, params: { _meta: META, ...params } };
}

/** The headers a conforming client sends for `body`; `extra` overrides (`undefined` removes). */
export function headersFor(
  body: { method?: string; params?: Record<string, unknown> },
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  const name = body.params?.name ?? body.params?.uri;
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${CONTRACT_TOKEN}`,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': body.method,
    'mcp-name':
      typeof name !== 'string'
        ? undefined
        : /^[\x21-\x7e]*$/.test(name)
          ? name
          : `=?base64?${Buffer.from(name).toString('base64')}?=`,
    ...extra,
  };
  return Object.fromEntries(
    Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined),
  );
}

/** What a test reads of a response. */
export interface Answer {
  status: number;
  contentType: string;
  text: string;
  /** The body as JSON, or `undefined` when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON-RPC members from it.
  json: any;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** POST `body` (an object, serialized; or raw text or bytes) and read the whole answer. */
export async function post(
  url: string,
  body: unknown,
  options: {
    headers?: Record<string, string | undefined>;
    signal?: AbortSignal;
    /** For a raw body: the request whose MCP headers to send. */
    like?: object;
  } = {},
): Promise<Answer> {
  const raw =
    typeof body === 'string' || body instanceof Uint8Array || body instanceof ReadableStream;
  const headers = headersFor(
    (raw ? (options.like ?? {}) : body) as { method?: string },
    options.headers,
  );
  const init: RequestInit & { duplex?: 'half' } = {
    method: 'POST',
    headers,
    body: raw ? (body as BodyInit) : JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  if (body instanceof ReadableStream) init.duplex = 'half';
  const res = await fetch(url, init);
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  const lastEvent = contentType.startsWith('text/event-stream')
    ? text
        .trim()
        .split('\n\n')
        .at(-1)
        ?.replace(/^event: message\ndata: /, '')
    : text;
  return { status: res.status, contentType, text, json: parse(lastEvent ?? '') };
}

/** POST `body` and return the response with its body unread, for streaming tests. */
export function open(url: string, body: object, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: headersFor(body),
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** The first chunk of a streamed body, decoded. */
export async function firstChunk(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const { value } = await reader.read();
  reader.releaseLock();
  return new TextDecoder().decode(value);
}

/**
 * Send `request` (the raw bytes of an HTTP/1.1 request) over TCP to the host
 * and port of `url`, and read until the server closes or 5 s pass.
 * @returns the status, lower-cased headers and body (de-chunked) of the answer.
 */
export function rawRequest(
  url: string,
  request: string | Buffer,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = (split === -1 ? all : all.subarray(0, split)).toString('latin1');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body: Buffer = split === -1 ? Buffer.alloc(0) : all.subarray(split + 4);
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') });
    });
    socket.end(request);
  });
}

/** The payload of a chunked body (RFC 9112 §7.1), extensions and trailers ignored. */
function dechunk(body: Buffer): Buffer {
  const out: Buffer[] = [];
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = eol === -1 ? 0 : Number.parseInt(rest.subarray(0, eol).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(out);
    out.push(rest.subarray(eol + 2, eol + 2 + size));
    rest = rest.subarray(eol + 2 + size + 2);
  }
}
