import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BooleanSchemaSchema,
  CallToolRequestParamsSchema,
  CallToolResultSchema,
  type ClientCapabilities,
  ClientCapabilitiesSchema,
  ElicitRequestFormParamsSchema,
  ElicitRequestSchema,
  ElicitRequestURLParamsSchema,
  ElicitResultSchema,
  ErrorCode,
  errorResponse,
  GetPromptRequestParamsSchema,
  InputRequestSchema,
  InputRequestsSchema,
  InputRequiredResultSchema,
  InputResponsesSchema,
  JSONRPCErrorObjectSchema,
  JSONRPCRequestSchema,
  McpError,
  MetaKey,
  missingCapabilityError,
  NumberSchemaSchema,
  PROTOCOL_VERSION,
  PrimitiveSchemaDefinitionSchema,
  ReadResourceRequestParamsSchema,
  RequestedSchemaSchema,
  RequestIdSchema,
  StringSchemaSchema,
  supportsFormElicitation,
  supportsUrlElicitation,
  TitledMultiSelectEnumSchemaSchema,
  TitledSingleSelectEnumSchemaSchema,
  textResult,
  UntitledMultiSelectEnumSchemaSchema,
  UntitledSingleSelectEnumSchemaSchema,
  validateFormContent,
} from '../src/index.js';

/** Official 2026-07-28 examples, copied unchanged into test/fixtures (see its README). */
const FIXTURES = join(import.meta.dirname, 'fixtures', '2026-07-28');

/** Every example of one schema type, as [file name, parsed JSON]; never empty. */
function examples(type: string): [string, unknown][] {
  const dir = join(FIXTURES, type);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  expect(files.length, `examples of ${type}`).toBeGreaterThan(0);
  return files.map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8'))]);
}

function example(type: string, file: string): any {
  return JSON.parse(readFileSync(join(FIXTURES, type, file), 'utf8'));
}

describe('official examples', () => {
  it('CallToolRequest: the envelope and its params parse, keeping every value', () => {
    const request = example('CallToolRequest', 'call-tool-request.json');
    const envelope = JSONRPCRequestSchema.parse(request);
    expect(envelope).toMatchObject({
      jsonrpc: '2.0',
      id: 'call-tool-example',
      method: 'tools/call',
    });
    const params = CallToolRequestParamsSchema.parse(envelope.params);
    expect(params).toEqual(request.params);
    expect(params.name).toBe('get_weather');
    expect(params.arguments).toEqual({ location: 'New York' });
    expect(params._meta?.[MetaKey.protocolVersion]).toBe(PROTOCOL_VERSION);
    expect(params._meta?.[MetaKey.clientInfo]).toEqual({ name: 'ExampleClient', version: '1.0.0' });
    // This client declared no capabilities: a gated tool must not ask it a form.
    expect(supportsFormElicitation(params._meta?.[MetaKey.clientCapabilities])).toBe(false);
  });

  it.each(
    examples('CallToolRequestParams'),
  )('CallToolRequestParams %s parses unchanged', (_f, data) => {
    expect(CallToolRequestParamsSchema.parse(data)).toEqual(data);
  });

  it('keeps progressToken and other unknown _meta keys', () => {
    const params = CallToolRequestParamsSchema.parse(
      example('CallToolRequestParams', 'tool-call-params-with-progress-token.json'),
    );
    expect(params._meta?.progressToken).toBe('oivaizmir');
  });

  it.each(
    examples('InputRequiredResult'),
  )('InputRequiredResult %s parses unchanged', (_f, data) => {
    const parsed = InputRequiredResultSchema.parse(data);
    expect(parsed).toEqual(data);
    expect(parsed.resultType).toBe('input_required');
  });

  it('InputRequiredResult: the elicitation and sampling requests are typed by method', () => {
    const parsed = InputRequiredResultSchema.parse(
      example(
        'InputRequiredResult',
        'input-required-result-with-elicitation-and-sampling-and-request-state.json',
      ),
    );
    expect(parsed.requestState).toBe('eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0');
    const login = parsed.inputRequests?.github_login;
    expect(login?.method).toBe('elicitation/create');
    if (login?.method === 'elicitation/create' && 'requestedSchema' in login.params) {
      expect(login.params.requestedSchema.required).toEqual(['name']);
    } else {
      throw new Error('github_login is not a form elicitation');
    }
    expect(parsed.inputRequests?.capital_of_france?.method).toBe('sampling/createMessage');
  });

  it.each(examples('ElicitResult'))('ElicitResult %s parses unchanged', (_f, data) => {
    expect(ElicitResultSchema.parse(data)).toEqual(data);
  });

  it.each(examples('ElicitRequest'))('ElicitRequest %s parses unchanged', (_f, data) => {
    expect(ElicitRequestSchema.parse(data)).toEqual(data);
    expect(InputRequestSchema.parse(data)).toEqual(data);
  });

  it.each(
    examples('ElicitRequestFormParams'),
  )('ElicitRequestFormParams %s parses unchanged', (_f, data) => {
    expect(ElicitRequestFormParamsSchema.parse(data)).toEqual(data);
  });

  it.each(
    examples('ElicitRequestURLParams'),
  )('ElicitRequestURLParams %s parses, and not as a form', (_f, data) => {
    expect(ElicitRequestURLParamsSchema.parse(data)).toEqual(data);
    expect(ElicitRequestFormParamsSchema.safeParse(data).success).toBe(false);
  });

  it.each(examples('ClientCapabilities'))('ClientCapabilities %s parses unchanged', (_f, data) => {
    expect(ClientCapabilitiesSchema.parse(data)).toEqual(data);
  });

  it('form is the declared one or implied by the empty object only, never by an unknown mode', () => {
    const form = (elicitation: unknown) =>
      supportsFormElicitation({ elicitation } as Parameters<typeof supportsFormElicitation>[0]);
    expect(form({})).toBe(true);
    expect(form({ form: {} })).toBe(true);
    expect(form({ form: {}, url: {} })).toBe(true);
    expect(form({ url: {} })).toBe(false);
    expect(form({ FORM: {} })).toBe(false);
    expect(form({ 'example.com/voice': {} })).toBe(false);
    expect(form(undefined)).toBe(false);
  });

  it('a declaration that is no object declares nothing (helper-160 L6)', () => {
    const caps = (elicitation: unknown) =>
      ({ elicitation }) as Parameters<typeof supportsFormElicitation>[0];
    for (const e of [{ form: false }, { form: null }, { form: [] }, [], { url: {}, form: 0 }])
      expect(supportsFormElicitation(caps(e)), JSON.stringify(e)).toBe(false);
    for (const e of [{ url: false }, { url: null }, { url: [] }, [{ url: {} }]])
      expect(supportsUrlElicitation(caps(e)), JSON.stringify(e)).toBe(false);
    expect(supportsUrlElicitation(caps({ url: {} }))).toBe(true);
  });

  it('a mode held by a prototype (a parser that assigned "__proto__") is not declared', () => {
    const caps = (elicitation: unknown) =>
      ({ elicitation }) as Parameters<typeof supportsFormElicitation>[0];
    const behindForm = Object.assign(Object.create({ form: {} }), { url: {} });
    expect(supportsFormElicitation(caps(behindForm))).toBe(false);
    expect(supportsUrlElicitation(caps(Object.create({ url: {} })))).toBe(false);
    expect(supportsUrlElicitation(Object.create({ elicitation: { url: {} } }))).toBe(false);
    expect(supportsUrlElicitation(caps({ url: {} }))).toBe(true);
  });

  it('ClientCapabilities examples: only the two elicitation ones allow a form', () => {
    const verdicts = Object.fromEntries(
      examples('ClientCapabilities').map(([f, data]) => [
        f,
        supportsFormElicitation(ClientCapabilitiesSchema.parse(data)),
      ]),
    );
    expect(verdicts).toEqual({
      'elicitation-form-and-url-mode-support.json': true,
      'elicitation-form-only-implicit.json': true,
      'extensions-ui-mime-types.json': false,
      'roots-minimum-baseline-support.json': false,
      'sampling-context-inclusion-support-deprecated.json': false,
      'sampling-minimum-baseline-support.json': false,
      'sampling-tool-use-support.json': false,
    });
  });

  it.each(examples('InputRequests'))('InputRequests %s parses unchanged', (_f, data) => {
    expect(InputRequestsSchema.parse(data)).toEqual(data);
  });

  it('InputResponses answer the InputRequests example: the elicitation answer validates against its form', () => {
    const requests = InputRequestsSchema.parse(
      example('InputRequests', 'elicitation-and-sampling-input-requests.json'),
    );
    const responses = InputResponsesSchema.parse(
      example('InputResponses', 'elicitation-and-sampling-input-responses.json'),
    );
    const login = requests.github_login;
    if (login?.method !== 'elicitation/create' || !('requestedSchema' in login.params)) {
      throw new Error('github_login is not a form elicitation');
    }
    const answer = ElicitResultSchema.parse(responses.github_login);
    expect(answer.action).toBe('accept');
    expect(validateFormContent(login.params.requestedSchema, answer.content)).toEqual({
      ok: true,
      value: { name: 'octocat' },
    });
    // A sampling answer is not an ElicitResult.
    expect(ElicitResultSchema.safeParse(responses.capital_of_france).success).toBe(false);
  });

  it('ElicitResult form examples validate against the matching ElicitRequestFormParams examples', () => {
    const pairs: [string, string][] = [
      ['elicit-single-field.json', 'input-single-field.json'],
      ['elicit-multiple-fields.json', 'input-multiple-fields.json'],
    ];
    for (const [request, result] of pairs) {
      const params = ElicitRequestFormParamsSchema.parse(
        example('ElicitRequestFormParams', request),
      );
      const answer = ElicitResultSchema.parse(example('ElicitResult', result));
      expect(validateFormContent(params.requestedSchema, answer.content)).toEqual({
        ok: true,
        value: answer.content,
      });
    }
    const multi = ElicitRequestFormParamsSchema.parse(
      example('ElicitRequestFormParams', 'elicit-multiple-fields.json'),
    );
    const under18 = validateFormContent(multi.requestedSchema, {
      name: 'Mona',
      email: 'octocat@github.com',
      age: 17,
    });
    expect(under18.ok ? [] : under18.issues.map((i) => i.field)).toEqual(['age']);
  });

  it.each([
    ['StringSchema', StringSchemaSchema],
    ['NumberSchema', NumberSchemaSchema],
    ['BooleanSchema', BooleanSchemaSchema],
    ['UntitledSingleSelectEnumSchema', UntitledSingleSelectEnumSchemaSchema],
    ['TitledSingleSelectEnumSchema', TitledSingleSelectEnumSchemaSchema],
    ['UntitledMultiSelectEnumSchema', UntitledMultiSelectEnumSchemaSchema],
    ['TitledMultiSelectEnumSchema', TitledMultiSelectEnumSchemaSchema],
  ] as const)('%s examples parse, and their default is a valid answer', (type, schema) => {
    for (const [, data] of examples(type)) {
      expect(schema.parse(data)).toEqual(data);
      const field = PrimitiveSchemaDefinitionSchema.parse(data);
      expect(field).toEqual(data);
      const form = RequestedSchemaSchema.parse({ type: 'object', properties: { f: field } });
      const value = (data as { default: unknown }).default;
      expect(validateFormContent(form, { f: value })).toEqual({ ok: true, value: { f: value } });
    }
  });

  it.each(examples('CallToolResult'))('CallToolResult %s parses unchanged', (_f, data) => {
    expect(CallToolResultSchema.parse(data)).toEqual(data);
  });

  it.each(
    examples('GetPromptRequestParams'),
  )('GetPromptRequestParams %s parses unchanged', (_f, data) => {
    expect(GetPromptRequestParamsSchema.parse(data)).toEqual(data);
  });

  it.each(
    examples('ReadResourceRequest'),
  )('ReadResourceRequest %s params parse unchanged', (_f, data) => {
    const envelope = JSONRPCRequestSchema.parse(data);
    expect(ReadResourceRequestParamsSchema.parse(envelope.params)).toEqual((data as any).params);
  });

  it.each(
    examples('MissingRequiredClientCapabilityError'),
  )('MissingRequiredClientCapabilityError %s', (_f, data) => {
    const error = JSONRPCErrorObjectSchema.parse((data as any).error);
    expect(error.code).toBe(ErrorCode.MissingRequiredClientCapability);
    expect(error.code).toBe(-32021);
  });
});

describe('schemas reject what the protocol does not allow', () => {
  it('InputRequiredResult needs resultType input_required and inputRequests or requestState', () => {
    expect(InputRequiredResultSchema.safeParse({ resultType: 'input_required' }).success).toBe(
      false,
    );
    expect(
      InputRequiredResultSchema.safeParse({ resultType: 'complete', requestState: 'x' }).success,
    ).toBe(false);
    expect(InputRequiredResultSchema.safeParse({ requestState: 'x' }).success).toBe(false);
    expect(
      InputRequiredResultSchema.safeParse({ resultType: 'input_required', requestState: 42 })
        .success,
    ).toBe(false);
    expect(
      InputRequiredResultSchema.safeParse({
        resultType: 'input_required',
        inputRequests: { k: { method: 'tools/call', params: {} } },
      }).success,
    ).toBe(false);
    expect(
      InputRequiredResultSchema.safeParse({ resultType: 'input_required', requestState: '' })
        .success,
    ).toBe(true);
    expect(
      InputRequiredResultSchema.safeParse({ resultType: 'input_required', inputRequests: {} })
        .success,
    ).toBe(true);
  });

  it('ElicitResult needs a known action and flat content', () => {
    for (const bad of [
      {},
      { action: 'accepted' },
      { action: 'ACCEPT' },
      { action: 'accept', content: 'yes' },
      { action: 'accept', content: { a: { nested: true } } },
      { action: 'accept', content: { a: null } },
      { action: 'accept', content: { a: [1, 2] } },
      null,
      'accept',
    ]) {
      expect(ElicitResultSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    for (const action of ['accept', 'decline', 'cancel']) {
      expect(ElicitResultSchema.safeParse({ action }).success).toBe(true);
    }
  });

  it('CallToolRequestParams needs a string name and object arguments', () => {
    const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    expect(CallToolRequestParamsSchema.safeParse({ _meta, name: 'x' }).success).toBe(true);
    expect(CallToolRequestParamsSchema.safeParse({ _meta }).success).toBe(false);
    expect(CallToolRequestParamsSchema.safeParse({ _meta, name: 1 }).success).toBe(false);
    expect(
      CallToolRequestParamsSchema.safeParse({ _meta, name: 'x', arguments: ['a'] }).success,
    ).toBe(false);
    expect(
      CallToolRequestParamsSchema.safeParse({ _meta, name: 'x', requestState: 7 }).success,
    ).toBe(false);
    // `_meta` is required on every request (basic/index, "Per-request protocol fields").
    expect(CallToolRequestParamsSchema.safeParse({ name: 'x' }).success).toBe(false);
    for (const inputResponses of [null, { k: 12345 }, { k: null }, { k: ['accept'] }]) {
      const r = CallToolRequestParamsSchema.safeParse({ _meta, name: 'x', inputResponses });
      expect(r.success, JSON.stringify(inputResponses)).toBe(false);
    }
    const retry = CallToolRequestParamsSchema.parse({
      _meta,
      name: 'notes_delete',
      arguments: { title: 'Roadmap' },
      requestState: 'v1.k1.abc',
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
    });
    expect(retry.requestState).toBe('v1.k1.abc');
    expect(retry.inputResponses).toEqual({ confirm: { action: 'accept', content: { ok: true } } });
  });

  it('a form requestedSchema must be a flat object of primitive fields', () => {
    const ok = { type: 'object', properties: { a: { type: 'string' } } };
    expect(RequestedSchemaSchema.safeParse(ok).success).toBe(true);
    for (const bad of [
      { type: 'array', properties: {} },
      { type: 'object' },
      { type: 'object', properties: { a: { type: 'object', properties: {} } } },
      { type: 'object', properties: { a: { type: 'string', format: 'ipv4' } } },
      { type: 'object', properties: { a: { type: 'array', items: { type: 'number' } } } },
    ]) {
      expect(RequestedSchemaSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('JSON-RPC: ids are strings or integers, params are an object', () => {
    expect(RequestIdSchema.safeParse('a').success).toBe(true);
    expect(RequestIdSchema.safeParse(7).success).toBe(true);
    for (const bad of [null, 1.5, true, undefined])
      expect(RequestIdSchema.safeParse(bad).success).toBe(false);
    expect(
      JSONRPCRequestSchema.safeParse({ jsonrpc: '2.0', id: 1, method: 'x', params: [1] }).success,
    ).toBe(false);
    expect(JSONRPCRequestSchema.safeParse({ jsonrpc: '1.0', id: 1, method: 'x' }).success).toBe(
      false,
    );
    expect(JSONRPCRequestSchema.safeParse({ jsonrpc: '2.0', id: null, method: 'x' }).success).toBe(
      false,
    );
  });
});

describe('supportsFormElicitation / supportsUrlElicitation', () => {
  it.each<[string, ClientCapabilities | undefined, boolean, boolean]>([
    ['undefined', undefined, false, false],
    ['{}', {}, false, false],
    ['{elicitation:{}}', { elicitation: {} }, true, false],
    ['{elicitation:{form:{}}}', { elicitation: { form: {} } }, true, false],
    ['{elicitation:{url:{}}}', { elicitation: { url: {} } }, false, true],
    ['{elicitation:{form:{},url:{}}}', { elicitation: { form: {}, url: {} } }, true, true],
    ['{sampling:{}}', { sampling: {} }, false, false],
  ])('%s → form %s, url %s', (_label, caps, form, url) => {
    expect(supportsFormElicitation(caps)).toBe(form);
    expect(supportsUrlElicitation(caps)).toBe(url);
  });

  it('is false for an elicitation member that is not an object', () => {
    expect(supportsFormElicitation({ elicitation: null } as unknown as ClientCapabilities)).toBe(
      false,
    );
    expect(supportsFormElicitation({ elicitation: true } as unknown as ClientCapabilities)).toBe(
      false,
    );
  });
});

describe('errors and results', () => {
  it('missingCapabilityError carries -32021 and data.requiredCapabilities', () => {
    const required = { elicitation: { form: {} } };
    const error = missingCapabilityError(required);
    expect(error).toEqual({
      code: -32021,
      message: expect.any(String),
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
    expect(JSONRPCErrorObjectSchema.parse(error)).toEqual(error);
    expect(missingCapabilityError(required, 'custom').message).toBe('custom');
  });

  it('errorResponse omits id and data when absent', () => {
    expect(errorResponse(undefined, ErrorCode.ParseError, 'bad json')).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'bad json' },
    });
    const withId = errorResponse(5, ErrorCode.InvalidParams, 'bad', { field: 'name' });
    expect(withId).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32602, message: 'bad', data: { field: 'name' } },
    });
    expect(Object.hasOwn(errorResponse('a', -32603, 'x'), 'id')).toBe(true);
    expect(Object.hasOwn(errorResponse(undefined, -32603, 'x'), 'id')).toBe(false);
    expect(Object.hasOwn(errorResponse(1, -32603, 'x').error, 'data')).toBe(false);
  });

  it('McpError becomes its JSON-RPC error object', () => {
    const e = new McpError(ErrorCode.HeaderMismatch, 'header and body disagree', {
      header: 'Mcp-Method',
    });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('McpError');
    expect(e.toErrorObject()).toEqual({
      code: -32020,
      message: 'header and body disagree',
      data: { header: 'Mcp-Method' },
    });
    expect(new McpError(-32022, 'v').toErrorObject()).toEqual({ code: -32022, message: 'v' });
  });

  it('textResult is a complete result that CallToolResultSchema accepts', () => {
    const r = textResult('Deleted.', { structuredContent: { deleted: 'n1' } });
    expect(r).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Deleted.' }],
      isError: false,
      structuredContent: { deleted: 'n1' },
    });
    expect(CallToolResultSchema.parse(r)).toEqual(r);
    expect(textResult('no', { isError: true }).isError).toBe(true);
    expect(Object.hasOwn(textResult('plain'), 'structuredContent')).toBe(false);
  });
});
