/**
 * Structural limits on a request's `params`, checked once, iteratively, right
 * after the body is parsed, so that no later step (schema validation, RFC 8785
 * canonicalization, `JSON.stringify`, a database driver) meets a value it
 * cannot handle: nesting deeper than the limit (recursive code would overflow
 * its stack), and strings that are not well-formed Unicode (a lone surrogate
 * is not a Unicode scalar value: RFC 8259 §8.2, RFC 7493 §2.1) or, inside
 * `_meta`, contain U+0000 (which no protocol field needs and PostgreSQL cannot
 * store).
 *
 * `inputResponses` is exempt from the string rules: what an answer carries is
 * for its reader to judge (a decline stays a decline whatever its content
 * holds); its depth is still bounded.
 */

/** Default largest nesting depth of `params` (objects and arrays), `params` itself being depth 1. */
export const DEFAULT_MAX_DEPTH = 64;

/** What is wrong, and where (the keys from `params` down). */
export interface ShapeProblem {
  path: string[];
  problem: 'too-deep' | 'ill-formed-unicode' | 'nul-in-meta';
}

interface Frame {
  value: unknown;
  depth: number;
  key: string;
  parent: Frame | undefined;
  strings: 'all' | 'none' | 'meta';
}

const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

function pathOf(frame: Frame | undefined): string[] {
  const path: string[] = [];
  for (let f = frame; f?.parent; f = f.parent) path.unshift(f.key);
  return path;
}

function badString(s: string, rules: Frame['strings']): ShapeProblem['problem'] | undefined {
  if (rules === 'none') return undefined;
  if (!wellFormed(s)) return 'ill-formed-unicode';
  if (rules === 'meta' && s.includes('\u0000')) return 'nul-in-meta';
  return undefined;
}

/**
 * The first structural problem of `params`, or `undefined`. Walks every
 * value once with an explicit stack (no recursion), so its cost is linear in
 * the size of the body already parsed.
 */
export function inspectParams(
  params: Record<string, unknown>,
  maxDepth = DEFAULT_MAX_DEPTH,
): ShapeProblem | undefined {
  const stack: Frame[] = [{ value: params, depth: 1, key: '', parent: undefined, strings: 'all' }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const { value, depth } = frame;
    if (typeof value === 'string') {
      const problem = badString(value, frame.strings);
      if (problem) return { path: pathOf(frame), problem };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > maxDepth) return { path: pathOf(frame), problem: 'too-deep' };
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++)
        stack.push({
          value: value[i],
          depth: depth + 1,
          key: String(i),
          parent: frame,
          strings: frame.strings,
        });
      continue;
    }
    for (const key of Object.keys(value)) {
      let strings = frame.strings;
      if (depth === 1 && key === 'inputResponses') strings = 'none';
      else if (depth === 1 && key === '_meta') strings = 'meta';
      const child: Frame = { value: undefined, depth: depth + 1, key, parent: frame, strings };
      const problem = badString(key, strings);
      if (problem) return { path: pathOf(child), problem };
      child.value = (value as Record<string, unknown>)[key];
      stack.push(child);
    }
  }
  return undefined;
}
