import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertValidMessage, SpecSchemaError, validateAs, validateMessage } from '../src/index.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const EXAMPLES = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'packages',
  'wire',
  'test',
  'fixtures',
  '2026-07-28',
);

describe('validateMessage picks the definition a message must match', () => {
  it('a request by its method: tools/call needs params._meta and name', () => {
    const good = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'x', _meta: META },
    };
    expect(validateMessage(good)).toEqual({
      ok: true,
      definitions: ['CallToolRequest'],
      errors: [],
    });
    const noMeta = validateMessage({ ...good, params: { name: 'x' } });
    expect(noMeta.ok).toBe(false);
    expect(noMeta.errors.join()).toContain('_meta');
    const badResponses = validateMessage({
      ...good,
      params: { name: 'x', _meta: META, inputResponses: { k: { action: 'maybe' } } },
    });
    expect(badResponses.ok).toBe(false);
  });

  it('an unknown method falls back to JSONRPCRequest', () => {
    expect(validateMessage({ jsonrpc: '2.0', id: 1, method: 'x/y' }).definitions).toEqual([
      'JSONRPCRequest',
    ]);
  });

  it('an error response by its code, with data where the schema requires it', () => {
    const version = {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32022, message: 'no', data: { requested: 'x', supported: ['2026-07-28'] } },
    };
    expect(validateMessage(version).definitions).toEqual(['UnsupportedProtocolVersionError']);
    expect(validateMessage(version).ok).toBe(true);
    expect(validateMessage({ ...version, error: { code: -32022, message: 'no' } }).ok).toBe(false);
    const parse = validateMessage({ jsonrpc: '2.0', error: { code: -32700, message: 'bad' } });
    expect(parse).toMatchObject({ ok: true, definitions: ['JSONRPCErrorResponse', 'ParseError'] });
  });

  it('a result response by the method it answers', () => {
    const list = { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', tools: [] } };
    const r = validateMessage(list, { method: 'tools/list' });
    expect(r.definitions).toEqual(['ListToolsResultResponse', 'ListToolsResult']);
    expect(r.ok).toBe(false); // ttlMs and cacheScope are required
    const cached = { ...list, result: { ...list.result, ttlMs: 0, cacheScope: 'private' } };
    expect(validateMessage(cached, { method: 'tools/list' }).ok).toBe(true);
    expect(validateMessage({ jsonrpc: '2.0', id: 1, result: {} }).ok).toBe(false); // no resultType
  });

  it('checks the result a response of a method with input_required claims to be', () => {
    // Its ResultResponse's result is anyOf InputRequiredResult (little more than a string
    // resultType) or the method's own result: either alone lets almost anything through.
    const bodies: [string, Record<string, unknown>][] = [
      ['prompts/get', { resultType: 'complete', messages: 'not an array' }],
      ['tools/call', { resultType: 'complete', content: 7 }],
      ['resources/read', { resultType: 'complete', contents: [{ uri: ' test://a', text: 'x' }] }],
      ['tools/call', { resultType: 'input_required', inputRequests: 'x' }],
    ];
    for (const [method, result] of bodies) {
      const r = validateMessage({ jsonrpc: '2.0', id: 1, result }, { method });
      expect([method, r.ok]).toEqual([method, false]);
    }
    const done = { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] };
    expect(
      validateMessage({ jsonrpc: '2.0', id: 1, result: done }, { method: 'tools/call' }),
    ).toMatchObject({
      ok: true,
      definitions: ['CallToolResultResponse', 'CallToolResult'],
    });
  });

  it('refuses batches and non-objects', () => {
    for (const bad of [[], null, 'x', 1]) expect(validateMessage(bad).ok).toBe(false);
  });

  it('assertValidMessage throws a SpecSchemaError naming the violation', () => {
    expect(() => assertValidMessage({ jsonrpc: '2.0', id: null, method: 'tools/list' })).toThrow(
      SpecSchemaError,
    );
    expect(() => validateAs('NoSuchType', {})).toThrow(/NoSuchType/);
  });

  it('every official example of a full message validates', () => {
    const types = readdirSync(EXAMPLES).filter((t) =>
      /(Request|Notification|Error|Response)$/.test(t),
    );
    let checked = 0;
    for (const type of types) {
      for (const file of readdirSync(join(EXAMPLES, type))) {
        const message = JSON.parse(readFileSync(join(EXAMPLES, type, file), 'utf8'));
        if (!('jsonrpc' in message)) continue; // input requests (ListRootsRequest…) are not JSON-RPC messages
        expect(validateAs(type, message).errors, `${type}/${file}`).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(25);
  });
});
