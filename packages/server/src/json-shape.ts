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

/** Which value rules apply below a key: all, none (`inputResponses`), or those of `_meta`. */
type Rules = 0 | 1 | 2;
const ALL: Rules = 0;
const NONE: Rules = 1;
const META: Rules = 2;

const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();
const hasOwn = Object.prototype.hasOwnProperty;

function badString(s: string, rules: Rules): ShapeProblem['problem'] | undefined {
  if (rules === NONE) return undefined;
  if (!wellFormed(s)) return 'ill-formed-unicode';
  if (rules === META && s.includes('\u0000')) return 'nul-in-meta';
  return undefined;
}

/** What is wrong with a scalar (`1e400` parses to `Infinity`, which JSON cannot carry back). */
function badScalar(value: unknown, rules: Rules): ShapeProblem['problem'] | undefined {
  if (rules === NONE) return undefined;
  if (typeof value === 'string') return badString(value, rules);
  if (typeof value === 'number' && !Number.isFinite(value)) return 'non-finite-number';
  return undefined;
}

/** The keys from `params` down to the container at `depth`, then `last` (an array index as text). */
function pathOf(keys: (string | number)[], depth: number, last?: string | number): string[] {
  const path = keys.slice(1, depth).map(String);
  if (last !== undefined) path.push(String(last));
  return path;
}

/**
 * Shared by every call: the walk is synchronous and runs no code of anyone
 * else, so calls never overlap, and reusing it spares an allocation per request.
 */
const stack: unknown[] = [];

/** Push one container frame (four slots: value, depth, key, rules) onto {@link stack}; returns the new top. */
function pushFrame(
  top: number,
  value: object,
  depth: number,
  key: string | number,
  rules: Rules,
): number {
  stack[top] = value;
  stack[top + 1] = depth;
  stack[top + 2] = key;
  stack[top + 3] = rules;
  return top + 4;
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
  // The stack of containers still to visit, four slots each (value, depth, key, rules).
  let top = pushFrame(0, params, 1, '', ALL);
  // The walk is depth first, so the keys of the container being visited and of its ancestors are
  // keys[1..depth-1]: written as each is visited, read only to name a problem.
  const keys: (string | number)[] = [];
  let found: ShapeProblem | undefined;
  while (top > 0 && !found) {
    const rules = stack[--top] as Rules;
    const key = stack[--top] as string | number;
    const depth = stack[--top] as number;
    const value = stack[--top] as object;
    stack[top] = undefined;
    stack[top + 2] = undefined;
    keys[depth - 1] = key;
    if (depth > maxDepth) {
      found = { path: pathOf(keys, depth), problem: 'too-deep' };
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        const problem = badScalar(child, rules);
        if (problem) {
          found = { path: pathOf(keys, depth, i), problem };
          break;
        }
        if (child !== null && typeof child === 'object')
          top = pushFrame(top, child, depth + 1, i, rules);
      }
    } else {
      // for-in over own keys: the order of Object.keys, without building its array.
      for (const name in value) {
        if (!hasOwn.call(value, name)) continue;
        let strings = rules;
        if (depth === 1 && name === 'inputResponses') strings = NONE;
        else if (depth === 1 && name === '_meta') strings = META;
        const child = (value as Record<string, unknown>)[name];
        const problem = badString(name, strings) ?? badScalar(child, strings);
        if (problem) {
          found = { path: pathOf(keys, depth, name), problem };
          break;
        }
        if (child !== null && typeof child === 'object')
          top = pushFrame(top, child, depth + 1, name, strings);
      }
    }
  }
  // Nothing of this request stays reachable from the shared stack, nor does a huge one's storage.
  while (top > 0) stack[--top] = undefined;
  if (stack.length > 1024) stack.length = 0;
  return found;
}
