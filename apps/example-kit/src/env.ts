import { MIN_PAGE_PASSWORD_LENGTH } from '@mrtr/approval-page';
import { APPROVAL_BASE_PATH } from './approvals.js';
import {
  parsePageUsers,
  parseTokens,
  randomSecret,
  randomToken,
  shortPagePassword,
  tokenAsPagePassword,
} from './auth.js';

/** What an example server reads from its environment. */
export interface ServerEnv {
  /** Bearer token → principal id, from `MRTR_TOKENS`, or one random token for `local`. */
  tokens: Map<string, string>;
  /** The random token made for `local` when `MRTR_TOKENS` is unset (print it). */
  generatedToken: string | undefined;
  /**
   * Principal → password of the approval page's sign-in (`pageUsers` of
   * `exampleApprovals`): `MRTR_PAGE_USERS`; unset, a random password per
   * principal when `MRTR_TOKENS` is unset too (print them); else
   * `undefined`: the page falls back to each principal's bearer token (see
   * {@link ServerEnv.pageUsersFrom}).
   */
  pageUsers: Map<string, string> | undefined;
  /**
   * Where {@link ServerEnv.pageUsers} came from: `MRTR_PAGE_USERS`;
   * `generated` (random, for `local`: print them); or `MRTR_TOKENS`, the
   * fallback in which the bearer tokens are the page passwords, so whoever
   * holds a client's token can approve on the page (warn).
   */
  pageUsersFrom: 'MRTR_PAGE_USERS' | 'generated' | 'MRTR_TOKENS';
  /** `MRTR_SECRET`, or a random 32-byte secret (said on stderr, with how to set one). */
  secret: Uint8Array | string;
  /** `MRTR_SECRET_KID`: the key id of `secret` (default `k1`). */
  secretKid: string;
  /**
   * `MRTR_OPEN_SECRET` under `MRTR_OPEN_SECRET_KID` (default `k1`): a key that
   * opens tickets but seals none, for rotating the ticket key.
   */
  openKey: { kid: string; secret: string } | undefined;
  /** `HOST` (default 127.0.0.1). */
  host: string;
  /** `PORT` (default `defaultPort`). */
  port: number;
  /** `DATABASE_URL` as given. */
  databaseUrl: string | undefined;
  /**
   * `MRTR_DB_TIMEOUT_MS`: how long a PostgreSQL server may take to answer one
   * statement, in milliseconds, before the request fails closed (unset: the
   * default of `pgPoolDriver` in `@mrtr/sql`, 10,000).
   */
  databaseTimeoutMs: number | undefined;
  /** `MRTR_AUDIT_FILE`, or `stdout`. */
  auditTo: string;
  /** Whether table `mrtr_audit` is written (`MRTR_AUDIT_TABLE` is not `off`). */
  auditTable: boolean;
  /** `MRTR_PUBLIC_ORIGIN`: the origin people open the approval page at, when not `http://HOST:PORT`. */
  publicOrigin: string | undefined;
  /** How long rows of `mrtr_audit` are kept, in milliseconds: `MRTR_AUDIT_RETENTION_DAYS` (default 30) days. */
  auditRetentionMs: number;
  /**
   * `MRTR_RATE_LIMIT`: tool calls per principal per minute (unset: the
   * server's default), or `off` (`false`), for load tests.
   */
  rateLimit: { limit: number; windowMs: number } | false | undefined;
}

/**
 * Read the conventions every example server shares: `MRTR_TOKENS`,
 * `MRTR_PAGE_USERS`, `MRTR_SECRET` (with `MRTR_SECRET_KID`, `MRTR_OPEN_SECRET`,
 * `MRTR_OPEN_SECRET_KID`), `HOST`, `PORT`, `DATABASE_URL`, `MRTR_AUDIT_FILE`,
 * `MRTR_AUDIT_TABLE`, `MRTR_PUBLIC_ORIGIN`, `MRTR_AUDIT_RETENTION_DAYS`, `MRTR_RATE_LIMIT`,
 * `MRTR_DB_TIMEOUT_MS`.
 * @throws on malformed `MRTR_TOKENS`, malformed `MRTR_PAGE_USERS` or one
 * whose password is a bearer token of `MRTR_TOKENS`, a `PORT` that is not a port number,
 * a `MRTR_PUBLIC_ORIGIN` that is not an http(s) origin, a
 * `MRTR_AUDIT_RETENTION_DAYS` that is not a positive number, or a
 * `MRTR_RATE_LIMIT` that is neither a positive whole number nor `off`, a
 * `MRTR_DB_TIMEOUT_MS` that is not a positive whole number, or an
 * `MRTR_OPEN_SECRET` without `MRTR_SECRET`, with the same key id, or an
 * `MRTR_OPEN_SECRET_KID` without it (key ids and secret lengths are the
 * ticket sealer's to check, at start).
 */
export function readServerEnv(env: NodeJS.ProcessEnv, defaultPort: number): ServerEnv {
  const generatedToken = env.MRTR_TOKENS ? undefined : randomToken();
  const tokens = generatedToken
    ? new Map([[generatedToken, 'local']])
    : parseTokens(env.MRTR_TOKENS as string);
  const page = pageUsersOf(env, tokens, generatedToken !== undefined);
  if (!env.MRTR_SECRET) {
    console.warn(
      'ticket key: random, for this process only (MRTR_SECRET is not set); to keep confirmations across restarts and instances, set MRTR_SECRET=$(openssl rand -base64 32)',
    );
  }
  const port = env.PORT ? Number(env.PORT) : defaultPort;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number, got ${env.PORT}`);
  const publicOrigin = env.MRTR_PUBLIC_ORIGIN || undefined;
  if (publicOrigin !== undefined) {
    const parsed = URL.canParse(publicOrigin) ? new URL(publicOrigin) : undefined;
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== publicOrigin)
      throw new Error(
        `MRTR_PUBLIC_ORIGIN must be an origin such as https://ops.example.com (scheme, host, port; no path), got ${publicOrigin}`,
      );
  }
  const secretKid = env.MRTR_SECRET_KID || 'k1';
  if (env.MRTR_OPEN_SECRET_KID && !env.MRTR_OPEN_SECRET)
    throw new Error('MRTR_OPEN_SECRET_KID is set without MRTR_OPEN_SECRET');
  const openKey = env.MRTR_OPEN_SECRET
    ? { kid: env.MRTR_OPEN_SECRET_KID || 'k1', secret: env.MRTR_OPEN_SECRET }
    : undefined;
  if (openKey && !env.MRTR_SECRET)
    throw new Error('MRTR_OPEN_SECRET is set without MRTR_SECRET, the key that seals');
  if (openKey && openKey.kid === secretKid)
    throw new Error(
      `MRTR_OPEN_SECRET_KID (${openKey.kid}) must differ from MRTR_SECRET_KID (${secretKid}): each key id names one secret (set MRTR_SECRET_KID=k2 for a new key)`,
    );
  const days = env.MRTR_AUDIT_RETENTION_DAYS ? Number(env.MRTR_AUDIT_RETENTION_DAYS) : 30;
  // At most 1,000 years (MAX_AUDIT_RETENTION_MS of @mrtr/audit-postgres): past it every sweep fails.
  if (!(days > 0) || !(days <= 365_250))
    throw new Error(
      `MRTR_AUDIT_RETENTION_DAYS must be a positive number of days, at most 365250 (1,000 years), got ${env.MRTR_AUDIT_RETENTION_DAYS}`,
    );
  const rate = env.MRTR_RATE_LIMIT;
  const perMinute = rate && rate !== 'off' ? Number(rate) : undefined;
  if (perMinute !== undefined && !(Number.isSafeInteger(perMinute) && perMinute > 0))
    throw new Error(
      `MRTR_RATE_LIMIT must be a positive whole number of calls per minute or off, got ${rate}`,
    );
  const dbTimeout = env.MRTR_DB_TIMEOUT_MS ? Number(env.MRTR_DB_TIMEOUT_MS) : undefined;
  if (dbTimeout !== undefined && !(Number.isSafeInteger(dbTimeout) && dbTimeout > 0))
    throw new Error(
      `MRTR_DB_TIMEOUT_MS must be a positive whole number of milliseconds, got ${env.MRTR_DB_TIMEOUT_MS}`,
    );
  return {
    databaseTimeoutMs: dbTimeout,
    rateLimit:
      rate === 'off' ? false : perMinute ? { limit: perMinute, windowMs: 60_000 } : undefined,
    tokens,
    generatedToken,
    pageUsers: page.users,
    pageUsersFrom: page.from,
    publicOrigin,
    secret: env.MRTR_SECRET || randomSecret(),
    secretKid,
    openKey,
    host: env.HOST ?? '127.0.0.1',
    port,
    databaseUrl: env.DATABASE_URL,
    auditTo: env.MRTR_AUDIT_FILE || 'stdout',
    auditTable: env.MRTR_AUDIT_TABLE !== 'off',
    auditRetentionMs: days * 24 * 60 * 60 * 1000,
  };
}

/**
 * The approval page's users: `MRTR_PAGE_USERS` (no password a bearer token);
 * unset, random passwords when the tokens are random too, else none (the
 * page falls back to the tokens).
 */
function pageUsersOf(
  env: NodeJS.ProcessEnv,
  tokens: Map<string, string>,
  generated: boolean,
): { users: Map<string, string> | undefined; from: ServerEnv['pageUsersFrom'] } {
  if (env.MRTR_PAGE_USERS) {
    const users = parsePageUsers(env.MRTR_PAGE_USERS);
    const principal = tokenAsPagePassword(users, tokens);
    if (principal !== undefined)
      throw new Error(
        `MRTR_PAGE_USERS gives principal "${principal}" a bearer token of MRTR_TOKENS as its password: whoever holds that token could approve on the page; give each person a password of their own`,
      );
    const short = shortPagePassword(users);
    if (short !== undefined)
      throw new Error(
        `MRTR_PAGE_USERS gives principal "${short}" a password shorter than ${MIN_PAGE_PASSWORD_LENGTH} characters: give each person a long random one (openssl rand -base64 18)`,
      );
    return { users, from: 'MRTR_PAGE_USERS' };
  }
  if (!generated) return { users: undefined, from: 'MRTR_TOKENS' };
  const principals = [...new Set(tokens.values())];
  return { users: new Map(principals.map((p) => [p, randomToken()])), from: 'generated' };
}

/** `"a", "b"` for a warning. */
const list = (names: string[]) => names.map((n) => JSON.stringify(n)).join(', ');

/**
 * Say at start how people sign in to the approval page of `origin`: the
 * generated page passwords on stdout (beside the generated token), or, when
 * the bearer tokens are the page passwords, a warning on stderr with how to
 * set `MRTR_PAGE_USERS`. With `MRTR_PAGE_USERS`, a warning for each
 * principal of `MRTR_TOKENS` without a page password and each page user
 * without a token; nothing when they match.
 */
export function announcePageUsers(env: ServerEnv, origin: string): void {
  const signIn = `${origin.replace(/\/$/, '')}${APPROVAL_BASE_PATH}/sign-in`;
  if (env.pageUsersFrom === 'generated') {
    for (const [principal, password] of env.pageUsers ?? [])
      console.log(
        `principal "${principal}" approval-page password: ${password}\n  (sign in at ${signIn}; not the token: keep it out of the MCP client)`,
      );
  } else if (env.pageUsersFrom === 'MRTR_PAGE_USERS') {
    // A mistake here fails only later, at an approval: say it now.
    const acting = new Set(env.tokens.values());
    const paged = new Set(env.pageUsers?.keys());
    const without = [...acting].filter((p) => !paged.has(p));
    const idle = [...paged].filter((p) => !acting.has(p));
    if (without.length > 0)
      console.warn(
        `warning: ${list(without)} of MRTR_TOKENS ${without.length === 1 ? 'has' : 'have'} no password in MRTR_PAGE_USERS: their URL-mode approvals cannot be given on the approval page`,
      );
    if (idle.length > 0)
      console.warn(
        `warning: ${list(idle)} of MRTR_PAGE_USERS ${idle.length === 1 ? 'has' : 'have'} no token in MRTR_TOKENS: no MCP client acts as ${idle.length === 1 ? 'it' : 'them'}, so no approval will ever be asked of ${idle.length === 1 ? 'it' : 'them'} (principals are compared exactly, case and all)`,
      );
  } else if (env.pageUsersFrom === 'MRTR_TOKENS') {
    console.warn(
      "warning: MRTR_PAGE_USERS is not set, so the approval page takes each principal's bearer token of MRTR_TOKENS as its password: " +
        'a URL-mode approval then proves nothing a client holding the token could not do itself. ' +
        'Give each person a page password the MCP client does not hold: MRTR_PAGE_USERS=alice:<password>,bob:<password> (e.g. openssl rand -base64 24 for each).',
    );
  }
}

/**
 * Run `main`, then stop cleanly on SIGINT/SIGTERM with the `stop` it returns;
 * a failure to start prints `<name> failed to start: <reason>` and exits 1.
 */
export function runServer(name: string, main: () => Promise<() => Promise<void>>): void {
  main().then(
    (stop) => {
      const end = () => {
        stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', end);
      process.once('SIGTERM', end);
    },
    (error: unknown) => {
      console.error(
        `${name} failed to start: ${error instanceof Error ? error.message : String(error)}`,
      );
      process.exit(1);
    },
  );
}
