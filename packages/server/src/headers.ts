/**
 * The server side of the `Mcp-Param-{Name}` headers of Streamable HTTP (MCP
 * 2026-07-28, `basic/transports/streamable-http`, "Custom Headers from Tool
 * Parameters", "Server Validation"): the headers a tool declares, and the
 * check of a request's headers against its arguments. The encoding and the
 * annotations themselves are `@mrtr/wire`'s, shared with the client.
 */
import { decodeHeaderValue, readHeaderAnnotations } from '@mrtr/wire';

/** A tool parameter mirrored into an `Mcp-Param-{name}` header. */
export interface HeaderParam {
  /** The header name, lower case (`mcp-param-region`). */
  header: string;
  /** The chain of `properties` keys from the `inputSchema` root to the parameter. */
  path: string[];
  type: 'string' | 'integer' | 'boolean';
}

/**
 * The `Mcp-Param-{name}` headers a tool declares: the `x-mcp-header`
 * annotations of its `inputSchema` (`readHeaderAnnotations` of `@mrtr/wire`).
 * @throws TypeError naming the tool when an annotation breaks a rule of
 *   "Schema Extension": empty or not a token, used twice (case-insensitively),
 *   on a parameter that is not `string`, `integer` or `boolean`, or not
 *   reachable through `properties` alone.
 */
export function collectHeaderParams(toolName: string, inputSchema: unknown): HeaderParam[] {
  const read = readHeaderAnnotations(inputSchema);
  if (!read.ok) throw new TypeError(`tool ${toolName}: ${read.reason}`);
  return read.annotations.map(({ name, path, type }) => ({
    header: `mcp-param-${name.toLowerCase()}`,
    path,
    type,
  }));
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
