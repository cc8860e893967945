/**
 * Structural limits on a request's `params`, checked once, iteratively, right
 * after the body is parsed, so that no later step (schema validation, RFC 8785
 * canonicalization, `JSON.stringify`, a database driver) meets a value it
 * cannot handle: nesting deeper than the limit (recursive code would overflow
 * its stack), and strings that are not well-formed Unicode (a lone surrogate
 * is not a Unicode scalar value: RFC 8259 §8.2, RFC 7493 §2.1) or, inside
 * `_meta`, contain U+0000 (which no protocol field needs and PostgreSQL cannot
 * store), and numbers JSON cannot carry back (`1e400` parses to `Infinity`).
 *
 * `inputResponses` is exempt from the value rules: what an answer carries is
 * for its reader to judge (a decline stays a decline whatever its content
 * holds); its depth is still bounded.
 */

/** Default largest nesting depth of `params` (objects and arrays), `params` itself being depth 1. */
export const DEFAULT_MAX_DEPTH = 64;

/** What is wrong, and where (the keys from `params` down). */
export interface ShapeProblem {
  path: string[];
  problem: 'too-deep' | 'ill-formed-unicode' | 'nul-in-meta' | 'non-finite-number';
}

/** A container still to visit; scalars are checked where they are found, without a frame. */
interface Frame {
  value: object;
  depth: number;
  key: string;
  parent: Frame | undefined;
  strings: 'all' | 'none' | 'meta';
}

const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

function pathOf(frame: Frame | undefined, last?: string): string[] {
  const path: string[] = last === undefined ? [] : [last];
  for (let f = frame; f?.parent; f = f.parent) path.unshift(f.key);
  return path;
}

function badString(s: string, rules: Frame['strings']): ShapeProblem['problem'] | undefined {
  if (rules === 'none') return undefined;
  if (!wellFormed(s)) return 'ill-formed-unicode';
  if (rules === 'meta' && s.includes('\u0000')) return 'nul-in-meta';
  return undefined;
}

/** What is wrong with a scalar (`1e400` parses to `Infinity`, which JSON cannot carry back). */
function badScalar(value: unknown, rules: Frame['strings']): ShapeProblem['problem'] | undefined {
  if (rules === 'none') return undefined;
  if (typeof value === 'string') return badString(value, rules);
  if (typeof value === 'number' && !Number.isFinite(value)) return 'non-finite-number';
  return undefined;
}

/**
 * The first structural problem of `params`, or `undefined`. Walks every
 * value once with an explicit stack of containers (no recursion), so its
 * cost is linear in the size of the body already parsed.
 */
export function inspectParams(
  params: Record<string, unknown>,
  maxDepth = DEFAULT_MAX_DEPTH,
): ShapeProblem | undefined {
  const stack: Frame[] = [{ value: params, depth: 1, key: '', parent: undefined, strings: 'all' }];
  let frame = stack.pop();
  while (frame) {
    if (frame.depth > maxDepth) return { path: pathOf(frame), problem: 'too-deep' };
    const { value, depth } = frame;
    const array = Array.isArray(value);
    const keys = array ? undefined : Object.keys(value);
    const count = array ? (value as unknown[]).length : (keys as string[]).length;
    for (let i = 0; i < count; i++) {
      const key = array ? String(i) : ((keys as string[])[i] as string);
      let strings = frame.strings;
      if (depth === 1 && key === 'inputResponses') strings = 'none';
      else if (depth === 1 && key === '_meta') strings = 'meta';
      const child = (value as Record<string, unknown>)[key];
      const problem = (array ? undefined : badString(key, strings)) ?? badScalar(child, strings);
      if (problem) return { path: pathOf(frame, key), problem };
      if (child !== null && typeof child === 'object')
        stack.push({ value: child, depth: depth + 1, key, parent: frame, strings });
    }
    frame = stack.pop();
  }
  return undefined;
}
