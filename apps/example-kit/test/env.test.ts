import { afterEach, describe, expect, it, vi } from 'vitest';
import { announcePageUsers, parsePageUsers, readServerEnv } from '../src/index.js';

const env = (extra: Record<string, string>) => ({
  MRTR_TOKENS: 'alice:tok-alice-0123456789,bob:tok-bob-0123456789ab',
  MRTR_SECRET: 's',
  ...extra,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('parsePageUsers', () => {
  it('maps principals to page passwords', () => {
    expect([...parsePageUsers(' alice:pw-a-0123456789 , bob:pw:with:colons ')]).toEqual([
      ['alice', 'pw-a-0123456789'],
      ['bob', 'pw:with:colons'],
    ]);
  });

  it('refuses malformed entries and a principal named twice, without echoing a password', () => {
    expect(() => parsePageUsers('alice')).toThrow(/principal:password/);
    expect(() => parsePageUsers(':pw-secret')).toThrow(/principal:password, got ":…"/);
    expect(() => parsePageUsers('alice:')).toThrow(/principal:password/);
    expect(() => parsePageUsers('pw-secret')).toThrow(/without ":"/);
    expect(() => parsePageUsers('pw-secret')).not.toThrow(/pw-secret/);
    expect(() => parsePageUsers('alice:pw-secret-0123456789,alice:other-0123456789')).toThrow(
      /names principal "alice" twice/,
    );
    expect(() => parsePageUsers(' , ')).toThrow(/at least one principal:password/);
  });
});

describe('readServerEnv MRTR_PAGE_USERS', () => {
  it('reads the page passwords when set', () => {
    const read = readServerEnv(
      env({ MRTR_PAGE_USERS: 'alice:page-a-0123456789,bob:page-b-0123456789' }),
      3000,
    );
    expect(read.pageUsersFrom).toBe('MRTR_PAGE_USERS');
    expect([...(read.pageUsers ?? [])]).toEqual([
      ['alice', 'page-a-0123456789'],
      ['bob', 'page-b-0123456789'],
    ]);
  });

  it('throws a clear message on a malformed value', () => {
    expect(() => readServerEnv(env({ MRTR_PAGE_USERS: 'alice' }), 3000)).toThrow(
      /MRTR_PAGE_USERS entry must be principal:password/,
    );
    expect(() =>
      readServerEnv(env({ MRTR_PAGE_USERS: 'alice:a-0123456789ab,alice:b-0123456789ab' }), 3000),
    ).toThrow(/MRTR_PAGE_USERS names principal "alice" twice/);
  });

  it('refuses a page password shorter than 12 characters, naming only the principal', () => {
    const read = (users: string) => () => readServerEnv(env({ MRTR_PAGE_USERS: users }), 3000);
    expect(read('alice:long-pw-12ch,bob:short-pw-11')).toThrow(
      /gives principal "bob" a password shorter than 12 characters/,
    );
    expect(read('alice:long-pw-12ch,bob:short-pw-11')).not.toThrow(/short-pw-11/);
    expect(read('alice:long-pw-12ch,bob:long-pw-12ch')).not.toThrow();
  });

  it('refuses a bearer token of MRTR_TOKENS as a page password, naming only the principal', () => {
    const read = () =>
      readServerEnv(
        env({ MRTR_PAGE_USERS: 'alice:page-a-0123456789,bob:tok-alice-0123456789' }),
        3000,
      );
    expect(read).toThrow(/principal "bob" a bearer token of MRTR_TOKENS/);
    expect(read).not.toThrow(/tok-alice/);
  });

  it('generates a page password per principal, unlike the token, when MRTR_TOKENS is unset too', () => {
    const read = readServerEnv({ MRTR_SECRET: 's' }, 3000);
    expect(read.pageUsersFrom).toBe('generated');
    const password = read.pageUsers?.get('local');
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(password).not.toBe(read.generatedToken);
    expect(read.tokens.has(password as string)).toBe(false);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    announcePageUsers(read, 'http://127.0.0.1:3000');
    expect(log).toHaveBeenCalledWith(
      expect.stringContaining(`principal "local" approval-page password: ${password}`),
    );
    expect(log).toHaveBeenCalledWith(
      expect.stringContaining('sign in at http://127.0.0.1:3000/approve/sign-in'),
    );
  });

  it('takes MRTR_PAGE_USERS for the generated token too', () => {
    const read = readServerEnv(
      { MRTR_SECRET: 's', MRTR_PAGE_USERS: 'local:page-l-0123456789' },
      3000,
    );
    expect(read.pageUsersFrom).toBe('MRTR_PAGE_USERS');
    expect(read.pageUsers?.get('local')).toBe('page-l-0123456789');
  });

  it('falls back to the bearer tokens with MRTR_TOKENS alone, and says so at start', () => {
    const read = readServerEnv(env({}), 3000);
    expect(read.pageUsersFrom).toBe('MRTR_TOKENS');
    expect(read.pageUsers).toBeUndefined();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    announcePageUsers(read, 'http://127.0.0.1:3000');
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/MRTR_PAGE_USERS is not set/));
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/proves nothing a client holding the token could not do/),
    );
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('MRTR_PAGE_USERS=alice:<password>,bob:<password>'),
    );
  });

  it('warns at start of principals with a token but no page password, and the reverse', () => {
    const read = readServerEnv(
      env({ MRTR_PAGE_USERS: 'alice:page-a-0123456789,Bob:page-b-0123456789' }),
      3000,
    );
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    announcePageUsers(read, 'http://127.0.0.1:3000');
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/"bob" of MRTR_TOKENS has no password/),
    );
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/"Bob" of MRTR_PAGE_USERS has no token/),
    );
    expect(warn.mock.calls.join(' ')).not.toMatch(/page-a-0123456789|page-b-0123456789|tok-/);
  });

  it('says nothing at start when MRTR_PAGE_USERS matches MRTR_TOKENS', () => {
    const read = readServerEnv(
      env({ MRTR_PAGE_USERS: 'alice:page-a-0123456789,bob:page-b-0123456789' }),
      3000,
    );
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    announcePageUsers(read, 'http://127.0.0.1:3000');
    expect(log).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });
});
