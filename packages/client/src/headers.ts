/**
 * The Streamable HTTP request metadata headers of MCP 2026-07-28
 * (`basic/transports/streamable-http`, "Request Metadata"): the Base64
 * sentinel encoding and the `x-mcp-header` parameter mirroring.
 */

const SENTINEL = /^=\?base64\?.*\?=$/s;
/** Visible ASCII, space and tab (RFC 9110 §5.5 field values, as MCP restricts them). */
const SAFE = /^[\x20-\x7E\t]*$/;
/** RFC 9110 §5.6.2 `token`: what an `x-mcp-header` name must be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Encode a value for `Mcp-Name` or `Mcp-Param-{Name}`: as-is when it is plain
 * ASCII without leading or trailing whitespace, otherwise
 * `=?base64?{Base64 of its UTF-8}?=`. A plain value that looks like the
 * sentinel is encoded too, so the server never decodes what it should not.
 *
 * @param value the header value before encoding (any string, including `""`)
 * @returns the header value to send
 */
export function encodeHeaderValue(value: string): string {
  if (SAFE.test(value) && value.trim() === value && !SENTINEL.test(value)) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `=?base64?${btoa(binary)}?=`;
}

/** One valid `x-mcp-header` annotation of a tool's `inputSchema`. */
export interface HeaderAnnotation {
  /** The name part of `Mcp-Param-{name}`. */
  name: string;
  /** The chain of `properties` keys from the schema root to the annotated property. */
  path: string[];
}

/** The outcome of {@link readHeaderAnnotations}. */
export type HeaderAnnotations =
  | { ok: true; annotations: HeaderAnnotation[] }
  | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Read and check every `x-mcp-header` annotation of a tool's `inputSchema`
 * (`basic/transports/streamable-http`, "Schema Extension"): a non-empty
 * RFC 9110 token, unique case-insensitively, on a property of type
 * `string`, `integer` or `boolean` reached from the root through
 * `properties` keys only. A tool that breaks any rule must be left out of
 * `tools/list` by the client.
 *
 * @param inputSchema the tool's `inputSchema` (any value)
 * @returns the annotations, or `{ok: false, reason}` naming the first broken rule. Never throws.
 */
export function readHeaderAnnotations(inputSchema: unknown): HeaderAnnotations {
  const found: HeaderAnnotation[] = [];
  const problems: string[] = [];
  // Walk every object in the schema; `path` stays defined only while every step was `properties.<key>`.
  const walk = (node: unknown, path: string[] | undefined, trail: string) => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, undefined, `${trail}/${i}`);
      return;
    }
    if (!isObject(node)) return;
    if (Object.hasOwn(node, 'x-mcp-header')) {
      const name = node['x-mcp-header'];
      if (path === undefined || path.length === 0) {
        problems.push(
          `x-mcp-header at ${trail || '/'} is not on a property reached through properties`,
        );
      } else if (typeof name !== 'string' || !TOKEN.test(name)) {
        problems.push(`x-mcp-header at ${trail} is not an HTTP token`);
      } else if (!['string', 'integer', 'boolean'].includes(node.type as string)) {
        problems.push(
          `x-mcp-header "${name}" is on a property that is not string, integer or boolean`,
        );
      } else {
        found.push({ name, path });
      }
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === 'properties' && isObject(child) && path !== undefined) {
        for (const [prop, schema] of Object.entries(child)) {
          walk(schema, [...path, prop], `${trail}/properties/${prop}`);
        }
      } else if (key !== 'x-mcp-header') {
        walk(child, undefined, `${trail}/${key}`);
      }
    }
  };
  walk(inputSchema, [], '');
  const seen = new Set<string>();
  for (const { name } of found) {
    const lower = name.toLowerCase();
    if (seen.has(lower)) problems.push(`x-mcp-header "${name}" is used twice`);
    seen.add(lower);
  }
  return problems.length > 0
    ? { ok: false, reason: problems[0] as string }
    : { ok: true, annotations: found };
}

/**
 * The `Mcp-Param-{name}` headers for one `tools/call`
 * (`basic/transports/streamable-http`, "Client Behavior"): the value at each
 * annotated path of `args`, converted (`true`/`false`, decimal integers)
 * and encoded with {@link encodeHeaderValue}. Absent and `null` values get no
 * header. An integer outside ±(2^53−1) or a value of another type gets no
 * header either; the server then rejects the call with `-32020`, which is
 * the right outcome for an argument the schema forbids.
 *
 * @returns header name → value, e.g. `{"Mcp-Param-Region": "us-west1"}`
 */
export function paramHeaders(
  annotations: HeaderAnnotation[],
  args: Record<string, unknown> | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { name, path } of annotations) {
    let value: unknown = args;
    for (const key of path)
      value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    let text: string | undefined;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'boolean') text = String(value);
    else if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value);
    if (text !== undefined) headers[`Mcp-Param-${name}`] = encodeHeaderValue(text);
  }
  return headers;
}
