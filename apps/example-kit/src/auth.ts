import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { longEnoughPagePassword } from '@mrtr/approval-page';
import type { Principal } from '@mrtr/server';

/**
 * The `principal:secret` entries of a comma-separated variable, trimmed,
 * empty entries skipped. A secret may hold `:`, not `,`.
 * @throws on an entry without a principal or a secret; the message never
 * echoes a secret (an entry without `:` may be a bare one).
 */
function entries(variable: string, value: string, secret: string): [string, string][] {
  const out: [string, string][] = [];
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = entry.indexOf(':');
    const principal = entry.slice(0, at).trim();
    const kept = entry.slice(at + 1).trim();
    if (at <= 0 || !principal || !kept) {
      // Only what stands before the ':' (a secret may follow a line break).
      const shown = at < 0 ? 'an entry without ":"' : `"${entry.slice(0, at)}:…"`;
      throw new Error(`${variable} entry must be principal:${secret}, got ${shown}`);
    }
    out.push([principal, kept]);
  }
  return out;
}

/**
 * Parse `MRTR_TOKENS` (`alice:<token>,bob:<token>`) into token → principal id.
 * @throws on an entry without a principal or a token, or a token used twice.
 */
export function parseTokens(value: string): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const [principal, token] of entries('MRTR_TOKENS', value, 'token')) {
    if (tokens.has(token)) throw new Error('MRTR_TOKENS uses one token twice');
    tokens.set(token, principal);
  }
  return tokens;
}

/**
 * Parse `MRTR_PAGE_USERS` (`alice:<password>,bob:<password>`) into principal →
 * password of the approval page's sign-in: passwords of the people, not the
 * bearer tokens their MCP clients hold.
 * @throws on an entry without a principal or a password, a principal named
 * twice, or no entry at all; the message never echoes a password.
 */
export function parsePageUsers(value: string): Map<string, string> {
  const users = new Map<string, string>();
  for (const [principal, password] of entries('MRTR_PAGE_USERS', value, 'password')) {
    if (users.has(principal))
      throw new Error(`MRTR_PAGE_USERS names principal "${principal}" twice`);
    users.set(principal, password);
  }
  if (users.size === 0)
    throw new Error('MRTR_PAGE_USERS must name at least one principal:password');
  return users;
}

/** The first principal of `users` whose page password `@mrtr/approval-page` refuses as too short, if any. */
export function shortPagePassword(users: ReadonlyMap<string, string>): string | undefined {
  for (const [principal, password] of users)
    if (!longEnoughPagePassword(password)) return principal;
  return undefined;
}

/**
 * The principal of `users` (principal → page password) whose password is a
 * bearer token of `tokens` (token → principal), if any: whoever holds that
 * token could approve on the page.
 */
export function tokenAsPagePassword(
  users: ReadonlyMap<string, string>,
  tokens: ReadonlyMap<string, string>,
): string | undefined {
  for (const [principal, password] of users) if (tokens.has(password)) return principal;
  return undefined;
}

const sha = (s: string) => createHash('sha256').update(s).digest();

/**
 * An `authenticate` hook for `@mrtr/server`: `Authorization: Bearer <token>`
 * → `{ id }`. Tokens are compared as SHA-256 digests in constant time, and
 * every entry is compared, so timing says nothing of which token matched.
 * @returns the principal, or `undefined` (the endpoint then answers 401).
 */
export function bearerAuthenticator(tokens: Map<string, string>) {
  const table = [...tokens].map(([token, id]) => ({ digest: sha(token), id }));
  return (request: Request): Principal | undefined => {
    const m = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '');
    if (!m) return undefined;
    const presented = sha(m[1] as string);
    let found: string | undefined;
    for (const { digest, id } of table) if (timingSafeEqual(digest, presented)) found = id;
    return found ? { id: found } : undefined;
  };
}

/** A random 32-byte ticket secret, for a server started without `MRTR_SECRET`. */
export function randomSecret(): Uint8Array {
  return randomBytes(32);
}

/** A random bearer token (24 bytes, base64url). */
export function randomToken(): string {
  return randomBytes(24).toString('base64url');
}
