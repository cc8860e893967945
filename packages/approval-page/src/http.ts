/**
 * The HTTP rules of the page: the headers every response carries, form
 * bodies read within a size limit, and the same-origin check of every POST.
 */
import { MIMEType } from 'node:util';

/**
 * The Content-Security-Policy of every response: nothing may load but the
 * page's own stylesheet and scripts (the passkey script and the WebAuthn
 * library, files of this origin; no inline script, no `eval`), scripts may
 * fetch only from this origin (the passkey options), forms post only to
 * this origin, no framing (clickjacking), no `<base>` rewriting.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers on every response of the page (HTML, CSS, redirects, errors). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** A response with {@link SECURITY_HEADERS} and `headers`. */
export function respond(
  status: number,
  body: string | null,
  headers: Record<string, string> = {},
  cookies: string[] = [],
): Response {
  const h = new Headers({ ...SECURITY_HEADERS, ...headers });
  for (const cookie of cookies) h.append('set-cookie', cookie);
  return new Response(body, { status, headers: h });
}

/** An HTML page; `headers` adds to its own (e.g. `retry-after`). */
export function html(
  status: number,
  body: string,
  cookies: string[] = [],
  headers: Record<string, string> = {},
): Response {
  return respond(status, body, { 'content-type': 'text/html; charset=utf-8', ...headers }, cookies);
}

/** A JSON body (the passkey options and their refusals, read by the page's script). */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return respond(status, JSON.stringify(body), {
    'content-type': 'application/json; charset=utf-8',
    ...headers,
  });
}

/** `303 See Other` to a path on this origin (after a POST, the browser GETs it). */
export function seeOther(location: string, cookies: string[] = []): Response {
  return respond(303, null, { location }, cookies);
}

/** Largest form body the page reads, bytes: a decision or a sign-in is a few hundred. */
export const MAX_FORM_BYTES = 8192;
/**
 * Largest form body of a passkey POST, bytes: a WebAuthn response as JSON,
 * form-encoded, is 1 to 4 KiB (a 1023-byte credential id and a post-quantum
 * public key fit too).
 */
export const MAX_PASSKEY_FORM_BYTES = 32_768;

/** A `Content-Type` parsed as the WHATWG MIME Sniffing standard parses it (Node's `MIMEType`), or `undefined`. */
function mimeTypeOf(value: string | null): MIMEType | undefined {
  if (value === null) return undefined;
  try {
    return new MIMEType(value);
  } catch {
    return undefined;
  }
}

/**
 * The fields of an `application/x-www-form-urlencoded` body, or `undefined`
 * for another content type, a `charset` other than UTF-8, a
 * `Content-Encoding` other than `identity` (a body coded or in another
 * charset would be read as UTF-8 as it stands: RFC 9110 §8.4, a coding not
 * applied is never ignored), a body over `max` bytes (default
 * {@link MAX_FORM_BYTES}; refused without reading the rest), or one that
 * cannot be read. Parsed by the WHATWG URL standard's `URLSearchParams`
 * (invalid percent-escapes and bytes become U+FFFD; nothing throws).
 */
export async function readForm(
  request: Request,
  max: number = MAX_FORM_BYTES,
): Promise<URLSearchParams | undefined> {
  const type = mimeTypeOf(request.headers.get('content-type'));
  if (type?.essence !== 'application/x-www-form-urlencoded') return undefined;
  // Percent-encoded ASCII reads the same in UTF-8; any other charset would not.
  const charset = type.params.get('charset');
  if (charset !== null && !/^(utf-?8|us-ascii)$/i.test(charset)) return undefined;
  const coding = request.headers.get('content-encoding');
  if (coding !== null && !/^\s*(identity\s*)?$/i.test(coding)) return undefined;
  const declared = request.headers.get('content-length');
  if (declared !== null && !(Number(declared) <= max)) return undefined;
  if (request.body === null) return new URLSearchParams();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        return undefined;
      }
      chunks.push(value);
    }
  } catch {
    return undefined;
  }
  return new URLSearchParams(new TextDecoder().decode(Buffer.concat(chunks)));
}

/**
 * Whether a state-changing request comes from the page's own origin
 * (Fetch Metadata and Origin checks, OWASP CSRF cheat sheet):
 * - `Sec-Fetch-Site`, when sent, must be `same-origin`;
 * - `Origin` must equal `origin`, or be `null` with `Sec-Fetch-Site: same-origin`.
 *
 * The exception exists because the page's own `Referrer-Policy: no-referrer`
 * makes browsers send `Origin: null` on its form POSTs (Fetch standard,
 * "serializing a request origin"); `Sec-Fetch-Site` is set by the browser
 * from the real initiator, cannot be set by a page, and says `cross-site`
 * for the other senders of `null` (sandboxed frames, `data:` documents).
 * A POST with neither header is refused: a browser sends at least one.
 */
export function fromOrigin(request: Request, origin: string): boolean {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin') return false;
  const sent = request.headers.get('origin');
  return sent === origin || (sent === 'null' && site === 'same-origin');
}

/**
 * Why {@link fromOrigin} refused `request`, in a sentence for whoever scripts
 * the page: a browser on the page sends its origin itself, a script must send
 * `Origin: <origin>`. Says only which header was missing or did not match,
 * never echoes a header's value.
 */
export function originHint(request: Request, origin: string): string {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin')
    return 'The browser said it was sent from another site (Sec-Fetch-Site).';
  if (request.headers.get('origin') === null)
    return `It carried no Origin header; a form posted from this page carries Origin: ${origin}.`;
  return `Its Origin header names another origin; this page is ${origin}.`;
}

/** Loopback names: no DNS-rebinding page can send them as its `Host`. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A predicate over a request's `Host` (its header, else the host of its URL)
 * from the page's `allowedHosts`: each entry, and the host the request names,
 * read as the authority of a URL of the page's scheme (WHATWG URL: lower
 * case, the scheme's default port dropped), then compared exactly. Default:
 * the host of `origin`, and a loopback name on any port (as the MCP
 * endpoint's default, so a proxy that rewrites `Host` to its upstream, as
 * nginx does by default, reaches both). A page answered under any other name
 * is what a DNS-rebinding page needs (RFC 9110 §7.2: the server decides
 * which hosts it is authoritative for).
 * @throws {TypeError} at creation for an entry that is not a host (`name[:port]`).
 */
export function pageHostPolicy(
  origin: string,
  allowed: readonly string[] | ((host: string) => boolean) | undefined,
): (request: Request) => boolean {
  const scheme = new URL(origin).protocol;
  const parse = (host: string): URL | undefined => {
    if (host === '' || /[/?#@\\\s]/.test(host)) return undefined;
    try {
      const url = new URL(`${scheme}//${host}`);
      return url.pathname === '/' && url.search === '' && url.hash === '' ? url : undefined;
    } catch {
      return undefined;
    }
  };
  const hostOf = (request: Request) => request.headers.get('host') ?? new URL(request.url).host;
  if (typeof allowed === 'function') return (request) => allowed(hostOf(request));
  const entries = new Set<string>();
  for (const entry of allowed ?? [new URL(origin).host]) {
    const url = parse(entry);
    if (url === undefined)
      throw new TypeError(`allowedHosts entries must be host[:port], got ${JSON.stringify(entry)}`);
    entries.add(url.host);
  }
  const loopback = allowed === undefined;
  return (request) => {
    const url = parse(hostOf(request));
    return url !== undefined && (entries.has(url.host) || (loopback && LOOPBACK.has(url.hostname)));
  };
}

/** One form field as a string, or `undefined` when absent or given more than once. */
export function field(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name);
  return values.length === 1 ? values[0] : undefined;
}
