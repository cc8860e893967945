/**
 * `server/tools`, "Structured Content": a tool that returns
 * `structuredContent` SHOULD also return the serialized JSON in a
 * `TextContent` block, for clients that read only `content`.
 */

function serializes(block: unknown, json: string): boolean {
  if (block === null || typeof block !== 'object') return false;
  const { type, text } = block as { type?: unknown; text?: unknown };
  if (type !== 'text' || typeof text !== 'string') return false;
  if (text === json) return true;
  // The same JSON with other whitespace (pretty-printed) counts too.
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return false;
  try {
    return JSON.stringify(JSON.parse(text)) === json;
  } catch {
    return false;
  }
}

/**
 * `result` with a text block holding `JSON.stringify(structuredContent)`
 * appended, unless it has one already or carries no `structuredContent`.
 * Anything that is not a complete result is returned unchanged.
 * @throws TypeError when `structuredContent` cannot be serialized (a handler bug: `-32603`).
 */
export function withStructuredText(result: unknown): unknown {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return result;
  const r = result as { structuredContent?: unknown; content?: unknown; resultType?: unknown };
  if (r.structuredContent === undefined || r.resultType === 'input_required') return result;
  const json = JSON.stringify(r.structuredContent);
  const content: unknown[] = Array.isArray(r.content) ? r.content : [];
  if (content.some((block) => serializes(block, json))) return result;
  return { ...r, content: [...content, { type: 'text', text: json }] };
}
