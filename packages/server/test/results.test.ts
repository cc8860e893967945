import { assertValidMessage } from '@mrtr/spec-schema';
import { type InputRequiredResult, textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import {
  compileTemplate,
  createMcpEndpoint,
  type McpEndpointOptions,
  type PromptDefinition,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  type ToolCallContext,
  type ToolDefinition,
} from '../src/index.js';
import { META, post, rpc, send } from './helpers.js';

const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'test', version: '1.0.0' } };
const ask: InputRequiredResult = {
  resultType: 'input_required',
  inputRequests: {
    q: {
      method: 'elicitation/create',
      params: {
        message: 'ok?',
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      },
    },
  },
};

const tools: ToolDefinition[] = ['zeta', 'alpha', 'mid'].map((name) => ({
  name,
  description: `Tool ${name}.`,
  inputSchema: { type: 'object' },
  handler: () => textResult(name),
}));
const bare: ToolDefinition = {
  name: 'bare',
  description: 'Returns a result without resultType.',
  inputSchema: { type: 'object' },
  handler: () => ({ content: [{ type: 'text', text: 'x' }] }) as never,
};
const progress: ToolDefinition = {
  name: 'slow',
  description: 'Reports progress and logs.',
  inputSchema: { type: 'object' },
  handler: async (_a, ctx) => {
    ctx.log('debug', 'starting');
    ctx.progress(1, 2, 'half');
    await new Promise((r) => setTimeout(r, 5));
    ctx.log('error', 'almost');
    ctx.progress(2, 2);
    return textResult('done');
  },
};
const prompts: PromptDefinition[] = [
  {
    name: 'greet',
    description: 'Greets someone.',
    arguments: [{ name: 'who', required: true }],
    handler: (args) => ({
      resultType: 'complete',
      messages: [{ role: 'user', content: { type: 'text', text: `Hello ${args.who}` } }],
    }),
  },
  { name: 'asks', description: 'Asks first.', handler: () => ask },
];
const resources: ResourceDefinition[] = [
  {
    uri: 'test://a',
    name: 'a',
    read: () => ({ resultType: 'complete', contents: [{ uri: 'test://a', text: 'A' }] }),
  },
  {
    uri: 'test://cached',
    name: 'cached',
    read: () => ({
      resultType: 'complete',
      contents: [{ uri: 'test://cached', text: 'C' }],
      ttlMs: 5000,
      cacheScope: 'public',
    }),
  },
  { uri: 'test://gated', name: 'gated', read: () => ask },
];
const resourceTemplates: ResourceTemplateDefinition[] = [
  {
    uriTemplate: 'test://items/{id}',
    name: 'item',
    read: ({ id }) =>
      id === 'missing'
        ? undefined
        : {
            resultType: 'complete',
            // The variable arrives decoded: encoded again, the uri is one (schema.json: format uri).
            contents: [
              { uri: `test://items/${encodeURIComponent(String(id))}`, text: `item ${id}` },
            ],
          },
  },
];

function endpointWith(options: Partial<McpEndpointOptions> = {}) {
  return createMcpEndpoint({
    serverInfo: { name: 'test', version: '1.0.0' },
    tools: [...tools, bare, progress],
    prompts,
    resources,
    resourceTemplates,
    complete: (params) => ({
      resultType: 'complete',
      completion: { values: [params.argument.value] },
    }),
    authenticate: () => ({ id: 'alice' }),
    onError: () => {},
    ...options,
  });
}
const endpoint = endpointWith();

describe('every result', () => {
  it.each([
    ['server/discover', {}],
    ['tools/list', {}],
    ['tools/call', { name: 'alpha' }],
    ['prompts/list', {}],
    ['prompts/get', { name: 'greet', arguments: { who: 'Bo' } }],
    ['resources/list', {}],
    ['resources/templates/list', {}],
    ['resources/read', { uri: 'test://a' }],
    [
      'completion/complete',
      { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'B' } },
    ],
  ])('%s carries resultType and serverInfo in _meta', async (method, params) => {
    const r = await send(endpoint, post(rpc(method, params)));
    expect(r.status).toBe(200);
    expect(r.body.result.resultType).toBe('complete');
    expect(r.body.result._meta).toEqual(SERVER_INFO);
  });

  it('gets resultType "complete" when a handler leaves it out', async () => {
    const r = await send(endpoint, post(rpc('tools/call', { name: 'bare' })));
    expect(r.body.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'x' }],
    });
  });

  it('leaves serverInfo out when configured to', async () => {
    const quiet = endpointWith({ includeServerInfo: false });
    const r = await send(quiet, post(rpc('tools/list')));
    expect(r.body.result._meta).toBeUndefined();
  });
});

describe('lists and caching hints', () => {
  it('tools/list keeps registration order on every call, with ttlMs and cacheScope', async () => {
    const names = async () => (await send(endpoint, post(rpc('tools/list')))).body.result;
    const first = await names();
    expect(first.tools.map((t: { name: string }) => t.name)).toEqual([
      'zeta',
      'alpha',
      'mid',
      'bare',
      'slow',
    ]);
    for (let i = 0; i < 3; i++) expect(await names()).toEqual(first);
    expect(first).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
    expect(first.tools[0].handler).toBeUndefined();
  });

  it('list ttl and scope are configurable; resources/read defaults to ttlMs 0 unless the reader sets it', async () => {
    const e = endpointWith({ listTtlMs: 5, cacheScope: 'public', readTtlMs: 7 });
    for (const method of [
      'server/discover',
      'prompts/list',
      'resources/list',
      'resources/templates/list',
    ])
      expect((await send(e, post(rpc(method)))).body.result).toMatchObject({
        ttlMs: 5,
        cacheScope: 'public',
      });
    expect(
      (await send(e, post(rpc('resources/read', { uri: 'test://a' })))).body.result,
    ).toMatchObject({ ttlMs: 7 });
    const d = await send(endpoint, post(rpc('resources/read', { uri: 'test://a' })));
    expect(d.body.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    const own = await send(endpoint, post(rpc('resources/read', { uri: 'test://cached' })));
    expect(own.body.result).toMatchObject({ ttlMs: 5000, cacheScope: 'public' });
  });

  it('discover declares exactly the capabilities served, logging included (handlers can log)', async () => {
    expect((await send(endpoint, post(rpc('server/discover')))).body.result.capabilities).toEqual({
      logging: {},
      tools: {},
      prompts: {},
      resources: {},
      completions: {},
    });
    const toolsOnly = createMcpEndpoint({
      serverInfo: { name: 't', version: '1' },
      tools: [],
      authenticate: () => ({ id: 'a' }),
      logging: false,
    });
    expect((await send(toolsOnly, post(rpc('server/discover')))).body.result.capabilities).toEqual({
      tools: {},
    });
    for (const method of ['prompts/list', 'resources/list', 'completion/complete'])
      expect((await send(toolsOnly, post(rpc(method)), false)).status).toBe(404);
  });
});

describe('prompts and resources', () => {
  it('prompts/get checks required arguments and names unknown prompts (-32602)', async () => {
    const missing = await send(endpoint, post(rpc('prompts/get', { name: 'greet' })));
    expect(missing.body.error).toMatchObject({ code: -32602, data: { missing: ['who'] } });
    const unknown = await send(endpoint, post(rpc('prompts/get', { name: 'nope' })));
    expect(unknown.body.error.code).toBe(-32602);
    const ok = await send(
      endpoint,
      post(rpc('prompts/get', { name: 'greet', arguments: { who: 'Bo' } })),
    );
    expect(ok.body.result.messages[0].content.text).toBe('Hello Bo');
  });

  it('resources/read serves direct resources and templates, and -32602 with data.uri otherwise', async () => {
    const item = await send(endpoint, post(rpc('resources/read', { uri: 'test://items/a%20b' })));
    expect(item.body.result.contents).toEqual([{ uri: 'test://items/a%20b', text: 'item a b' }]);
    for (const uri of ['test://items/missing', 'test://nothing', 'test://items/a/b']) {
      const r = await send(endpoint, post(rpc('resources/read', { uri })));
      expect(r.body.error, uri).toMatchObject({ code: -32602, data: { uri } });
    }
  });

  it('compileTemplate: exec captures what the RegExp does, without its backtracking', () => {
    // Every URI of up to five characters over a small alphabet, under templates with one to three
    // variables and literals that hold `/` or not (22 million pairs agreed when this was written).
    const literals = ['', 'a', '/', '.', 'a.', '/a', 'a/', 'x://a/'];
    const uris = [''];
    for (const u of uris) if (u.length < 5) for (const c of ['a', '.', '/', 'b']) uris.push(u + c);
    const templates = literals.flatMap((a) =>
      literals.flatMap((b) => [`${a}{v}${b}`, `${a}{v}${b}{w}.`, `${a}{v}${b}{w}/{z}`]),
    );
    // One assertion for the 262,080 pairs: an expect() each took seconds, past the test timeout under load.
    const differ: string[] = [];
    for (const template of templates) {
      const { match, exec } = compileTemplate(template);
      for (const uri of uris) {
        const ours = JSON.stringify(exec(uri));
        const regexp = JSON.stringify(match.exec(uri)?.slice(1));
        if (ours !== regexp) differ.push(`${template} ${uri}: ${ours} vs ${regexp}`);
      }
    }
    expect(differ).toEqual([]);
    expect(templates.length * uris.length).toBe(262_080);
    // Two variables in one segment: the first takes the longest run, as a greedy group does.
    const { exec } = compileTemplate('file:///docs/{name}.{ext}');
    expect(exec('file:///docs/a.b.c')).toEqual(['a.b', 'c']);
    const long = `file:///docs/${'.'.repeat(200_000)}/`;
    expect(exec(long)).toBeUndefined();
  });

  it('compileTemplate handles level-1 templates only', () => {
    expect(compileTemplate('test://t/{id}/data').match.test('test://t/123/data')).toBe(true);
    expect(compileTemplate('test://t/{id}/data').match.test('test://t/1/2/data')).toBe(false);
    expect(() => compileTemplate('test://t/{+path}')).toThrow(TypeError);
    expect(() => compileTemplate('test://t{?q}')).toThrow(TypeError);
  });
});

describe('InputRequiredResult only from tools/call, prompts/get and resources/read', () => {
  it('is sent from prompts/get and resources/read', async () => {
    for (const [method, params] of [
      ['prompts/get', { name: 'asks' }],
      ['resources/read', { uri: 'test://gated' }],
    ] as const) {
      const r = await send(endpoint, post(rpc(method, params)));
      expect(r.body.result.resultType, method).toBe('input_required');
      expect(r.body.result._meta).toEqual(SERVER_INFO);
    }
  });

  it('is refused with -32021 when the client did not declare the capability, on every MRTR method', async () => {
    const none = { ...META, 'io.modelcontextprotocol/clientCapabilities': {} };
    const r = await send(endpoint, post(rpc('prompts/get', { name: 'asks' }, none)));
    expect([r.status, r.body.error.code]).toEqual([400, -32021]);
  });

  it('turns an input_required answer of any other method into -32603', async () => {
    const sneaky = endpointWith({ complete: () => ask as never });
    const r = await send(
      sneaky,
      post(
        rpc('completion/complete', {
          ref: { type: 'ref/prompt', name: 'greet' },
          argument: { name: 'who', value: '' },
        }),
      ),
    );
    expect([r.status, r.body.error.code]).toEqual([500, -32603]);
  });
});

describe('SSE responses for progress and log notifications', () => {
  async function events(res: Response) {
    const text = await res.text();
    return text
      .split('\n\n')
      .filter((block) => block.startsWith('event: message'))
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)));
  }

  it('streams notifications/progress before the final response when a progressToken is given', async () => {
    const call = rpc('tools/call', { name: 'slow' }, { ...META, progressToken: 'p1' });
    const res = await endpoint(post(call));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const messages = await events(res);
    for (const m of messages) assertValidMessage(m, { method: 'tools/call' });
    expect(messages.map((m) => m.method ?? 'response')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'response',
    ]);
    expect(messages[0].params).toEqual({
      progressToken: 'p1',
      progress: 1,
      total: 2,
      message: 'half',
    });
    expect(messages[2]).toMatchObject({ id: call.id, result: { resultType: 'complete' } });
  });

  it('sends log messages at or above the requested logLevel only, and none without one', async () => {
    const logged = rpc(
      'tools/call',
      { name: 'slow' },
      { ...META, 'io.modelcontextprotocol/logLevel': 'warning' },
    );
    const messages = await events(await endpoint(post(logged)));
    expect(
      messages.filter((m) => m.method === 'notifications/message').map((m) => m.params),
    ).toEqual([{ level: 'error', data: 'almost' }]);
    const silent = await send(endpoint, post(rpc('tools/call', { name: 'slow' })));
    expect(silent.headers.get('content-type')).toBe('application/json');
    expect(silent.body.result.content[0].text).toBe('done');
  });

  it('answers in JSON when the client does not accept text/event-stream', async () => {
    const call = rpc('tools/call', { name: 'slow' }, { ...META, progressToken: 'p2' });
    const r = await send(endpoint, post(call, { accept: 'application/json' }));
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body.result.content[0].text).toBe('done');
  });
});

describe('context.signal', () => {
  function signalEndpoint(run: (ctx: ToolCallContext) => Promise<void> | void) {
    return createMcpEndpoint({
      serverInfo: { name: 'test', version: '1.0.0' },
      authenticate: () => ({ id: 'alice' }),
      tools: [
        {
          name: 'watch',
          description: 'Reads its signal.',
          inputSchema: { type: 'object' },
          handler: async (_args, ctx) => {
            await run(ctx);
            return { resultType: 'complete', content: [] };
          },
        },
      ],
    });
  }
  function aborting(): { request: Request; abort: () => void } {
    const controller = new AbortController();
    const base = post(rpc('tools/call', { name: 'watch' }));
    return {
      request: new Request(base, { signal: controller.signal }),
      abort: () => controller.abort(),
    };
  }

  it('is aborted when the request ended before the handler first read it', async () => {
    let seen: boolean | undefined;
    const { request, abort } = aborting();
    abort();
    await signalEndpoint((ctx) => {
      seen = ctx.signal.aborted;
    })(request);
    expect(seen).toBe(true);
  });

  it('aborts when the request ends after the handler read it', async () => {
    const { request, abort } = aborting();
    let signal: AbortSignal | undefined;
    await signalEndpoint((ctx) => {
      signal = ctx.signal;
      expect(signal.aborted).toBe(false);
      abort();
    })(request);
    expect(signal?.aborted).toBe(true);
  });

  it('can be replaced by the handler, like a plain property', async () => {
    const mine = new AbortController().signal;
    let kept: AbortSignal | undefined;
    await signalEndpoint((ctx) => {
      ctx.signal = mine;
      kept = ctx.signal;
    })(post(rpc('tools/call', { name: 'watch' })));
    expect(kept).toBe(mine);
  });
});
