import { describe, expect, it } from 'vitest';
import { parseArgs, parseDecimal, UsageError } from '../src/args.js';
import {
  bounded,
  cut,
  oneLine,
  plain,
  shownLabel,
  showValue,
  titleOf,
  visible,
} from '../src/display.js';

const tool = {
  name: 't',
  inputSchema: {
    type: 'object',
    properties: {
      title: { type: 'string' },
      count: { type: 'integer' },
      ratio: { type: 'number' },
      force: { type: 'boolean' },
      tags: { type: 'array' },
    },
  },
};

describe('parseArgs', () => {
  it('types values by the tool schema and keeps strings as typed', () => {
    expect(
      parseArgs(
        ['title=007 = agent', 'count=3', 'ratio=0.5', 'force=false', 'tags=["a","b"]', 'extra=1'],
        tool,
      ),
    ).toEqual({
      title: '007 = agent',
      count: 3,
      ratio: 0.5,
      force: false,
      tags: ['a', 'b'],
      extra: '1',
    });
  });

  it('keeps a key such as __proto__ as an own argument', () => {
    const args = parseArgs(['__proto__=x'], tool);
    expect(Object.keys(args)).toEqual(['__proto__']);
    expect(JSON.stringify(args)).toBe('{"__proto__":"x"}');
  });

  it.each([
    ['novalue', /needs key=value/],
    ['=v', /needs key=value/],
    ['count=3.5', /must be a decimal integer/],
    ['count=', /must be a decimal integer/],
    ['count=0x10', /must be a decimal integer/],
    ['ratio=abc', /must be a decimal number/],
    ['ratio=0x10', /must be a decimal number/],
    ['force=yes', /must be true or false/],
    ['tags=[oops', /must be JSON/],
  ])('rejects %s', (pair, message) => {
    expect(() => parseArgs([pair], tool)).toThrow(UsageError);
    expect(() => parseArgs([pair], tool)).toThrow(message);
  });
});

describe('parseDecimal: numbers as a person types them, decimal only', () => {
  it('reads signed decimal integers, and numbers with a fraction or an exponent', () => {
    expect(parseDecimal('16', 'integer')).toBe(16);
    expect(parseDecimal('-7', 'integer')).toBe(-7);
    expect(parseDecimal('+7', 'integer')).toBe(7);
    expect(parseDecimal('007', 'integer')).toBe(7);
    expect(parseDecimal('0.5', 'number')).toBe(0.5);
    expect(parseDecimal('.5', 'number')).toBe(0.5);
    expect(parseDecimal('1e3', 'number')).toBe(1000);
    expect(parseDecimal('-2.5E-1', 'number')).toBe(-0.25);
  });

  it.each([
    '0x10',
    '0X10',
    '0o17',
    '0b101',
    '1e3',
    '1.0',
    ' 7',
    '7 ',
    '',
    '-',
    '1_000',
    'Infinity',
    'NaN',
    '9007199254740993',
    '١٢',
  ])('refuses %j as an integer', (raw) => {
    expect(parseDecimal(raw, 'integer')).toBeUndefined();
  });

  it.each([
    '0x10',
    '0b1',
    'Infinity',
    '-Infinity',
    '1e400',
    ' 1',
    'e3',
    '.',
    '1e',
    '--1',
  ])('refuses %j as a number', (raw) => {
    expect(parseDecimal(raw, 'number')).toBeUndefined();
  });
});

describe('showing server text', () => {
  it('keeps every character but makes terminal controls and bidi overrides visible', () => {
    const message = 'Delete?\n\u001b[2J\u001b[HFake prompt\u202Etxt.exe\u0007 é 😀';
    expect(visible(message)).toBe(
      'Delete?\n\\u{1b}[2J\\u{1b}[HFake prompt\\u{202e}txt.exe\\u{7} é 😀',
    );
  });

  it('makes line and paragraph separators, zero-width and every other format character visible', () => {
    expect(visible('a\u2028b\u2029c')).toBe('a\\u{2028}b\\u{2029}c');
    expect(visible('report\u202Etxt.exe')).toBe('report\\u{202e}txt.exe');
    expect(visible('ok\u200B')).toBe('ok\\u{200b}');
    // Zero-width (U+200B, U+200E–U+200F, U+2060–U+2064, U+FEFF), bidi embeddings, overrides and isolates,
    // the Arabic letter mark, the soft hyphen and a tag character: all format (Cf) characters.
    for (const code of [
      0x200b, 0x200e, 0x200f, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff, 0x202a, 0x202b,
      0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x061c, 0x00ad, 0xe0041,
    ]) {
      expect(visible(`x${String.fromCodePoint(code)}y`)).toBe(`x\\u{${code.toString(16)}}y`);
    }
    // C0 (but tab and newline), DEL and C1 controls, such as the 8-bit CSI U+009B.
    expect(visible('\r\u0000\u007f\u0085\u009b[2J\t\n')).toBe(
      '\\u{d}\\u{0}\\u{7f}\\u{85}\\u{9b}[2J\t\n',
    );
    // A lone surrogate cannot be shown either; a pair (an emoji) can.
    expect(visible('\ud800 😀')).toBe('\\u{d800} 😀');
    expect(oneLine('a\u2028b\nc')).toBe('a\\u{2028}b\\nc');
  });

  it('shows the joiners and variation selectors text needs, but pre-fills nothing invisible', () => {
    for (const text of ['می\u200cخواهم', 'क्\u200dष', '👩\u200d💻', '❤\ufe0f']) {
      expect(visible(text)).toBe(text);
      // /srv/data/rep‍ort.csv shows as report.csv: a value to send must hold no invisible character.
      expect(plain(text)).toBe(false);
    }
    // Where they join nothing (beside ASCII), they would make one name read as another: codes.
    expect(visible('api\u200d-staging, api\ufe0f-staging')).toBe(
      'api\\u{200d}-staging, api\\u{fe0f}-staging',
    );
    expect(visible('#\ufe0f\u20e3 1\ufe0f\u20e3')).toBe('#\ufe0f\u20e3 1\ufe0f\u20e3');
    // Beside other letters too, and the selectors emoji never use (U+E0100 on) always.
    expect(visible('\u043f\u200d\u0430 caf\u00e9\ufe0f api\u{e0100}')).toBe(
      '\u043f\\u{200d}\u0430 caf\u00e9\\u{fe0f} api\\u{e0100}',
    );
    // Other default-ignorable code points are escaped like format characters.
    for (const code of [0x034f, 0x115f, 0x3164, 0xffa0]) {
      expect(visible(`x${String.fromCodePoint(code)}y`)).toBe(`x\\u{${code.toString(16)}}y`);
    }
    // Blanks that are not a space, and a mark that draws over what comes before it.
    for (const value of ['a\u3000b', 'a\u2000b', 'a\u2800b', '\u0338abc', 'rep\u200dort.csv']) {
      expect(plain(value), JSON.stringify(value)).toBe(false);
    }
    expect(plain('Meeting notes — café, 東京 😀')).toBe(true);
  });

  it('tells which values show exactly as they are (the only ones a prompt may pre-fill)', () => {
    expect(plain('Meeting notes — é 😀')).toBe(true);
    for (const value of [
      'a\u001b[2J',
      'ok\u200B',
      'a\u2028b',
      'x\u202Ey',
      'a\nb',
      'a\tb',
      '\u0007',
    ])
      expect(plain(value), JSON.stringify(value)).toBe(false);
  });

  it('shows private-use and unassigned code points as codes, and pre-fills none', () => {
    // U+E000 and U+F0000 are private use, U+0378 and U+E0080 unassigned, U+FFFF and U+10FFFF noncharacters.
    for (const code of [0xe000, 0xf8ff, 0xf0000, 0x10fffd, 0x0378, 0xe0080, 0xffff, 0x10ffff]) {
      const hidden = `prod${String.fromCodePoint(code)}-db`;
      expect(visible(hidden)).toBe(`prod\\u{${code.toString(16)}}-db`);
      expect(plain(hidden), `U+${code.toString(16)}`).toBe(false);
    }
    expect(oneLine('prod\uE000\u{F0000}-db')).toBe('prod\\u{e000}\\u{f0000}-db');
  });

  it('keeps labels on one line', () => {
    expect(oneLine('a\nb\tc')).toBe('a\\nb c');
    expect(showValue(true)).toBe('yes');
    expect(showValue(undefined)).toBe('(no answer)');
    expect(showValue(['x', 'y'])).toBe('"x", "y"');
    // helper-153 #5: one choice "a.txt, b.txt" read as the two choices a.txt and b.txt.
    expect(showValue(['a.txt, b.txt'])).toBe('"a.txt, b.txt"');
    expect(showValue(['a.txt', 'b.txt'])).toBe('"a.txt", "b.txt"');
    expect(showValue(['a", "b'])).toBe('"a\\u{22}, \\u{22}b"');
    // helper-157 L2, L7: more look-alike quotes; codes already shown are not escaped again.
    expect(showValue(['a\u02f6, \u02f6b', 'x\u001by'])).toBe('"a\\u{2f6}, \\u{2f6}b", "x\\u{1b}y"');
    // helper-155 L2: look-alike quote marks read as the quotes around two choices.
    expect(showValue(['a.txt\u02ba, \u02bab.txt'])).toBe('"a.txt\\u{2ba}, \\u{2ba}b.txt"');
    expect(showValue(['a\uff02, \u201cb'])).toBe('"a\\u{ff02}, \\u{201c}b"');
  });
});

// helper-153 #2: a blank title drew a field with no label, "yes" pre-selected.
describe('labels that would show nothing', () => {
  it('labels a field by its name when its title shows nothing', () => {
    expect(titleOf('delete_all_files', { title: '' })).toBe('delete_all_files');
    expect(titleOf('delete_all_files', { title: ' \u3000\t' })).toBe('delete_all_files');
    expect(titleOf('delete_all_files', { title: 'Delete all files' })).toBe('Delete all files');
    // Shown as a code, so seen: the title stays (the person reads that it is odd).
    expect(titleOf('x', { title: '\u2800' })).toBe('\u2800');
    expect(titleOf('x', {})).toBe('x');
    // helper-155 M1: combining marks alone draw on the space before the label, or nothing.
    for (const marks of ['\u0301', ' \u0301', '\u0301'.repeat(4), '\u0e31', '\u0488'])
      expect(titleOf('delete_everything', { title: marks })).toBe('delete_everything');
    expect(titleOf('x', { title: 'e\u0301' })).toBe('e\u0301');
    // helper-157 L6: characters of no width draw over the cell before, or nothing.
    for (const blank of ['\u1161', '\ud7b0'])
      expect(titleOf('delete_db', { title: blank })).toBe('delete_db');
    expect(bounded('\u1161')).toBe('\\u{1161}');
    expect(bounded('\u{1d159}')).toBe('\\u{1d159}');
  });

  it('shows the blank braille pattern as its code, and a blank label or value as codes or ""', () => {
    expect(visible('a\u2800b')).toBe('a\\u{2800}b');
    expect(plain('a\u2800b')).toBe(false);
    expect(shownLabel('')).toBe('""');
    expect(shownLabel('   ')).toBe('\\u{20}');
    expect(bounded('  ')).toBe('\\u{20}\\u{20}');
    expect(bounded('\u3000')).toBe('\\u{3000}');
    expect(bounded('a b')).toBe('a b');
    expect(bounded('\u0301')).toBe('\\u{301}');
    expect(shownLabel(' \u0301')).toBe('\\u{20}\\u{301}');
  });
});

describe('bounding labels on a terminal', () => {
  it('cuts by terminal columns, so wide characters take the room they draw in', () => {
    const cjk = '漢'.repeat(100);
    const shown = shownLabel(cjk);
    // 120 columns: 59 characters of two columns, then the ellipsis.
    expect(shown).toBe(`${'漢'.repeat(59)}… (41 more characters not shown)`);
    expect(shownLabel('a'.repeat(120))).toBe('a'.repeat(120));
    expect(shownLabel('a'.repeat(121))).toBe(`${'a'.repeat(119)}… (2 more characters not shown)`);
  });

  it('cuts between characters as a person sees them, and counts those', () => {
    const coder = '👩\u200d💻';
    expect(cut(`${'a'.repeat(8)}${coder}${coder}`, 10)).toBe(
      `${'a'.repeat(8)}… (2 more characters not shown)`,
    );
    expect(cut(`${'a'.repeat(8)}${coder}`, 10)).toBe(`${'a'.repeat(8)}${coder}`);
    // A head read never ends inside a surrogate pair or shows part of a character.
    // Brahmi letters with three vowel signs: a column per eight units, so the head read fits whole.
    const brahmi = `x${'\u{11013}\u{11038}\u{11038}\u{11038}'.repeat(71)}`;
    for (const max of [120, 121, 122, 123]) expect(cut(brahmi, max).isWellFormed()).toBe(true);
    // A label of 16 MiB is read only as far as it can be shown; the rest is counted, not escaped.
    const wide = bounded('\u200b'.repeat(5_000_000), 20);
    expect(wide).toMatch(/^(\\u\{200b\}){2}\\u\{… \(\d{7} more characters not shown\)$/);
    // Padding, however long, is one space: it cannot push what tells two labels apart out of sight.
    expect(shownLabel(`a${' '.repeat(1_000_000)}b`, 10)).toBe('a b');
    expect(shownLabel(`${' \t'.repeat(5_000)}Keep`)).toBe(' Keep');
    expect(shownLabel(`Choice${'\u3000'.repeat(5_000)}Delete`)).toBe('Choice Delete');
    // Past what is split into characters, the rest is counted in code points (a long URL: at once).
    expect(cut('a'.repeat(100_000), 10)).toBe(
      `${'a'.repeat(9)}… (99991 more characters not shown)`,
    );
  });

  it('shows a stack of more than four combining marks past the fourth as codes', () => {
    expect(visible(`d${'\u0301'.repeat(6)}x`)).toBe(`d${'\u0301'.repeat(4)}\\u{301}\\u{301}x`);
    // A joiner next to a character shown as its code joins nothing: a code too.
    expect(visible('api\u061c\u200d-staging')).toBe('api\\u{61c}\\u{200d}-staging');
    expect(visible('\u0628\u034f\u200d\u0628')).toBe('\u0628\\u{34f}\\u{200d}\u0628');
    // Joiners between marks neither end the stack nor count in it.
    const split = `\u0915${'\u0901\u0902\u093c\u094d\u200d'.repeat(3)}`;
    expect(visible(split)).toBe(
      '\u0915\u0901\u0902\u093c\u094d\u200d\\u{901}\\u{902}\\u{93c}\\u{94d}\u200d\\u{901}\\u{902}\\u{93c}\\u{94d}\u200d',
    );
    // Four million marks in a row (an 8 MB message): no stack overflow, the same rule.
    const shown = visible(`x${'\u0301'.repeat(4_200_000)}`);
    expect(shown.startsWith(`x${'\u0301'.repeat(4)}\\u{301}`)).toBe(true);
    // Vietnamese and pointed Hebrew stack two to four: kept as they are.
    expect(visible('ệ \u05e9\u05c1\u05b8\u0591')).toBe('ệ \u05e9\u05c1\u05b8\u0591');
  });
});
