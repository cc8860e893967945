import { describe, expect, it } from 'vitest';
import { parseArgs, parseDecimal, UsageError } from '../src/args.js';
import { oneLine, showValue, visible } from '../src/display.js';

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

  it('keeps labels on one line', () => {
    expect(oneLine('a\nb\tc')).toBe('a\\nb c');
    expect(showValue(true)).toBe('yes');
    expect(showValue(undefined)).toBe('(no answer)');
    expect(showValue(['x', 'y'])).toBe('x, y');
  });
});
