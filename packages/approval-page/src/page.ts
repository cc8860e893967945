import { APPROVE_SCRIPT } from './approve-script.js';
import { PAGE_CSS } from './assets.js';
import { type PageLocation, pageLocation } from './channel.js';
import { decide, showApproval } from './decision.js';
import { html, json, pageHostPolicy, respond } from './http.js';
import type { PasskeyRegistration, PasskeyRegistrationRule, ViewKit } from './kit.js';
import { approveWithPasskey, passkeyOptions } from './passkey.js';
import { PASSKEY_SCRIPT, webauthnBundle } from './passkey-script.js';
import {
  passkeyPolicy,
  register,
  registrationOptions,
  removePasskey,
  showPasskeys,
} from './registration.js';
import { APPROVAL_ID } from './rules.js';
import { PasswordSignIn, type PasswordSignInOptions, type SignInHook } from './sign-in.js';
import type { ApprovalStore } from './store.js';
import { type LayoutData, render } from './views.js';

/** Options of {@link createApprovalPage}. */
export interface ApprovalPageOptions extends PageLocation {
  /** The store the channel opens approvals in (the same one, on every instance). */
  store: ApprovalStore;
  /**
   * How a person signs in: your own {@link SignInHook} (e.g. your SSO
   * session), or `{ users }` for the built-in form ({@link PasswordSignInOptions};
   * sessions kept in `store`).
   */
  signIn: SignInHook | PasswordSignInOptions;
  /**
   * The `Host` values the page answers (`name[:port]`, or a predicate over
   * the header as sent). Default: the host of `origin`, and a loopback name
   * (`localhost`, `127.0.0.1`, `[::1]`) on any port, as the MCP endpoint's
   * default allows. Any other gets `403` and nothing else: behind a proxy
   * that sends another name, list it.
   */
  allowedHosts?: readonly string[] | ((host: string) => boolean);
  /**
   * Who may add and remove passkeys at `<basePath>/passkeys`. A passkey
   * approval proves a person only as far as registering a passkey needs
   * one: whoever holds a signed-in session (a client that knows the
   * sign-in token, a stolen cookie) could otherwise register a passkey of
   * its own and approve with it.
   * - `'first-only'` (default): a principal without a passkey may register
   *   one (trust on first use); one that has a passkey cannot add or remove
   *   any here. The operator does, through the store (`addCredential`,
   *   `deleteCredential`), e.g. when a device is lost.
   * - `'open'`: any signed-in session adds (up to 100) and removes its
   *   principal's passkeys. Only where signing in already needs something
   *   no MCP client holds (your SSO, a password of the person's own).
   * - a {@link PasskeyRegistrationRule}: your rule, asked for every change
   *   with the principal, the action, its passkey count and the request
   *   (e.g. allow only within minutes of a fresh SSO login); `true` allows.
   * A refusal is `403` and changes nothing.
   */
  passkeyRegistration?: PasskeyRegistration;
  /** The name shown at the top of every page (default `MCP server`). */
  serviceName?: string;
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** Called with a store failure (answered 503) or an unexpected error (500). Default `console.error`. */
  onError?: (error: unknown) => void;
}

/** The approval page: a web-standard handler for every request under its base path. */
export type ApprovalPage = (request: Request) => Promise<Response>;

function unavailable(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === 'APPROVAL_STORE_UNAVAILABLE'
  );
}

/**
 * Create the URL-mode approval page (MCP 2026-07-28 `client/elicitation`,
 * URL mode, "Phishing"): a web-standard `(Request) => Promise<Response>`
 * to mount beside the MCP endpoint at `<basePath>/…`. Routes:
 * - `GET <basePath>/<id>`: a signed-in principal sees the approval it was
 *   asked for (the question as sent, escaped; what happens; that it cannot
 *   be undone; for whom; when it expires) with Approve and Deny. Not signed
 *   in: `303` to the sign-in. Another principal: `403`, nothing shown.
 * - `POST <basePath>/<id>`: records the decision once, if the `Origin` is
 *   the page's, the CSRF token matches the session and the approval, the
 *   approval is the principal's and not expired or decided; then `303` back
 *   to the page. A `presence` approval is not approved by this form (it
 *   needs a passkey, below); it can be denied.
 * - `POST <basePath>/<id>/passkey-options`, `POST <basePath>/<id>/passkey`:
 *   a `presence` approval, with a WebAuthn assertion (user verification
 *   required) by one of the principal's passkeys over a challenge that
 *   commits to this approval and its answers; then the decision, once.
 * - `GET`/`POST <basePath>/passkeys`, `POST <basePath>/passkeys/options`,
 *   `POST <basePath>/passkeys/remove`: the signed-in principal lists,
 *   registers and removes its passkeys (see `passkeyRegistration`).
 * - `<basePath>/sign-in`, `<basePath>/sign-out`: the built-in sign-in, when configured.
 * - `GET <basePath>/assets/page.css`, `assets/passkey.js`,
 *   `assets/webauthn.js`, `assets/approve.js`: the stylesheet, the scripts
 *   of the passkey steps, and the one that keeps the Approve button from
 *   taking a click until the page has been in front for
 *   `APPROVE_AFTER_MS` (the only scripts, served from this origin).
 *
 * A request whose `Host` is not in `allowedHosts` (default: the host of
 * `origin` and the loopback names) gets `403` whatever its path (DNS rebinding).
 *
 * Every response carries a strict Content-Security-Policy (`default-src
 * 'none'`; scripts, styles and requests from this origin only; no inline
 * script; `frame-ancestors 'none'`), `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer`,
 * `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`. A store
 * that cannot be reached gets `503` and records nothing.
 * @throws {TypeError} at creation for a malformed origin, base path, `allowedHosts` entry,
 *   `passkeyRegistration` or sign-in configuration.
 */
export function createApprovalPage(options: ApprovalPageOptions): ApprovalPage {
  const { origin, basePath, secure } = pageLocation(options);
  const { store } = options;
  const hostAllowed = pageHostPolicy(origin, options.allowedHosts);
  const now = options.now ?? Date.now;
  const serviceName = options.serviceName ?? 'MCP server';
  const onError =
    options.onError ?? ((error: unknown) => console.error('[mrtr approval page]', error));
  let signOutUrl: string | null = null;
  const layout = (
    title: string,
    tone: LayoutData['tone'],
    signedIn: string | null,
    scripts: string[] = [],
  ): LayoutData => ({
    title,
    serviceName,
    origin,
    basePath,
    signedIn,
    signOutUrl: signedIn ? signOutUrl : null,
    tone,
    scripts,
  });
  const builtIn =
    'authenticate' in options.signIn
      ? undefined
      : new PasswordSignIn(options.signIn, { store, basePath, origin, secure, layout, now });
  const hook: SignInHook = builtIn ?? (options.signIn as SignInHook);
  signOutUrl = hook.signOutUrl ?? null;

  const notice: ViewKit['notice'] = (status, heading, text, signedIn = null, link = null) => {
    const tone = status >= 400 ? 'warning' : 'plain';
    const data = {
      ...layout(heading, tone, signedIn),
      eyebrow: 'Approval page',
      heading,
      text,
      link,
    };
    return html(status, render('notice', data));
  };
  const rp = { id: new URL(origin).hostname, name: serviceName };
  const passkeyChange = passkeyPolicy(options.passkeyRegistration);
  const kit: ViewKit = { store, hook, origin, basePath, rp, now, layout, notice, passkeyChange };
  if (builtIn)
    kit.confirmPassword = (principal, password) => builtIn.confirmPassword(principal, password);
  const script = (body: string) =>
    respond(200, body, { 'content-type': 'text/javascript; charset=utf-8' });
  const only = (method: string, request: Request, handle: () => Promise<Response>) =>
    request.method === method
      ? handle()
      : Promise.resolve(respond(405, null, { allow: method === 'GET' ? 'GET, HEAD' : method }));

  async function route(request: Request): Promise<Response> {
    if (!hostAllowed(request))
      return notice(
        403,
        'Wrong address',
        `This page is served at ${origin} only. Open the link the server gave you.`,
      );
    const path = new URL(request.url).pathname;
    if (!path.startsWith(`${basePath}/`)) return notice(404, 'Not found', 'There is no page here.');
    const rest = path.slice(basePath.length + 1);
    switch (rest) {
      case 'assets/page.css':
        return only('GET', request, async () =>
          respond(200, PAGE_CSS, { 'content-type': 'text/css; charset=utf-8' }),
        );
      case 'assets/passkey.js':
        return only('GET', request, async () => script(PASSKEY_SCRIPT));
      case 'assets/approve.js':
        return only('GET', request, async () => script(APPROVE_SCRIPT));
      case 'assets/webauthn.js':
        return only('GET', request, async () => script(await webauthnBundle()));
      case 'passkeys':
        if (request.method === 'GET') return showPasskeys(kit, request);
        if (request.method === 'POST') return register(kit, request);
        return respond(405, null, { allow: 'GET, HEAD, POST' });
      case 'passkeys/options':
        return only('POST', request, () => registrationOptions(kit, request));
      case 'passkeys/remove':
        return only('POST', request, () => removePasskey(kit, request));
    }
    const own = await builtIn?.handle(request, rest);
    if (own) return own;
    const [id, action, extra] = rest.split('/');
    if (id === undefined || !APPROVAL_ID.test(id) || extra !== undefined)
      return notice(404, 'Not found', 'There is no page here.');
    const page = `${basePath}/${id}`;
    if (action === 'passkey-options')
      return only('POST', request, () => passkeyOptions(kit, request, id));
    if (action === 'passkey')
      return only('POST', request, () => approveWithPasskey(kit, request, id, page));
    if (action !== undefined) return notice(404, 'Not found', 'There is no page here.');
    if (request.method === 'GET') return showApproval(kit, request, id, path);
    if (request.method === 'POST') return decide(kit, request, id, path);
    return respond(405, null, { allow: 'GET, HEAD, POST' });
  }

  /** The page a POST to `request`'s path is read back on: its approval, or the passkeys list. */
  function againLink(request: Request): { href: string; text: string } | null {
    const path = new URL(request.url).pathname;
    if (!path.startsWith(`${basePath}/`) || path.startsWith('//')) return null;
    return {
      href: path.replace(/\/(passkey|passkey-options|options|remove)$/, ''),
      text: 'Open the page again',
    };
  }

  return async function approvalPage(request: Request): Promise<Response> {
    // HEAD is GET without the body (RFC 9110 §9.3.2): the same status and headers.
    if (request.method === 'HEAD') {
      const got = await approvalPage(new Request(request, { method: 'GET' }));
      await got.body?.cancel();
      return new Response(null, { status: got.status, headers: got.headers });
    }
    try {
      return await route(request);
    } catch (error) {
      onError(error);
      // A write whose answer was lost may have landed: after a POST, say so rather than "nothing",
      // and link the page to read it on (a reload would send the POST again).
      const posted = request.method === 'POST';
      // A sign-in that failed set no cookie: whatever it wrote, the browser is not signed in.
      const signingIn = posted && new URL(request.url).pathname === `${basePath}/sign-in`;
      const outcome = signingIn
        ? 'You are not signed in: sign in again shortly.'
        : posted
          ? 'What you sent may or may not have been recorded: open the page again to see where it stands before you do anything else.'
          : 'Nothing was recorded.';
      const back = signingIn ? new URL(request.url).searchParams.get('return') : null;
      const link = signingIn
        ? {
            // The sign-in form checks the return path again before it follows it.
            href: `${basePath}/sign-in${back ? `?return=${encodeURIComponent(back)}` : ''}`,
            text: 'Sign in again',
          }
        : posted
          ? againLink(request)
          : null;
      // The passkey options are read by the page's script, which shows a JSON `{ error }`.
      if (/\/(passkey-options|passkeys\/options)$/.test(new URL(request.url).pathname))
        return json(unavailable(error) ? 503 : 500, {
          error: unavailable(error)
            ? `The approval service is unavailable. ${outcome}`
            : `The page failed. ${outcome}`,
        });
      if (unavailable(error))
        return notice(
          503,
          'Try again shortly',
          `The approval service is unavailable. ${outcome}`,
          null,
          link,
        );
      return notice(500, 'Something went wrong', `The page failed. ${outcome}`, null, link);
    }
  };
}
