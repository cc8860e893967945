/**
 * What `mrtr` prints of what a server sent: the tool listing, a tool's result
 * and why a call failed. Every server-chosen string goes through
 * {@link oneLine} or {@link visible}, and every value of any shape is shown
 * within bounds: a server's JSON nested 20,000 deep must not crash the
 * printing (`JSON.stringify` and `String` recurse until a `RangeError`).
 */
import {
  JsonRpcError,
  McpClientError,
  type ServerIdentity,
  type ToolInfo,
  type ToolList,
} from '@mrtr/client';
import { clip } from '@mrtr/wire';
import { UsageError } from './args.js';
import {
  bounded,
  headOf,
  MAX_DESCRIPTION_COLUMNS,
  oneLine,
  serverName,
  visible,
} from './display.js';

/** Deepest nesting of a server's JSON value {@link shownJson} writes out; deeper values show as `[…]` or `{…}`. */
export const MAX_SHOWN_DEPTH = 16;

/**
 * A server's JSON value as text, for display after {@link visible} or
 * {@link oneLine}: objects and arrays deeper than {@link MAX_SHOWN_DEPTH}
 * levels are written `[…]` and `{…}`. Never throws: a value JSON cannot
 * write (a `BigInt`, a cycle) shows as `(a value that cannot be shown)`.
 * @param indent spaces per level, as `JSON.stringify` takes them (default none: one line).
 */
export function shownJson(value: unknown, indent?: number): string {
  const depths = new WeakMap<object, number>();
  try {
    const text = JSON.stringify(
      value,
      function (this: object, _key, v: unknown) {
        if (typeof v !== 'object' || v === null) return v;
        const depth = (depths.get(this) ?? 0) + 1;
        if (depth > MAX_SHOWN_DEPTH) return Array.isArray(v) ? '[…]' : '{…}';
        depths.set(v, depth);
        return v;
      },
      indent,
    );
    return text ?? '(nothing)';
  } catch {
    return '(a value that cannot be shown)';
  }
}

/** A `typeof`-checked string the server sent, or `undefined` when it sent another kind of value. */
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

/**
 * The lines `mrtr tools` prints: the server (its name as {@link serverName}
 * shows it, then the URL mrtr was given), and per tool its name, title,
 * hints, description and arguments with their types, every server-chosen
 * string escaped by {@link oneLine}; a title, description or type that is not
 * a string is left out (or `any`), never converted.
 */
export function toolListing(server: ServerIdentity, list: ToolList): string[] {
  const { tools, rejected } = list;
  const name = server.name === undefined ? '' : `${serverName(server.name)} at `;
  const lines = [`${name}${server.url}: ${tools.length} ${tools.length === 1 ? 'tool' : 'tools'}`];
  for (const tool of tools) lines.push('', ...toolLines(tool));
  for (const r of rejected)
    lines.push('', `(left out ${bounded(r.name)}: ${bounded(r.reason, MAX_DESCRIPTION_COLUMNS)})`);
  return lines;
}

function toolLines(tool: ToolInfo): string[] {
  const hints: Record<string, unknown> =
    typeof tool.annotations === 'object' && tool.annotations !== null ? tool.annotations : {};
  const flags = [
    hints.destructiveHint === true ? 'destructive' : '',
    hints.readOnlyHint === true ? 'read-only' : '',
  ].filter(Boolean);
  const title = text(tool.title);
  const description = text(tool.description);
  const lines = [
    `${bounded(tool.name)}${title ? `  ${bounded(title)}` : ''}${flags.length ? `  [${flags.join(', ')}]` : ''}`,
  ];
  if (description) lines.push(`  ${bounded(description, MAX_DESCRIPTION_COLUMNS)}`);
  const schema = tool.inputSchema;
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [],
  );
  const properties =
    typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {};
  for (const [name, property] of Object.entries(properties)) {
    const type =
      typeof property === 'object' && property !== null
        ? text((property as { type?: unknown }).type)
        : undefined;
    lines.push(
      `  --arg ${bounded(name)}=…  ${type === undefined ? 'any' : bounded(type)}${required.has(name) ? ', required' : ''}`,
    );
  }
  return lines;
}

/**
 * Most UTF-16 units {@link resultLines} prints of a tool result, escapes
 * counted as printed: a result is read on a terminal, and a server's 15 MiB
 * of escapes took seconds to escape and flooded the screen.
 */
export const MAX_RESULT_UNITS = 100_000;

/** Most lines {@link resultLines} prints of a tool result (each block starts one). */
export const MAX_RESULT_LINES = 2_000;

/** The index of the `n`th line break of `text`, or -1 when it has fewer. */
function nthLineBreak(text: string, n: number): number {
  let at = -1;
  for (let i = 0; i < n; i++) {
    at = text.indexOf('\n', at + 1);
    if (at === -1) return -1;
  }
  return at;
}

/**
 * The lines a tool result prints: a text block's text as {@link visible}
 * shows it, any other block as `[type] {json}` on one line (`[?]` when its
 * type is not a string, `(a block that is not an object)` for `null` and
 * the like), and without content blocks the `structuredContent`, indented.
 * JSON deeper than {@link MAX_SHOWN_DEPTH} is cut ({@link shownJson}). At
 * most {@link MAX_RESULT_UNITS} printed and {@link MAX_RESULT_LINES} lines
 * in all, then a line saying how much more there was.
 */
export function resultLines(result: { content: unknown[]; structuredContent?: unknown }): string[] {
  const lines: string[] = [];
  let budget = MAX_RESULT_UNITS;
  let linesLeft = MAX_RESULT_LINES;
  // Text past either budget is counted, not escaped or printed; escaping can make a unit eight.
  const within = (text: string) => {
    let { head, rest } = headOf(text, budget);
    const lastBreak = nthLineBreak(head, linesLeft);
    if (lastBreak !== -1) ({ head, rest } = headOf(text, lastBreak));
    let shown = visible(head);
    for (let tries = 0; shown.length > budget && tries < 4; tries++) {
      ({ head, rest } = headOf(text, Math.floor((head.length * budget) / shown.length)));
      shown = visible(head);
    }
    // Escapes bunched at the start can keep it over after those tries: cut what is printed itself.
    if (shown.length > budget) {
      shown = headOf(shown, budget).head;
      rest = Math.max(rest, 1);
    }
    return rest > 0 ? `${shown}… (${rest} more characters not shown)` : shown;
  };
  for (const [i, block] of result.content.entries()) {
    if (budget <= 0 || linesLeft <= 0) {
      lines.push(`(${result.content.length - i} more content blocks not shown)`);
      break;
    }
    const { type, text: body } = (block ?? {}) as { type?: unknown; text?: unknown };
    if (typeof block !== 'object' || block === null || Array.isArray(block))
      lines.push(
        `[?] (a block that is not an object: ${bounded(shownJson(block), MAX_DESCRIPTION_COLUMNS)})`,
      );
    else if (type === 'text' && typeof body === 'string') lines.push(within(body));
    else
      lines.push(
        `[${typeof type === 'string' ? bounded(type) : '?'}] ${bounded(shownJson(block), MAX_DESCRIPTION_COLUMNS)}`,
      );
    // Each block costs its printed text and its line, an empty one too.
    const printed = lines.at(-1) as string;
    budget -= printed.length + 1;
    linesLeft -= 1 + (printed.match(/\n/g)?.length ?? 0);
  }
  if (result.content.length === 0 && result.structuredContent !== undefined) {
    lines.push(within(shownJson(result.structuredContent, 2)));
  }
  return lines;
}

/**
 * Why a command failed, on one line, for `mrtr: …` on stderr. Every part the
 * server chose (the message, `data.requiredCapabilities`, `data.supported`)
 * is escaped, and JSON is written within {@link MAX_SHOWN_DEPTH} levels and
 * cut to 500 characters. Never throws.
 */
export function explain(error: unknown, interactive: boolean): string {
  const status = (error as { httpStatus?: unknown } | null)?.httpStatus;
  if (error instanceof McpClientError && status === 401)
    return 'The server refused the call without a valid bearer token (HTTP 401): set MRTR_TOKEN to the token the server printed at start, or pass --token <token>.';
  if (error instanceof JsonRpcError) {
    const data = (typeof error.data === 'object' && error.data !== null ? error.data : {}) as {
      requiredCapabilities?: unknown;
      supported?: unknown;
    };
    if (error.rpcCode === -32021) {
      const needed = oneLine(clipped(shownJson(data.requiredCapabilities ?? {})));
      const why = interactive ? '' : ' (mrtr only answers questions when run in a terminal)';
      return `The server needs a client that can ask you questions ${needed}${why}: ${said(error.serverMessage)}`;
    }
    if (error.rpcCode === -32022) {
      const supported = oneLine(clipped(shownJson(data.supported ?? [])));
      return `The server does not speak protocol version 2026-07-28, the only one mrtr speaks (it supports: ${supported}): ${said(error.serverMessage)}`;
    }
    return `The server answered with JSON-RPC error ${error.rpcCode}: ${said(error.serverMessage)}`;
  }
  if (error instanceof McpClientError || error instanceof UsageError) return said(error.message);
  // Any other error's message may still quote what the server sent (a parser's excerpt, say).
  return said(error instanceof Error ? error.message : typeof error);
}

/** A message (the server's, or one quoting it) on one line, at most 500 columns. */
const said = (text: string) => bounded(text, MAX_DESCRIPTION_COLUMNS);

/** At most 500 UTF-16 code units of `json`, then `…`. */
const clipped = (json: string) => clip(json, 500);
