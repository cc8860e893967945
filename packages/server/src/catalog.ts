import type { Prompt, Resource, ResourceTemplate, Tool } from '@mrtr/wire';
import type { ValidateFunction } from 'ajv';
import { schemaCompiler } from './arguments.js';
import { collectHeaderParams, type HeaderParam } from './headers.js';
import type {
  AnyToolDefinition,
  McpEndpointOptions,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from './types.js';

/**
 * What one endpoint serves: tools, prompts, resources and resource templates,
 * checked once at creation and listed in registration order, so every
 * `*\/list` answer is the same sequence until the definitions change
 * (`server/tools`, "deterministic order").
 */
export interface Catalog {
  tools?: Map<
    string,
    {
      definition: AnyToolDefinition;
      listed: Tool;
      headers: HeaderParam[];
      /** The compiled `inputSchema`. */
      validate: ValidateFunction;
    }
  >;
  prompts?: Map<string, { definition: PromptDefinition; listed: Prompt }>;
  resources?: Map<string, { definition: ResourceDefinition; listed: Resource }>;
  templates?: {
    definition: ResourceTemplateDefinition;
    listed: ResourceTemplate;
    match: RegExp;
    exec: (uri: string) => string[] | undefined;
    names: string[];
  }[];
}

function unique<T>(items: readonly T[], key: (item: T) => string, kind: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) throw new Error(`${kind} ${k} is defined twice`);
    seen.add(k);
  }
}

/** The definition without its functions: what a list result carries. */
function listed<T extends object>(definition: T): Omit<T, 'handler' | 'parse' | 'read'> {
  const {
    handler: _h,
    parse: _p,
    read: _r,
    ...rest
  } = definition as T & {
    handler?: unknown;
    parse?: unknown;
    read?: unknown;
  };
  return rest;
}

const VARIABLE = /\{([A-Za-z0-9_]+)\}/g;

/**
 * Compile a level-1 RFC 6570 template (`test://template/{id}/data`) to a
 * matcher: each `{name}` matches one non-empty run without `/`; everything
 * else matches literally.
 * @returns `match`, the matcher as a `RegExp` (`^…$`, one group per
 *   variable); `exec(uri)`, the same captures or `undefined`, in time linear
 *   in the URI's length (the `RegExp` backtracks where two variables share a
 *   path segment, `{name}.{ext}`: seconds for a long URI); `names`, the
 *   variables in order.
 * @throws TypeError on an expression beyond level 1 (`{+x}`, `{?q}`, `{a,b}`).
 */
export function compileTemplate(uriTemplate: string): {
  match: RegExp;
  exec: (uri: string) => string[] | undefined;
  names: string[];
} {
  if (/\{[^A-Za-z0-9_]|\{[^}]*[,?#+./;&=]/.test(uriTemplate))
    throw new TypeError(`resource template ${uriTemplate} uses more than level-1 expressions`);
  const names: string[] = [];
  /** The literals around the variables: one more than there are variables. */
  const literals: string[] = [];
  let pattern = '';
  let last = 0;
  for (const m of uriTemplate.matchAll(VARIABLE)) {
    literals.push(uriTemplate.slice(last, m.index));
    pattern += escapeRegExp(uriTemplate.slice(last, m.index));
    pattern += '([^/]+)';
    names.push(m[1] as string);
    last = (m.index ?? 0) + m[0].length;
  }
  literals.push(uriTemplate.slice(last));
  pattern += escapeRegExp(uriTemplate.slice(last));
  return { match: new RegExp(`^${pattern}$`), exec: (uri) => execTemplate(literals, uri), names };
}

/**
 * The variables of `uri` under the template made of `literals` (a variable
 * between each two), as the template's `RegExp` captures them, without its
 * backtracking. A variable holds no `/`, so the URI's `/` are the literals'
 * own, one for one; what lies between a literal's `/` and the next is matched
 * on its own, right to left: each literal at its last place that leaves a
 * variable after it at least one character. That gives each variable the
 * longest run that lets the rest match, as the `RegExp`'s greedy groups do.
 */
function execTemplate(literals: readonly string[], uri: string): string[] | undefined {
  const head = literals[0] as string;
  const tail = literals[literals.length - 1] as string;
  const vars = literals.length - 1;
  if (uri.length < head.length + tail.length + vars) return undefined;
  if (!uri.startsWith(head) || !uri.endsWith(tail)) return undefined;
  // Right to left: the start of each variable's run and where it ends.
  const ends: number[] = new Array(vars);
  const starts: number[] = new Array(vars);
  let end = uri.length - tail.length;
  for (let i = vars - 1; i >= 0; i--) {
    const before = literals[i] as string;
    const floor = i === 0 ? head.length : 0;
    // The run holds no `/` and at least one character; the literal before it ends where it starts.
    const slash = uri.lastIndexOf('/', end - 1);
    const lowest = Math.max(slash + 1, floor);
    let start: number;
    if (i === 0) start = head.length;
    else {
      const at =
        end - 1 - before.length < 0 ? -1 : uri.lastIndexOf(before, end - 1 - before.length);
      if (at < 0) return undefined;
      start = at + before.length;
    }
    if (start < lowest || start >= end) return undefined;
    starts[i] = start;
    ends[i] = end;
    if (i > 0) end = start - before.length;
  }
  return starts.map((start, i) => uri.slice(start, ends[i]));
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Build the catalog from the endpoint options.
 * @throws Error on a name or URI defined twice, an invalid `x-mcp-header`
 *   annotation, an `inputSchema` that cannot be compiled (invalid, another
 *   dialect than 2020-12 or draft-07, an unresolvable `$ref`), or a resource
 *   template beyond RFC 6570 level 1.
 */
export function buildCatalog(options: McpEndpointOptions): Catalog {
  const catalog: Catalog = {};
  if (options.tools) {
    unique(options.tools, (t) => t.name, 'tool');
    const compiler = schemaCompiler();
    catalog.tools = new Map(
      options.tools.map((t) => [
        t.name,
        {
          definition: t,
          listed: listed(t) as Tool,
          headers: collectHeaderParams(t.name, t.inputSchema),
          validate: compiler.compile(t.name, t.inputSchema),
        },
      ]),
    );
  }
  if (options.prompts) {
    unique(options.prompts, (p) => p.name, 'prompt');
    catalog.prompts = new Map(
      options.prompts.map((p) => [p.name, { definition: p, listed: listed(p) as Prompt }]),
    );
  }
  if (options.resources || options.resourceTemplates) {
    const resources = options.resources ?? [];
    unique(resources, (r) => r.uri, 'resource');
    catalog.resources = new Map(
      resources.map((r) => [r.uri, { definition: r, listed: listed(r) as Resource }]),
    );
    const templates = options.resourceTemplates ?? [];
    unique(templates, (t) => t.uriTemplate, 'resource template');
    catalog.templates = templates.map((t) => ({
      definition: t,
      listed: listed(t) as ResourceTemplate,
      ...compileTemplate(t.uriTemplate),
    }));
  }
  return catalog;
}

/** Find the template a URI instantiates, and its variables (percent-decoded). */
export function matchTemplate(
  catalog: Catalog,
  uri: string,
): { definition: ResourceTemplateDefinition; variables: Record<string, string> } | undefined {
  for (const template of catalog.templates ?? []) {
    const m = template.exec(uri);
    if (!m) continue;
    const variables: Record<string, string> = {};
    try {
      template.names.forEach((name, i) => {
        variables[name] = decodeURIComponent(m[i] as string);
      });
    } catch {
      continue; // malformed percent-encoding: this URI names nothing
    }
    return { definition: template.definition, variables };
  }
  return undefined;
}
