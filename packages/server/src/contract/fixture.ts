/**
 * The endpoint the adapter contract suite serves through each adapter: a few
 * tools that stream, wait for a disconnect, throw, or return what cannot be
 * sent, and a probe through which the tests see what handlers saw.
 */
import { textResult } from '@mrtr/wire';
import { createMcpEndpoint } from '../endpoint.js';
import type { McpEndpoint, McpEndpointOptions, ToolDefinition } from '../types.js';

/** A promise with its resolver. */
export interface Latch<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function latch<T = void>(): Latch<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What the fixture's handlers saw; `reset()` before each test that reads it. */
export class Probe {
  /** Handler runs, by tool name. */
  runs: Record<string, number> = {};
  /** The `args` and `context.arguments` of the last run. */
  seen: { args?: unknown; contextArguments?: unknown } = {};
  /** Resolved by the test to let `stream_then_wait` finish. */
  release = latch();
  /** Whether `stream_then_wait` had finished. */
  finished = false;
  /** Resolved when `wait_for_abort` starts waiting. */
  started = latch();
  /** Resolved with whether `wait_for_abort` saw its signal abort. */
  aborted = latch<boolean>();

  reset(): void {
    this.runs = {};
    this.seen = {};
    this.release = latch();
    this.finished = false;
    this.started = latch();
    this.aborted = latch<boolean>();
  }

  ran(name: string, args: unknown, contextArguments: unknown): void {
    this.runs[name] = (this.runs[name] ?? 0) + 1;
    this.seen = { args, contextArguments };
  }
}

/** The bearer token the fixture's `authenticate` accepts (principal `contract`). */
export const CONTRACT_TOKEN = 'contract-token';

type Tool = ToolDefinition<Record<string, unknown>>;

function tools(probe: Probe): Tool[] {
  const closed = { type: 'object', additionalProperties: false } as const;
  return [
    {
      name: 'echo',
      inputSchema: { ...closed, properties: { text: { type: 'string' } }, required: ['text'] },
      handler: (args, ctx) => {
        probe.ran('echo', args, ctx.arguments);
        return textResult(String(args.text));
      },
    },
    {
      // Open schema, and a parse that normalizes: the handler and its context see only what parse returned.
      name: 'normalize',
      inputSchema: { type: 'object', properties: { n: { type: 'string', pattern: '^[0-9]+$' } } },
      parse(raw) {
        const n = Number((raw as { n?: unknown }).n);
        if (!(n > 0))
          throw Object.assign(new Error('bad'), {
            issues: [{ path: ['n'], message: 'must be positive' }],
          });
        return { n };
      },
      handler: (args, ctx) => {
        probe.ran('normalize', args, ctx.arguments);
        return textResult(String(args.n));
      },
    },
    {
      name: 'stream_then_wait',
      inputSchema: closed,
      handler: async (_args, ctx) => {
        ctx.progress(1, 2, 'started');
        await Promise.race([probe.release.promise, sleep(3000)]);
        probe.finished = true;
        return textResult('done');
      },
    },
    {
      name: 'wait_for_abort',
      inputSchema: { ...closed, properties: { stream: { type: 'boolean' } } },
      handler: async (args, ctx) => {
        const signal = ctx.signal;
        if (args.stream) ctx.progress(1, 2, 'waiting');
        probe.started.resolve();
        const aborted = new Promise<boolean>((r) =>
          signal.aborted ? r(true) : signal.addEventListener('abort', () => r(true)),
        );
        probe.aborted.resolve(await Promise.race([aborted, sleep(5000).then(() => false)]));
        return textResult('gave up waiting');
      },
    },
    {
      name: 'throws',
      inputSchema: { ...closed, properties: { afterProgress: { type: 'boolean' } } },
      handler: (args, ctx) => {
        if (args.afterProgress) ctx.progress(1);
        throw new Error('tool failure with details the client must not see');
      },
    },
    {
      name: 'unserializable',
      inputSchema: closed,
      handler: () => ({
        resultType: 'complete',
        content: [{ type: 'text', text: 'x', size: 10n } as never],
      }),
    },
    {
      name: 'structured',
      inputSchema: closed,
      handler: () => textResult('Made it.', { structuredContent: { ok: true, n: 1 } }),
    },
  ];
}

/**
 * The contract endpoint. `authenticate` accepts `Bearer contract-token`, and
 * throws when the request carries `x-auth-fails` (an unreachable auth backend).
 */
export function contractEndpoint(
  probe: Probe,
  extra: Partial<McpEndpointOptions> = {},
): McpEndpoint {
  return createMcpEndpoint({
    serverInfo: { name: 'adapter-contract', version: '1.0.0' },
    tools: tools(probe) as ToolDefinition<unknown>[],
    authenticate(request) {
      if (request.headers.has('x-auth-fails')) throw new Error('auth backend down');
      return request.headers.get('authorization') === `Bearer ${CONTRACT_TOKEN}`
        ? { id: 'contract' }
        : undefined;
    },
    onError: () => {},
    ...extra,
  });
}
