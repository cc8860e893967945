/**
 * Request metadata headers of Streamable HTTP (MCP 2026-07-28,
 * `basic/transports/streamable-http`, "Request Metadata", "Value Encoding",
 * "Custom Headers from Tool Parameters").
 */

// RFC 9110 §5.5 field-value characters: visible ASCII, space and tab.
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
// RFC 9110 §5.6.2 token: what an `x-mcp-header` name must be.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Canonical Base64 (RFC 4648 §4): whole quanta, padding only at the end.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const PREFIX = '=?base64?';
const SUFFIX = '?=';

/**
 * Decode a header value that may use the `=?base64?{value}?=` sentinel.
 * A value without both markers is literal.
 * @returns the decoded string, or `undefined` when the value has characters a
 *   header may not carry, or its Base64 is not canonical or not valid UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!FIELD_VALUE.test(value)) return undefined;
  if (!(value.startsWith(PREFIX) && value.endsWith(SUFFIX) && value.length >= 11)) return value;
  const encoded = value.slice(PREFIX.length, -SUFFIX.length);
  if (!BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}

/** Methods whose `Mcp-Name` header mirrors `params.name` or `params.uri`. */
export const NAMED_METHODS: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/** A tool parameter mirrored into an `Mcp-Param-{name}` header. */
export interface HeaderParam {
  /** The header name, lower case (`mcp-param-region`). */
  header: string;
  /** The chain of `properties` keys from the `inputSchema` root to the parameter. */
  path: string[];
  type: 'string' | 'integer' | 'boolean';
}

/**
 * Find the `x-mcp-header` annotations of a tool's `inputSchema`, following
 * only `properties` chains (annotations elsewhere are not statically reachable).
 * @throws TypeError when an annotation breaks a rule of "Schema Extension":
 *   empty or not a token, used twice (case-insensitively), on a parameter that
 *   is not `string`, `integer` or `boolean`, or not reachable through `properties` alone.
 */
export function collectHeaderParams(toolName: string, inputSchema: unknown): HeaderParam[] {
  const found: HeaderParam[] = [];
  const seen = new Set<string>();
  const visit = (schema: unknown, path: string[], reachable: boolean): void => {
    if (schema === null || typeof schema !== 'object') return;
    const node = schema as Record<string, unknown>;
    if (node['x-mcp-header'] !== undefined && path.length > 0) {
      const name = node['x-mcp-header'];
      const fail = (why: string) =>
        new TypeError(`tool ${toolName}: x-mcp-header on ${path.join('.')} ${why}`);
      if (!reachable) throw fail('is not reachable through properties alone');
      if (typeof name !== 'string' || !TOKEN.test(name)) throw fail('is not an HTTP token');
      if (seen.has(name.toLowerCase())) throw fail(`repeats "${name}"`);
      const type = node.type;
      if (type !== 'string' && type !== 'integer' && type !== 'boolean')
        throw fail('must annotate a string, integer or boolean parameter');
      seen.add(name.toLowerCase());
      found.push({ header: `mcp-param-${name.toLowerCase()}`, path, type });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && value && typeof value === 'object') {
        for (const [prop, sub] of Object.entries(value)) visit(sub, [...path, prop], reachable);
      } else if (value && typeof value === 'object') {
        // Any other keyword (items, oneOf, $defs, …) breaks static reachability.
        const children = Array.isArray(value) ? value : [value];
        for (const child of children) visit(child, [...path, key], false);
      }
    }
  };
  visit(inputSchema, [], true);
  return found;
}

function valueAt(args: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = args;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key))
      return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function matches(param: HeaderParam, decoded: string, value: unknown): boolean {
  if (param.type === 'integer' && typeof value === 'number')
    // Compared as numbers: `42.0` and `42` are equal ("Server Validation").
    return /^-?\d+(\.0*)?$/.test(decoded) && Number(decoded) === value;
  if (param.type === 'boolean' && typeof value === 'boolean') return decoded === String(value);
  return decoded === String(value);
}

/**
 * Check every annotated parameter present in `args` against its header: a
 * value present (not `null`) needs the header, decoded equal to it; an absent
 * value needs nothing.
 * @returns why the request must be refused (for a `-32020` message), or `undefined`.
 */
export function checkHeaderParams(
  params: readonly HeaderParam[],
  args: Record<string, unknown>,
  headers: Headers,
): string | undefined {
  for (const param of params) {
    const raw = headers.get(param.header);
    const decoded = raw === null ? undefined : decodeHeaderValue(raw);
    // A recognized header with invalid characters is refused even when the argument is absent.
    if (raw !== null && decoded === undefined)
      return `${param.header} header value is not a valid header value`;
    const value = valueAt(args, param.path);
    if (value === undefined || value === null) continue;
    if (decoded === undefined)
      return `${param.header} header is required when the argument is present`;
    if (!matches(param, decoded, value))
      return `${param.header} header does not match arguments.${param.path.join('.')}`;
  }
  return undefined;
}
