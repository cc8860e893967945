/**
 * The client side of the `Mcp-Param-{Name}` headers of Streamable HTTP (MCP
 * 2026-07-28, `basic/transports/streamable-http`, "Custom Headers from Tool
 * Parameters"): the headers of one `tools/call`. The encoding and the
 * annotations themselves are `@mrtr/wire`'s, shared with the server.
 */
import { encodeHeaderValue, type HeaderAnnotation } from '@mrtr/wire';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `Mcp-Param-{name}` headers for one `tools/call`
 * (`basic/transports/streamable-http`, "Client Behavior"): the value at each
 * annotated path of `args`, converted (`true`/`false`, decimal integers)
 * and encoded with `encodeHeaderValue` of `@mrtr/wire`. Absent and `null` values get no
 * header. An integer outside ±(2^53−1) or a value of another type gets no
 * header either; the server then rejects the call with `-32020`, which is
 * the right outcome for an argument the schema forbids.
 *
 * @returns header name → value, e.g. `{"Mcp-Param-Region": "us-west1"}`
 */
export function paramHeaders(
  annotations: readonly Pick<HeaderAnnotation, 'name' | 'path'>[],
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
