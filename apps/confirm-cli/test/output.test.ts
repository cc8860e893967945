/**
 * What `mrtr` prints of a hostile server's answers: escaped, bounded, and
 * never a crash on values nested 20,000 deep.
 */
import { JsonRpcError, type ToolInfo, TransportError } from '@mrtr/client';
import { describe, expect, it } from 'vitest';
import {
  MAX_MESSAGE_CHARS,
  MAX_MESSAGE_LINES,
  MAX_NAME_CHARS,
  serverName,
  shownMessage,
} from '../src/display.js';
import {
  explain,
  MAX_RESULT_LINES,
  MAX_RESULT_UNITS,
  resultLines,
  toolListing,
} from '../src/output.js';

/** An array nested `n` deep, built by JSON.parse as a server's body would be. */
const deep = (n = 20_000): unknown => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`);

/** What acts on a terminal or reorders text: controls (C0, C1), format characters (bidi), separators. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

const server = {
  url: 'http://127.0.0.1:3960/mcp',
  origin: 'http://127.0.0.1:3960',
  host: '127.0.0.1:3960',
};

describe('mrtr tools', () => {
  it('escapes every server-chosen string: argument types, names, titles, descriptions, rejects', () => {
    const hostile = '\u001b]0;PWNED\u0007str\ning\u202e';
    const tools = [
      {
        name: `t${hostile}`,
        title: hostile,
        description: hostile,
        inputSchema: {
          type: 'object',
          properties: { [`a${hostile}`]: { type: hostile }, b: { type: deep() }, c: null },
          required: 5 as unknown as string[],
        },
        annotations: 'x' as unknown as Record<string, unknown>,
      },
      { name: 'u', title: deep(), description: deep(), inputSchema: { properties: 'abc' } },
    ] as ToolInfo[];
    const lines = toolListing(
      { ...server, name: `Bank${hostile}` },
      { tools, rejected: [{ name: hostile, reason: hostile }] },
    );
    for (const line of lines) expect(line).not.toMatch(UNSAFE);
    const text = lines.join('\n');
    expect(text).toContain(
      '  --arg a\\u{1b}]0;PWNED\\u{7}str\\ning\\u{202e}=…  \\u{1b}]0;PWNED\\u{7}str\\ning\\u{202e}',
    );
    expect(text).toContain('  --arg b=…  any');
    expect(text).toContain('  --arg c=…  any');
    expect(text).toContain('(left out \\u{1b}]0;PWNED');
    expect(lines[0]).toBe(
      '"Bank\\u{1b}]0;PWNED\\u{7}str\\ning\\u{202e}" at http://127.0.0.1:3960/mcp: 2 tools',
    );
  });
});

describe('what a server chose, at any length', () => {
  it('a message of millions of lines or marks: the head shown, no crash, the rest said to be left out', () => {
    // Blank lines before the question, however many, do not push it out of what is read.
    expect(shownMessage(`${'\n'.repeat(130_000)}Delete the production database?`)).toBe(
      'Delete the production database?',
    );
    const lines = shownMessage('a\n'.repeat(5_000_000));
    expect(lines.split('\n')).toHaveLength(MAX_MESSAGE_LINES + 1);
    expect(lines.endsWith('(… the rest is not shown)')).toBe(true);
    // Eight million marks then a joiner: STRAY_JOINER's scan back threw RangeError past 4.2 million.
    const marks = shownMessage(`Delete? x${'\u0301'.repeat(8_000_000)}\u200d`);
    expect(marks.startsWith(`Delete? x${'\u0301'.repeat(4)}\\u{301}`)).toBe(true);
    expect(marks.length).toBeLessThan(MAX_MESSAGE_CHARS + 100);
  });

  it('is bounded on one line: an error message, a tool, a rejected tool', () => {
    const long = `\u001b]0;x\u0007${'y'.repeat(200_000)}`;
    const said = explain(new JsonRpcError(-32000, long, undefined, 200), true);
    expect(said.length).toBeLessThan(600);
    expect(said).toMatch(/more characters not shown\)$/);
    const lines = toolListing(server, {
      tools: [{ name: long, title: long, description: long, inputSchema: {} }] as ToolInfo[],
      rejected: [{ name: long, reason: long }],
    });
    for (const line of lines) {
      expect(line).not.toMatch(UNSAFE);
      expect(line.length).toBeLessThan(1300);
    }
  });
});

describe('a tool result', () => {
  it('prints a placeholder for a block it cannot show, and every block it can', () => {
    const lines = resultLines({
      content: [
        null,
        { type: 5 },
        'text',
        { type: 'text', text: 'ok\u001b[2J' },
        { type: 'image', data: deep() },
      ],
    });
    expect(lines[0]).toBe('[?] (a block that is not an object: null)');
    expect(lines[1]).toBe('[?] {"type":5}');
    expect(lines[2]).toBe('[?] (a block that is not an object: "text")');
    expect(lines[3]).toBe('ok\\u{1b}[2J');
    expect(lines[4]).toMatch(/^\[image\] \{"type":"image","data":\[\[.*\[…\]/);
  });

  // helper-153 #6: 15 MiB of escapes were escaped (seconds) and printed whole.
  it('prints at most MAX_RESULT_UNITS of text, then says how much more there was', () => {
    const lines = resultLines({
      content: [
        { type: 'text', text: 'a'.repeat(MAX_RESULT_UNITS - 10) },
        { type: 'text', text: '\u001b'.repeat(1_000_000) },
        { type: 'text', text: 'never read' },
        { type: 'image', data: 'x' },
      ],
    });
    expect(lines).toHaveLength(3);
    // Nine units left, an escape printing six: one.
    expect(lines[1]).toBe('\\u{1b}… (999999 more characters not shown)');
    expect(lines[2]).toBe('(2 more content blocks not shown)');
    const many = resultLines({
      content: Array.from({ length: 100_000 }, () => ({ type: 'x', n: 1 })),
    });
    expect(many.at(-1)).toMatch(/^\(\d+ more content blocks not shown\)$/);
    expect(many.join('\n').length).toBeLessThan(MAX_RESULT_UNITS + 200);
    // helper-155 M2: empty blocks cost nothing, escapes printed eight times their units, lines unbounded.
    const empties = resultLines({
      content: Array.from({ length: 600_000 }, () => ({ type: 'text', text: '' })),
    });
    expect(empties.length).toBeLessThanOrEqual(MAX_RESULT_LINES + 1);
    expect(empties.at(-1)).toMatch(/^\(\d+ more content blocks not shown\)$/);
    const invisible = resultLines({
      content: [{ type: 'text', text: '\u200b'.repeat(MAX_RESULT_UNITS) }],
    });
    expect(invisible[0]?.length).toBeLessThan(MAX_RESULT_UNITS + 100);
    expect(invisible[0]).toMatch(/… \(\d+ more characters not shown\)$/);
    const breaks = resultLines({
      content: [{ type: 'text', text: '\n'.repeat(MAX_RESULT_UNITS - 10) }],
    });
    expect(breaks.join('\n').split('\n').length).toBeLessThanOrEqual(MAX_RESULT_LINES + 1);
    expect(breaks[0]).toMatch(/… \(\d+ more characters not shown\)$/);
    const structured = resultLines({ content: [], structuredContent: { t: 'b'.repeat(200_000) } });
    expect(structured[0]).toMatch(/… \(\d+ more characters not shown\)$/);
  });

  it('prints structuredContent nested 20,000 deep, cut at a depth', () => {
    const [text] = resultLines({ content: [], structuredContent: { a: deep() } });
    expect(text).toContain('[…]');
    expect(text?.length).toBeLessThan(1000);
  });
});

describe('why a call failed', () => {
  it('explains -32021 and -32022 with data nested 20,000 deep, bounded and escaped', () => {
    const needs = new JsonRpcError(-32021, 'needs\u001b[2J', { requiredCapabilities: deep() }, 200);
    const text = explain(needs, false);
    expect(text).toMatch(/^The server needs a client that can ask you questions \[\[\[/);
    expect(text).toContain('needs\\u{1b}[2J');
    expect(text).toContain('(mrtr only answers questions when run in a terminal)');
    expect(text.length).toBeLessThan(700);
    const old = new JsonRpcError(-32022, 'old', { supported: deep() }, 200);
    expect(explain(old, true)).toMatch(/it supports: \[\[.*\[…\].*\): old$/);
    expect(explain(new TransportError('a\nb'), true)).toBe('a\\nb');
  });
});

describe('who asks, and what', () => {
  it('shows a server name so it cannot pose as the rest of the header', () => {
    const spoof = `Trusted Bank" at https://bank.example/mcp  (verified)${' '.repeat(300)}x`;
    const shown = serverName(spoof);
    expect(shown.startsWith('"Trusted Bank\\u{22} at https://bank.example/mcp (verified)')).toBe(
      true,
    );
    // One quote each side, no run of spaces, and bounded.
    expect(shown.match(/"/g)).toHaveLength(2);
    expect(shown).not.toMatch(/ {2}/);
    expect(shown.length).toBeLessThanOrEqual(MAX_NAME_CHARS + 3);
    expect(serverName('Notes\tserver\n')).toBe('"Notes server\\n"');
  });

  it('collapses blank lines and bounds a message in lines and characters, saying what is left out', () => {
    const spoof = `Delete?${'\n'.repeat(80)}Question from "Trusted Bank" at https://bank.example/mcp`;
    expect(shownMessage(spoof)).toBe(
      'Delete?\n\nQuestion from "Trusted Bank" at https://bank.example/mcp',
    );
    const long = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const lines = shownMessage(long).split('\n');
    expect(lines).toHaveLength(MAX_MESSAGE_LINES + 1);
    expect(lines.at(-1)).toBe(`(… ${100 - MAX_MESSAGE_LINES} more lines not shown)`);
    const wide = shownMessage('w'.repeat(10_000));
    expect(wide.length).toBeLessThan(MAX_MESSAGE_CHARS + 50);
    expect(wide.endsWith('…\n(… the rest is not shown)')).toBe(true);
    expect(shownMessage('a\n\u001b[2J')).toBe('a\n\\u{1b}[2J');
  });
});
