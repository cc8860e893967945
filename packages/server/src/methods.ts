import {
  CompleteRequestParamsSchema,
  clip,
  type DiscoverResult,
  ErrorCode,
  GetPromptRequestParamsSchema,
  isCallToolParams,
  McpError,
  ReadResourceRequestParamsSchema,
  retryFieldsProblem,
  type ServerCapabilities,
  shownText,
} from '@mrtr/wire';
import { isPlainObject, parseFailure, schemaViolation } from './arguments.js';
import { type Catalog, matchTemplate } from './catalog.js';
import { extendContext } from './context.js';
import { isThenable } from './dispatch.js';
import { checkHeaderParams } from './headers.js';
import { withStructuredText } from './structured.js';
import type { McpEndpointOptions, RequestContext, ResourceReadContext } from './types.js';

// The endpoint has validated `_meta` before any method runs; parsing it again per method would copy it again.
// tools/call, the hot path, is checked in place (`isCallToolParams`).
const PromptGetParams = GetPromptRequestParamsSchema.omit({ _meta: true });
const ResourceReadParams = ReadResourceRequestParamsSchema.omit({ _meta: true });

/** Protocol versions this endpoint implements. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

/** A method handler: params (already known to be an object) and context in, result out. */
export type MethodHandler = (params: Record<string, unknown>, context: RequestContext) => unknown;

function invalid(message: string, data?: unknown): McpError {
  return new McpError(ErrorCode.InvalidParams, message, data);
}

/**
 * The `-32602` for params of `method` that do not have the spec's shape:
 * names the first member at fault and the rule it breaks, never its value,
 * so a client can tell which part of its request to fix. `data` is
 * `{ path, param?, problem }`: `path` dotted from the request's `params`
 * (`params.inputResponses.confirm`), as every `-32602` of the endpoint
 * names its member; `param`, the same without `params.`, is kept for
 * clients that read it.
 */
function invalidParams(method: string, param: string, problem: string): McpError {
  // A member name is the client's text: a lone surrogate is shown as U+FFFD, so the error is well-formed JSON.
  const name = shownText(param, 64);
  return invalid(`Invalid ${method} params: ${name ? `${name} ` : ''}${problem}`, {
    path: name ? `params.${name}` : 'params',
    ...(name ? { param: name } : {}),
    problem,
  });
}

/** The first member of `tools/call` params {@link isCallToolParams} refused, and why. */
function callParamsProblem(params: Record<string, unknown>): McpError {
  const method = 'tools/call';
  if (typeof params.name !== 'string') return invalidParams(method, 'name', 'must be a string');
  if (params.arguments !== undefined && !isPlainObject(params.arguments))
    return invalidParams(method, 'arguments', 'must be a JSON object');
  const retry = retryFieldsProblem(params);
  if (retry) return invalidParams(method, retry.param, retry.problem);
  return invalid(`Invalid ${method} params`);
}

/** The `-32602` for params a zod schema refused: its first issue's path and message. */
function zodParamsProblem(
  method: string,
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
): McpError {
  const first = issues[0];
  if (!first) return invalid(`Invalid ${method} params`);
  const path = clip(first.path.map((k) => shownText(String(k), 64)).join('.'), 256);
  return invalidParams(method, path, `is invalid (${shownText(first.message, 200)})`);
}

/**
 * Every list is one page: a `cursor` can only be one this server never
 * issued (`server/utilities/pagination`: an invalid cursor is `-32602`,
 * with `data: { path: 'params.cursor' }`).
 */
function onePage(params: Record<string, unknown>): void {
  if (params.cursor !== undefined)
    throw invalid('Invalid params: unknown cursor', { path: 'params.cursor' });
}

/**
 * `ServerCapabilities` for what the catalog and options provide. `logging`
 * is declared unless turned off: every handler's context can send
 * `notifications/message` (`server/utilities/logging`).
 */
export function capabilitiesOf(catalog: Catalog, options: McpEndpointOptions): ServerCapabilities {
  const capabilities: ServerCapabilities = {};
  if (options.logging !== false) capabilities.logging = {};
  if (catalog.tools) capabilities.tools = {};
  if (catalog.prompts) capabilities.prompts = {};
  if (catalog.resources) capabilities.resources = {};
  if (options.complete) capabilities.completions = {};
  return capabilities;
}

/**
 * The methods this endpoint serves, keyed by JSON-RPC method. A capability
 * the options do not provide has no methods, so its requests get `-32601`.
 * Results come back without `_meta.serverInfo` and caching defaults; the
 * endpoint adds those to every result alike.
 */
export function methodTable(
  catalog: Catalog,
  options: McpEndpointOptions,
): Map<string, MethodHandler> {
  const table = new Map<string, MethodHandler>();
  table.set('server/discover', (): DiscoverResult => {
    const result: DiscoverResult = {
      resultType: 'complete',
      supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: capabilitiesOf(catalog, options),
      ttlMs: options.listTtlMs ?? 60_000,
      cacheScope: options.cacheScope ?? 'private',
    };
    if (options.instructions) result.instructions = options.instructions;
    return result;
  });

  const tools = catalog.tools;
  if (tools) {
    const listed = [...tools.values()].map((t) => t.listed);
    table.set('tools/list', (params) => {
      onePage(params);
      return { resultType: 'complete', tools: listed };
    });
    table.set('tools/call', (params, context) => {
      if (!isCallToolParams(params)) throw callParamsProblem(params);
      const entry = tools.get(params.name);
      if (!entry) {
        const name = shownText(params.name, 64);
        throw invalid(`Unknown tool: ${name}`, { name });
      }
      const tool = entry.definition;
      // The declared inputSchema first: nothing of the tool sees arguments it did not declare.
      const rawArgs = params.arguments ?? {};
      if (!entry.validate(rawArgs)) throw schemaViolation(tool.name, entry.validate.errors?.[0]);
      // Read only for a tool with Mcp-Param headers: an adapter may build httpRequest on first read.
      const mismatch =
        entry.headers.length > 0
          ? checkHeaderParams(entry.headers, rawArgs, context.httpRequest.headers)
          : undefined;
      if (mismatch) throw new McpError(ErrorCode.HeaderMismatch, `Header mismatch: ${mismatch}`);
      let args: unknown = rawArgs;
      if (tool.parse) {
        try {
          args = tool.parse(rawArgs);
        } catch (error) {
          throw parseFailure(tool.name, error);
        }
      }
      const result = tool.handler(
        args,
        extendContext(context, {
          method: 'tools/call' as const,
          name: tool.name,
          // What the handler acts on is what a gate binds and audits.
          arguments: isPlainObject(args) ? args : rawArgs,
        }),
      );
      // Not an async function: a tool that answers at once is answered without a promise.
      return isThenable(result)
        ? Promise.resolve(result).then(withStructuredText)
        : withStructuredText(result);
    });
  }

  const prompts = catalog.prompts;
  if (prompts) {
    const listed = [...prompts.values()].map((p) => p.listed);
    table.set('prompts/list', (params) => {
      onePage(params);
      return { resultType: 'complete', prompts: listed };
    });
    table.set('prompts/get', async (params, context) => {
      const parsed = PromptGetParams.safeParse(params);
      if (!parsed.success) throw zodParamsProblem('prompts/get', parsed.error.issues);
      const entry = prompts.get(parsed.data.name);
      if (!entry) {
        const name = shownText(parsed.data.name, 64);
        throw invalid(`Unknown prompt: ${name}`, { name });
      }
      const args = parsed.data.arguments ?? {};
      const declared = entry.definition.arguments ?? [];
      const unknown = Object.keys(args).find((k) => !declared.some((a) => a.name === k));
      if (unknown !== undefined) {
        const argument = shownText(unknown, 64);
        throw invalid(
          `Invalid arguments for prompt ${entry.definition.name}: ${argument} is not a declared argument`,
          { argument },
        );
      }
      const missing = declared
        .filter((a) => a.required && !Object.hasOwn(args, a.name))
        .map((a) => a.name);
      if (missing.length > 0)
        throw invalid(`Missing required prompt arguments: ${missing.join(', ')}`, { missing });
      return entry.definition.handler(
        args,
        extendContext(context, {
          method: 'prompts/get' as const,
          name: entry.definition.name,
          arguments: args,
        }),
      );
    });
  }

  const resources = catalog.resources;
  if (resources) {
    const listed = [...resources.values()].map((r) => r.listed);
    const templates = (catalog.templates ?? []).map((t) => t.listed);
    table.set('resources/list', (params) => {
      onePage(params);
      return { resultType: 'complete', resources: listed };
    });
    table.set('resources/templates/list', (params) => {
      onePage(params);
      return { resultType: 'complete', resourceTemplates: templates };
    });
    table.set('resources/read', async (params, context) => {
      const parsed = ResourceReadParams.safeParse(params);
      if (!parsed.success) throw zodParamsProblem('resources/read', parsed.error.issues);
      const uri = parsed.data.uri;
      const direct = resources.get(uri);
      const templated = direct ? undefined : matchTemplate(catalog, uri);
      const ctx: ResourceReadContext = extendContext(context, {
        method: 'resources/read' as const,
        uri,
        name: uri,
        arguments: templated?.variables ?? {},
      });
      if (direct) return direct.definition.read(ctx);
      const result = templated
        ? await templated.definition.read(templated.variables, ctx)
        : undefined;
      // SEP-2164: an unknown resource is -32602 naming the URI, never an empty `contents`.
      if (result === undefined) throw invalid('Resource not found', { uri });
      return result;
    });
  }

  const complete = options.complete;
  if (complete) {
    table.set('completion/complete', (params, context) => {
      const parsed = CompleteRequestParamsSchema.safeParse(params);
      if (!parsed.success) throw zodParamsProblem('completion/complete', parsed.error.issues);
      return complete(parsed.data, context);
    });
  }
  return table;
}
