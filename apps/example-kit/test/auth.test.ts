import { describe, expect, it } from 'vitest';
import { bearerAuthenticator, parseTokens, randomSecret, randomToken } from '../src/index.js';

const req = (authorization?: string) =>
  new Request('http://127.0.0.1/mcp', authorization ? { headers: { authorization } } : {});

describe('parseTokens', () => {
  it('maps tokens to principals', () => {
    expect([...parseTokens(' alice:tok-a , bob:tok-b ')]).toEqual([
      ['tok-a', 'alice'],
      ['tok-b', 'bob'],
    ]);
  });

  it('refuses malformed entries and a token used twice, without echoing the token', () => {
    expect(() => parseTokens('alice')).toThrow(/principal:token/);
    expect(() => parseTokens(':tok')).toThrow(/principal:token/);
    expect(() => parseTokens('alice:')).toThrow(/principal:token/);
    expect(() => parseTokens('alice:same,bob:same')).toThrow(/twice/);
    // An entry without ':' may be a bare token: the message does not show it.
    expect(() => parseTokens('tok-secret-0123')).toThrow(/an entry without ":"/);
    expect(() => parseTokens('tok-secret-0123')).not.toThrow(/tok-secret/);
    for (const after of ['\n', '\r', '\u2028'])
      expect(() => parseTokens(`:${after}tok-secret-0123`)).not.toThrow(/tok-secret/);
  });
});

describe('bearerAuthenticator', () => {
  const authenticate = bearerAuthenticator(parseTokens('alice:tok-a,bob:tok-b'));

  it('resolves the principal of a known bearer token', () => {
    expect(authenticate(req('Bearer tok-b'))).toEqual({ id: 'bob' });
    expect(authenticate(req('bearer tok-a'))).toEqual({ id: 'alice' });
  });

  it('knows nobody without a header, with another scheme, or with an unknown token', () => {
    expect(authenticate(req())).toBeUndefined();
    expect(authenticate(req('Basic dG9rLWE='))).toBeUndefined();
    expect(authenticate(req('Bearer tok-c'))).toBeUndefined();
    expect(authenticate(req('Bearer tok-a extra'))).toBeUndefined();
  });
});

describe('random material', () => {
  it('makes 32-byte secrets and distinct tokens', () => {
    expect(randomSecret()).toHaveLength(32);
    expect(randomToken()).not.toBe(randomToken());
    expect(randomToken()).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
});
