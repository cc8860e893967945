import type { ToolInfo } from '@mrtr/client';

/** A command-line mistake: shown to the person, exit code 2, nothing sent. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Turn `--arg key=value` pairs into tool `arguments`, typed by the tool's
 * `inputSchema`: `integer`/`number` properties become numbers (decimal only,
 * see {@link parseDecimal}), `boolean`
 * ones `true`/`false`, `object`/`array` ones are read as JSON; anything else
 * stays the string as typed (so `--arg title=007` keeps its zeros).
 *
 * @param pairs the raw `key=value` strings, in order (a later key overrides an earlier one)
 * @param tool the tool definition from `tools/list`, when known
 * @throws {UsageError} for a pair without `=`, an empty key, or a value the schema's type rejects
 */
export function parseArgs(pairs: string[], tool: ToolInfo | undefined): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const properties = (tool?.inputSchema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg needs key=value, got "${pair}"`);
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const type = Object.hasOwn(properties, key) ? properties[key]?.type : undefined;
    Object.defineProperty(args, key, {
      value: coerce(key, raw, type),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return args;
}

/** Decimal digits, optionally signed: what an integer is typed as (`0x10`, `1e3`, `0b1`, ` 7` are not). */
const DECIMAL_INTEGER = /^[-+]?\d+$/;
/** A decimal number as JSON writes it, with an optional sign and exponent (no hex, no Infinity, no spaces). */
const DECIMAL_NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Read a number typed by a person, in decimal only: `integer` takes digits
 * with an optional sign and must be a safe integer (±(2^53−1)); `number`
 * also takes a fraction and an exponent. Whitespace, `0x`/`0o`/`0b`
 * prefixes, `Infinity` and `NaN` are refused.
 *
 * @returns the number, or `undefined` when `raw` is not such a decimal
 */
export function parseDecimal(raw: string, type: 'integer' | 'number'): number | undefined {
  if (!(type === 'integer' ? DECIMAL_INTEGER : DECIMAL_NUMBER).test(raw)) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) return undefined;
  if (type === 'integer' && !Number.isSafeInteger(n)) return undefined;
  return n;
}

function coerce(key: string, raw: string, type: unknown): unknown {
  switch (type) {
    case 'integer':
    case 'number': {
      const n = parseDecimal(raw, type);
      if (n === undefined)
        throw new UsageError(
          `--arg ${key} must be ${type === 'integer' ? 'a decimal integer' : 'a decimal number'}, got "${raw}"`,
        );
      return n;
    }
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw new UsageError(`--arg ${key} must be true or false, got "${raw}"`);
    case 'object':
    case 'array':
      try {
        return JSON.parse(raw);
      } catch {
        throw new UsageError(`--arg ${key} must be JSON (${type}), got "${raw}"`);
      }
    default:
      return raw;
  }
}
