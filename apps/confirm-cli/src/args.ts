import type { ToolInfo } from '@mrtr/client';

/** A command-line mistake: shown to the person, exit code 2, nothing sent. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Turn `--arg key=value` pairs into tool `arguments`, typed by the tool's
 * `inputSchema`: `integer`/`number` properties become numbers, `boolean`
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

function coerce(key: string, raw: string, type: unknown): unknown {
  switch (type) {
    case 'integer':
    case 'number': {
      const n = raw.trim() === '' ? Number.NaN : Number(raw);
      if (!Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n)))
        throw new UsageError(
          `--arg ${key} must be ${type === 'integer' ? 'an integer' : 'a number'}, got "${raw}"`,
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
