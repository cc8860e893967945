import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { field, fromOrigin, html, originHint, readForm, respond, seeOther } from './http.js';
import { APPROVAL_ID, isField } from './rules.js';
import type { SessionStore } from './store.js';
import type { LayoutData } from './views.js';
import { render } from './views.js';

/** Who is signed in on a request of the page. */
export interface SignedIn {
  /** The principal, compared with the approval's principal (the tool call's). */
  principal: string;
  /**
   * A secret of this sign-in session that never leaves the server and that
   * another site cannot learn (at least 32 random bytes, e.g. base64url):
   * decision forms carry HMAC-SHA256(csrfSecret, approval id) as their CSRF token.
   */
  csrfSecret: string;
}

/**
 * Your own sign-in for the page, e.g. the session of the application's SSO:
 * `authenticate` reads the browser's session from the request (cookie) and
 * returns who is signed in, or `undefined`; a person who is not is sent to
 * `signInUrl(returnTo)` and must come back to `returnTo` (a path of the page).
 */
export interface SignInHook {
  /** The signed-in principal of `request`, or `undefined`. May throw {@link ApprovalStoreUnavailableError} (page: 503). */
  authenticate(request: Request): Promise<SignedIn | undefined> | SignedIn | undefined;
  /** Where to send a person who is not signed in; `returnTo` is the approval page's path. */
  signInUrl(returnTo: string): string;
  /** A URL the page's "Sign out" button POSTs to, if any. */
  signOutUrl?: string;
}

/** The built-in sign-in: a form for configured users, then a server-side session. */
export interface PasswordSignInOptions {
  /**
   * Principal → token (its password on the form), at least
   * {@link MIN_PAGE_PASSWORD_LENGTH} characters (code points). Not the bearer
   * token the MCP client sends: whoever holds that could sign in here and
   * approve, so an approval would prove nothing a client could not do.
   * Tokens are compared in constant time.
   */
  users: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
  /**
   * Shortest password taken, characters (code points; default and usual
   * value {@link MIN_PAGE_PASSWORD_LENGTH}, 12). Lower it only where the
   * passwords are credentials with a strength of their own, such as
   * generated tokens; a person's chosen password needs the default.
   */
  minPasswordLength?: number;
  /** How long a session lasts, seconds (default 1800). */
  sessionTtlSeconds?: number;
  /**
   * Sign-in attempts a principal gets per window on this page
   * (default `{ limit: 10, windowSeconds: 60 }`, `windowSeconds` at most
   * 86,400): the attempt after `limit` within `windowSeconds` of the first,
   * right password or not, is answered `429` with `Retry-After` (seconds)
   * until the window ends; a sign-in that succeeds starts a new window. The
   * page's own client (the MCP client reaches the same origin) could
   * otherwise guess a password at hundreds of tries a second. Each page (each
   * `createApprovalPage`, each process) counts its own attempts: n instances
   * allow n × `limit` per window. A name that is no user is counted in one of
   * 1,024 shared counters chosen by its hash, so it is held back as a user
   * would be (a `429` does not tell which names are users) and a flood of
   * made-up names takes bounded memory.
   */
  attempts?: { limit?: number; windowSeconds?: number };
}

/** What the built-in sign-in needs from the page. */
export interface SignInPage {
  store: SessionStore;
  basePath: string;
  origin: string;
  secure: boolean;
  layout(
    title: string,
    tone: LayoutData['tone'],
    signedIn: string | null,
    scripts?: string[],
  ): LayoutData;
  now: () => number;
}

/**
 * Shortest page password the built-in sign-in takes, in characters (code
 * points). The password is the only factor of this sign-in (NIST SP
 * 800-63B-4 §3.1.1.2 asks at least 15 of a password used alone; we take 12,
 * with the attempt limit in front), and a short one does not outlast the
 * `attempts` budget of a few instances for long.
 */
export const MIN_PAGE_PASSWORD_LENGTH = 12;

/**
 * Whether `password` has at least `min` code points (a lone surrogate counts
 * as one): what the page's built-in sign-in requires of each page password.
 * @param min characters, default {@link MIN_PAGE_PASSWORD_LENGTH} (12).
 * @returns never throws.
 */
export function longEnoughPagePassword(password: string, min = MIN_PAGE_PASSWORD_LENGTH): boolean {
  if (password.length >= 2 * min) return true;
  let count = 0;
  for (const _ of password) if (++count >= min) return true;
  return false;
}

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;
const TWO_SESSIONS =
  'Your browser sent two session cookies for this page, so neither counts: something else on this host set one. Clear the cookies of this site in your browser, then sign in again.';

/** How many cookies named `name` a `Cookie` header holds (names compared as sent, as `cookie`'s parse does). */
function sessionCookieCount(header: string, name: string): number {
  let count = 0;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) count++;
  }
  return count;
}
/** Counters the sign-in attempts of names that are no user share (see `attempts`). */
const UNKNOWN_NAME_COUNTERS = 1024;
const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The built-in {@link SignInHook}: `GET/POST <basePath>/sign-in` (a form:
 * fields `principal`, `password` and `return`), `POST <basePath>/sign-out`. A sign-in creates a
 * session (32 random bytes in the cookie; the store keeps only its SHA-256)
 * in an `HttpOnly`, `SameSite=Strict` cookie, `Secure` on an `https:` origin,
 * `Path=<basePath>`. Both POSTs must come from the page's origin. A session
 * counts only on the page (origin and base path) that made it, and ends (is
 * deleted) at the first request after its principal left `users` or its
 * password changed.
 */
export class PasswordSignIn implements SignInHook {
  readonly signOutUrl: string;
  readonly #users: Map<string, Buffer>;
  readonly #ttl: number;
  readonly #page: SignInPage;
  readonly #cookie: string;
  /** Compared against when the principal is unknown, so both cases cost the same. */
  readonly #decoy = digest(randomBytes(32).toString('base64url'));
  readonly #attempts: RateLimiterMemory;

  /**
   * @throws {TypeError} for no users, an empty principal, a password shorter
   *   than `minPasswordLength` characters (the message names the principal,
   *   never the password), a bad `minPasswordLength`, TTL or `attempts`.
   */
  constructor(options: PasswordSignInOptions, page: SignInPage) {
    const entries =
      options.users instanceof Map ? [...options.users] : Object.entries(options.users);
    if (entries.length === 0) throw new TypeError('users must name at least one principal');
    const min = options.minPasswordLength ?? MIN_PAGE_PASSWORD_LENGTH;
    if (!Number.isSafeInteger(min) || min < 1)
      throw new TypeError('minPasswordLength must be a positive integer');
    for (const [principal, token] of entries) {
      if (!isField(principal) || typeof token !== 'string' || token.length === 0)
        throw new TypeError(
          'every user needs a principal (1 to 1024 characters, no NUL) and a non-empty page password (not the MCP bearer token)',
        );
      if (!longEnoughPagePassword(token, min))
        throw new TypeError(
          `the page password of principal ${JSON.stringify(principal)} is shorter than ${min} characters: give each person a long random one (e.g. openssl rand -base64 18)`,
        );
    }
    this.#users = new Map(entries.map(([p, t]) => [p, digest(t)]));
    this.#ttl = options.sessionTtlSeconds ?? 1800;
    if (!Number.isSafeInteger(this.#ttl) || this.#ttl <= 0)
      throw new TypeError('sessionTtlSeconds must be a positive integer');
    const limit = options.attempts?.limit ?? 10;
    const windowSeconds = options.attempts?.windowSeconds ?? 60;
    if (!Number.isSafeInteger(limit) || limit <= 0)
      throw new TypeError('attempts.limit must be a positive integer');
    // rate-limiter-flexible ends a window with a timer: one past 2^31 - 1 ms would fire at once.
    if (!Number.isSafeInteger(windowSeconds) || windowSeconds <= 0 || windowSeconds > 86_400)
      throw new TypeError('attempts.windowSeconds must be an integer from 1 to 86400');
    this.#attempts = new RateLimiterMemory({ points: limit, duration: windowSeconds });
    this.#page = page;
    this.#cookie = page.secure ? '__Secure-mrtr_approval_session' : 'mrtr_approval_session';
    this.signOutUrl = `${page.basePath}/sign-out`;
  }

  /** The session of the request's cookie, if it is live. */
  async authenticate(request: Request): Promise<SignedIn | undefined> {
    const key = this.#sessionKey(request);
    if (!key) return undefined;
    const session = await this.#page.store.readSession(key);
    if (!session) return undefined;
    // A principal taken out of `users`, or whose password changed, is signed out at its next
    // request: its session's secret no longer derives from its current password. The session is
    // deleted, so putting the principal back (even with the old password) does not revive it.
    const expected = this.#csrfSecretOf(session.principal, this.#cookieValue(request) ?? '');
    const held = Buffer.from(session.csrfSecret);
    if (
      expected === undefined ||
      held.length !== expected.length ||
      !timingSafeEqual(held, Buffer.from(expected))
    ) {
      await this.#page.store.deleteSession(key).catch(() => {});
      return undefined;
    }
    return { principal: session.principal, csrfSecret: session.csrfSecret };
  }

  /**
   * Ask for the principal's page password again, for a change a session alone
   * must not make (registering a passkey): a session cookie reaches every
   * port of its host (RFC 6265 §8.5), so whatever listens on another port of
   * the page's host can replay it, but it does not know the password. Counted
   * against the same `attempts` budget as a sign-in, so it is no way round
   * the limit; a right password starts a new window, as a sign-in does.
   * @returns `{ ok: true }`, or `{ ok: false, retryAfter }` when the budget is
   *   spent (seconds until its window ends), or `{ ok: false }` for a wrong password.
   */
  async confirmPassword(
    principal: string,
    password: string,
  ): Promise<{ ok: true } | { ok: false; retryAfter?: number }> {
    const wait = await this.#attempt(principal);
    if (wait !== undefined) return { ok: false, retryAfter: wait };
    if (!this.#verify(principal, password)) return { ok: false };
    await this.#attempts.delete(`user:${principal}`);
    return { ok: true };
  }

  /** `<basePath>/sign-in?return=<returnTo>`. */
  signInUrl(returnTo: string): string {
    return `${this.#page.basePath}/sign-in?return=${encodeURIComponent(returnTo)}`;
  }

  /** Serve `sign-in` and `sign-out`; `undefined` for any other route. */
  async handle(request: Request, route: string): Promise<Response | undefined> {
    if (route === 'sign-in' && request.method === 'GET') return this.#form(request);
    if (route === 'sign-in' && request.method === 'POST') return this.#signIn(request);
    if (route === 'sign-out' && request.method === 'POST') return this.#signOut(request);
    // Its routes with another method: 405 naming those it takes, not the 404 of an unknown path.
    if (route === 'sign-in') return respond(405, null, { allow: 'GET, HEAD, POST' });
    if (route === 'sign-out') return respond(405, null, { allow: 'POST' });
    return undefined;
  }

  async #form(request: Request): Promise<Response> {
    const returnTo = this.#returnPath(new URL(request.url).searchParams.get('return'));
    const signedIn = await this.authenticate(request);
    if (signedIn && returnTo) return seeOther(returnTo);
    if (signedIn) {
      const text = `You are signed in as ${signedIn.principal}. Open the approval link your client showed you to review its request.`;
      return this.#notice(200, 'Signed in', text, signedIn.principal);
    }
    // Signed out because two session cookies came: say so, or sign-in would only lead back here.
    const error = this.#twoSessions(request.headers.get('cookie')) ? TWO_SESSIONS : null;
    return this.#formPage(200, returnTo, '', error, null);
  }

  async #signIn(request: Request): Promise<Response> {
    if (!fromOrigin(request, this.#page.origin))
      return this.#refusal(
        403,
        `This sign-in did not come from this page. ${originHint(request, this.#page.origin)}`,
      );
    const form = await readForm(request);
    if (!form) return this.#refusal(400, 'The sign-in form could not be read.');
    const principal = field(form, 'principal') ?? '';
    const returnTo = this.#returnPath(field(form, 'return') ?? null);
    const wait = await this.#attempt(principal);
    if (wait !== undefined)
      return this.#formPage(
        429,
        returnTo,
        principal,
        `Too many sign-in attempts for this principal. Try again in ${wait} seconds.`,
        null,
        { 'retry-after': String(wait) },
      );
    if (!this.#verify(principal, field(form, 'password') ?? ''))
      return this.#formPage(
        401,
        returnTo,
        principal,
        'That principal and password do not match.',
        null,
      );
    await this.#attempts.delete(`user:${principal}`);
    const old = this.#sessionKey(request);
    if (old) await this.#page.store.deleteSession(old);
    const value = randomBytes(32).toString('base64url');
    const expiresAt = this.#page.now() + this.#ttl * 1000;
    const csrfSecret = this.#csrfSecretOf(principal, value) as string; // verified: a user
    const session = { principal, csrfSecret, expiresAt };
    await this.#page.store.createSession(this.#keyOf(value), session);
    const cookie = this.#setCookie(value, this.#ttl);
    if (returnTo) return seeOther(returnTo, [cookie]);
    const text = 'Open the approval link your client showed you to review its request.';
    return this.#notice(200, 'Signed in', text, principal, [cookie]);
  }

  async #signOut(request: Request): Promise<Response> {
    if (!fromOrigin(request, this.#page.origin))
      return this.#refusal(
        403,
        `This sign-out did not come from this page. ${originHint(request, this.#page.origin)}`,
      );
    const key = this.#sessionKey(request);
    if (key) await this.#page.store.deleteSession(key);
    const cookie = this.#setCookie('', 0);
    return this.#notice(200, 'Signed out', 'You are signed out of the approval page.', null, [
      cookie,
    ]);
  }

  /**
   * Count a sign-in attempt for `principal`: a user under its own name, any
   * other name in one of {@link UNKNOWN_NAME_COUNTERS} counters by its hash.
   * @returns `undefined` when it may go on, else the seconds until its window ends.
   */
  async #attempt(principal: string): Promise<number | undefined> {
    const key = this.#users.has(principal)
      ? `user:${principal}`
      : `other:${digest(principal).readUInt16BE(0) % UNKNOWN_NAME_COUNTERS}`;
    try {
      await this.#attempts.consume(key);
      return undefined;
    } catch (refused) {
      // RateLimiterMemory rejects with the key's state when it is over the limit, never fails.
      if (!(refused instanceof RateLimiterRes)) throw refused;
      return Math.max(1, Math.ceil(refused.msBeforeNext / 1000));
    }
  }

  /** Constant-time token check; an unknown principal costs the same as a wrong token. */
  #verify(principal: string, token: string): boolean {
    const expected = this.#users.get(principal);
    const match = timingSafeEqual(digest(token), expected ?? this.#decoy);
    return expected !== undefined && match;
  }

  #sessionKey(request: Request): string | undefined {
    const value = this.#cookieValue(request);
    return value === undefined ? undefined : this.#keyOf(value);
  }

  /**
   * The session cookie's value, when it has the shape this page gives (32
   * random bytes) and the request carries it once. Two cookies of this name
   * mean something else on the host set one (any port, or a longer `Path`,
   * which browsers send first; RFC 6265 §5.4): neither is trusted.
   */
  #cookieValue(request: Request): string | undefined {
    const header = request.headers.get('cookie');
    if (!header || this.#twoSessions(header)) return undefined;
    const value = parseCookies(header)[this.#cookie];
    return value && COOKIE_VALUE.test(value) ? value : undefined;
  }

  /** Whether a `Cookie` header carries this page's session cookie more than once. */
  #twoSessions(header: string | null): boolean {
    return header !== null && sessionCookieCount(header, this.#cookie) > 1;
  }

  /**
   * The CSRF secret of a session of `principal` with cookie `value`:
   * HMAC-SHA256 keyed with the SHA-256 of the principal's current password,
   * over the cookie (43 base64url characters), or `undefined` when
   * `principal` is not a user. Secret like the cookie it derives from (the
   * page sends only HMACs of it), and tied to the password, so a session
   * ends when its principal's password changes or the principal is removed.
   */
  #csrfSecretOf(principal: string, value: string): string | undefined {
    const password = this.#users.get(principal);
    return password && createHmac('sha256', password).update(value).digest('base64url');
  }

  /**
   * The store's key of a session cookie: SHA-256 of the page's origin and base
   * path, a NUL, and the cookie's value. Another page on the same session
   * store (another server, another port of the same host, whose cookie a
   * browser sends here too) derives other keys from its cookies, so its
   * sessions, made with its own users' passwords, are no sessions here.
   */
  #keyOf(value: string): string {
    return digest(`${this.#page.origin}${this.#page.basePath}\u0000${value}`).toString('base64url');
  }

  #setCookie(value: string, maxAge: number): string {
    return serializeCookie(this.#cookie, value, {
      httpOnly: true,
      secure: this.#page.secure,
      sameSite: 'strict',
      path: this.#page.basePath,
      maxAge,
    });
  }

  /**
   * Only an approval page, or the passkeys page (optionally returning to an
   * approval page), is a place to return to (no open redirect).
   */
  #returnPath(value: string | null): string {
    const prefix = `${this.#page.basePath}/`;
    if (!value?.startsWith(prefix)) return '';
    const rest = value.slice(prefix.length);
    if (APPROVAL_ID.test(rest) || rest === 'passkeys') return value;
    const back = /^passkeys\?return=([^&#]+)$/.exec(rest)?.[1];
    if (back === undefined) return '';
    let decoded: string;
    try {
      decoded = decodeURIComponent(back);
    } catch {
      return '';
    }
    return decoded.startsWith(prefix) && APPROVAL_ID.test(decoded.slice(prefix.length))
      ? value
      : '';
  }

  #formPage(
    status: number,
    returnTo: string,
    principal: string,
    error: string | null,
    signedIn: string | null,
    headers: Record<string, string> = {},
  ) {
    const data = {
      ...this.#page.layout('Sign in', 'plain', signedIn),
      // The return path in the target as well: a page that answers the POST without reading its
      // form (the store down) still links back to a sign-in that returns there.
      action: `${this.#page.basePath}/sign-in${returnTo ? `?return=${encodeURIComponent(returnTo)}` : ''}`,
      returnTo,
      principalValue: principal,
      error,
    };
    return html(status, render('sign-in', data), [], headers);
  }

  #notice(
    status: number,
    heading: string,
    text: string,
    signedIn: string | null,
    cookies: string[] = [],
  ) {
    const data = {
      ...this.#page.layout(heading, 'plain', signedIn),
      eyebrow: 'Approval page',
      heading,
      text,
    };
    return html(status, render('notice', { ...data, link: null }), cookies);
  }

  #refusal(status: number, text: string) {
    return this.#notice(status, 'Refused', text, null);
  }
}
