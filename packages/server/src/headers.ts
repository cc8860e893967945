/**
 * Request metadata headers of Streamable HTTP (MCP 2026-07-28,
 * `basic/transports/streamable-http`, "Request Metadata" and "Value Encoding").
 */

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
// RFC 9110 field-value characters: visible ASCII, space and tab.
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;

/**
 * Decode a header value that may use the `=?base64?…?=` sentinel.
 * @returns the decoded string, or `undefined` when the value is not a valid
 *   header value or its Base64 is not valid UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!FIELD_VALUE.test(value)) return undefined;
  const m = SENTINEL.exec(value);
  if (!m) return value;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(m[1] as string, 'base64'));
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
