/** The page over HTTP semantics, without a browser: what each request gets and what it records. */
import { describe, expect, it } from 'vitest';
import { csrfToken } from '../src/csrf.js';
import { timeLeft } from '../src/decision.js';
import { FORM_LAYOUT } from '../src/fields.js';
import {
  ApprovalStoreUnavailableError,
  createApprovalPage,
  MemoryApprovalStore,
} from '../src/index.js';
import { TEMPLATES } from '../src/views.js';
import {
  csrfOf,
  expectSecurityHeaders,
  ORIGIN,
  post,
  sessionKeyOf,
  setup,
  signIn,
  USERS,
} from './helpers.js';

describe('sign-in', () => {
  it('sends a person who is not signed in to the sign-in form, then back to the page', async () => {
    const { page, open } = setup();
    const { url, path } = await open();
    const first = await page(new Request(url));
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(
      `/approve/sign-in?return=${encodeURIComponent(path)}`,
    );
    expectSecurityHeaders(first);
    const form = await page(new Request(`${ORIGIN}${first.headers.get('location')}`));
    expect(form.status).toBe(200);
    expect(await form.text()).toContain(`name="return" value="${path}"`);
    const signedIn = await page(
      post(`${ORIGIN}/approve/sign-in`, {
        principal: 'alice',
        password: 'alice-token-0123456789',
        return: path,
      }),
    );
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(path);
    const cookie = signedIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(
      /^mrtr_approval_session=[A-Za-z0-9_-]{43}; Max-Age=1800; Path=\/approve; HttpOnly; SameSite=Strict$/,
    );
    const shown = await page(
      new Request(url, { headers: { cookie: cookie.split(';')[0] as string } }),
    );
    expect(shown.status).toBe(200);
  });

  it('marks the cookie Secure with the __Secure- prefix on an https origin', async () => {
    const { page } = setup({ origin: 'https://ops.example.com' });
    const response = await page(
      post('https://ops.example.com/approve/sign-in', {
        principal: 'bob',
        password: 'bob-token-0123456789',
      }),
    );
    expect(response.headers.get('set-cookie')).toMatch(
      /^__Secure-mrtr_approval_session=.*; Secure; SameSite=Strict$/,
    );
  });

  it.each([
    ['a wrong password', 'principal=alice&password=bob-token-0123456789'],
    ['an unknown principal', 'principal=carol&password=alice-token-0123456789'],
    ['no password', 'principal=alice'],
    [
      'the password under the field name of earlier versions',
      'principal=alice&token=alice-token-0123456789',
    ],
    ['the password twice', 'principal=alice&password=alice-token-0123456789&password=x'],
    ['a NUL principal', 'principal=%00&password=alice-token-0123456789'],
  ])('refuses %s with 401 and no session', async (_, body) => {
    const { page } = setup();
    const headers = { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' };
    const response = await page(
      new Request(`${ORIGIN}/approve/sign-in`, { method: 'POST', headers, body }),
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await response.text()).toContain('That principal and password do not match.');
  });

  it('refuses a sign-in from another origin or without Origin, and says which header', async () => {
    const { page } = setup();
    const fields = { principal: 'alice', password: 'alice-token-0123456789' };
    const attempts: [Record<string, string>, string][] = [
      [
        { origin: 'https://evil.example' },
        `Origin header names another origin; this page is ${ORIGIN}.`,
      ],
      [
        { origin: '' },
        `carried no Origin header; a form posted from this page carries Origin: ${ORIGIN}.`,
      ],
      [{ 'sec-fetch-site': 'cross-site' }, 'sent from another site (Sec-Fetch-Site).'],
    ];
    for (const [headers, hint] of attempts) {
      const request = post(`${ORIGIN}/approve/sign-in`, fields, headers);
      if (headers.origin === '') request.headers.delete('origin');
      const response = await page(request);
      expect(response.status).toBe(403);
      expect(response.headers.get('set-cookie')).toBeNull();
      const text = await response.text();
      expect(text).toContain('This sign-in did not come from this page.');
      expect(text).toContain(hint);
      expect(text).not.toContain('evil.example');
    }
    // The same fields with the page's Origin sign in: only the header was wrong.
    expect((await page(post(`${ORIGIN}/approve/sign-in`, fields))).status).toBe(200);
  });

  it('answers 429 to a principal past ten sign-in attempts a minute, even with its password', async () => {
    const { page } = setup();
    const attempt = (principal: string, password: string) =>
      page(post(`${ORIGIN}/approve/sign-in`, { principal, password, return: '' }));
    for (let i = 0; i < 10; i++) expect((await attempt('alice', `guess-${i}`)).status).toBe(401);
    const refused = await attempt('alice', USERS.alice);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('set-cookie')).toBeNull();
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await refused.text()).toContain('Too many sign-in attempts for this principal.');
    // Another principal is not held back; a name that is no user is held back as a user is, so a
    // 429 does not tell which names are users.
    expect((await attempt('bob', USERS.bob)).status).toBe(200);
    const mallory = [];
    for (let i = 0; i < 11; i++) mallory.push((await attempt('mallory', `guess-${i}`)).status);
    expect(mallory).toEqual([...Array(10).fill(401), 429]);
  });

  it('starts a new window of attempts after the last one ends, or after a sign-in', async () => {
    const store = new MemoryApprovalStore();
    const page = createApprovalPage({
      store,
      origin: ORIGIN,
      signIn: { users: USERS, attempts: { limit: 2, windowSeconds: 1 } },
    });
    const attempt = (password: string) =>
      page(post(`${ORIGIN}/approve/sign-in`, { principal: 'alice', password, return: '' }));
    expect((await attempt('wrong-1')).status).toBe(401);
    expect((await attempt(USERS.alice)).status).toBe(200); // the second attempt: a new window
    expect((await attempt('wrong-2')).status).toBe(401);
    expect((await attempt('wrong-3')).status).toBe(401);
    expect((await attempt(USERS.alice)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await attempt(USERS.alice)).status).toBe(200);
    expect(() =>
      createApprovalPage({
        store,
        origin: ORIGIN,
        signIn: { users: USERS, attempts: { limit: 0 } },
      }),
    ).toThrow('attempts.limit must be a positive integer');
    expect(() =>
      createApprovalPage({
        store,
        origin: ORIGIN,
        signIn: { users: USERS, attempts: { windowSeconds: 30 * 86_400 } },
      }),
    ).toThrow('attempts.windowSeconds must be an integer from 1 to 86400');
  });

  it('refuses a page password shorter than 12 characters, counted in code points, without echoing it', () => {
    const withUsers = (users: Record<string, string>) => () =>
      createApprovalPage({ store: new MemoryApprovalStore(), origin: ORIGIN, signIn: { users } });
    expect(withUsers({ alice: USERS.alice, bob: 'hunter2-abcd' })).not.toThrow(); // 12
    let thrown: unknown;
    try {
      withUsers({ alice: USERS.alice, bob: 'hunter2-abc' })(); // 11
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toContain('"bob"');
    expect((thrown as Error).message).toContain('shorter than 12 characters');
    expect((thrown as Error).message).not.toContain('hunter2');
    // Six emoji are twelve UTF-16 code units but six characters.
    expect(withUsers({ alice: '🔑🔑🔑🔑🔑🔑' })).toThrow(TypeError);
    expect(withUsers({ alice: '🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑' })).not.toThrow();
    // Lowered on purpose (generated tokens), and never to nothing.
    const withMin = (minPasswordLength: number) => () =>
      createApprovalPage({
        store: new MemoryApprovalStore(),
        origin: ORIGIN,
        signIn: { users: { bob: 'tok-bob' }, minPasswordLength },
      });
    expect(withMin(7)).not.toThrow();
    expect(withMin(8)).toThrow(/shorter than 8 characters/);
    expect(withMin(0)).toThrow('minPasswordLength must be a positive integer');
  });

  it('never redirects anywhere but an approval page after sign-in', async () => {
    const { page } = setup();
    for (const target of [
      'https://evil.example/',
      '//evil.example/approve/AAAAAAAAAAAAAAAAAAAAAA',
      '/approve/sign-out',
      '/approve/../x',
    ]) {
      const response = await page(
        post(`${ORIGIN}/approve/sign-in`, {
          principal: 'alice',
          password: 'alice-token-0123456789',
          return: target,
        }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('location')).toBeNull();
    }
  });

  it('signs out: the old cookie no longer signs anyone in', async () => {
    const { page, open } = setup();
    const { url } = await open();
    const cookie = await signIn(page, 'alice');
    const out = await page(post(`${ORIGIN}/approve/sign-out`, {}, { cookie }));
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await page(new Request(url, { headers: { cookie } }))).status).toBe(303);
  });

  it('trusts neither of two session cookies (one set by something else on the host) and says why', async () => {
    const { page, open } = setup();
    const { url, path } = await open();
    const alice = await signIn(page, 'alice');
    const bob = await signIn(page, 'bob');
    // Browsers send the cookie of the longer Path first, so a planted one comes before or after.
    for (const cookie of [`${bob}; ${alice}`, `${alice}; ${bob}`, `${alice}; ${alice}`]) {
      const shown = await page(new Request(url, { headers: { cookie } }));
      expect(shown.status).toBe(303);
      const decided = await page(post(url, { decision: 'approve', csrf: 'x' }, { cookie }));
      expect(decided.status).toBe(401);
      const form = await page(
        new Request(`${ORIGIN}/approve/sign-in?return=${encodeURIComponent(path)}`, {
          headers: { cookie },
        }),
      );
      expect(form.status).toBe(200);
      expect(await form.text()).toContain('sent two session cookies for this page');
    }
    // One cookie, among others of other names, still counts.
    const one = await page(
      new Request(url, { headers: { cookie: `other=1; ${alice}; mrtr_approval_session_x=2` } }),
    );
    expect(one.status).toBe(200);
  });
});

describe('the approval page', () => {
  it('never says an approval has longer left than it has', () => {
    expect(timeLeft(330_000)).toBe('in 5 minutes'); // a ticket's 300 s and 30 s of skew
    expect(timeLeft(359_999)).toBe('in 5 minutes');
    expect(timeLeft(119_999)).toBe('in 119 seconds');
    expect(timeLeft(120_000)).toBe('in 2 minutes');
    expect(timeLeft(1_500)).toBe('in 1 second');
    expect(timeLeft(400)).toBe('in less than a second');
    expect(timeLeft(0)).toBe('expired');
    expect(timeLeft(7_199_999)).toBe('in 119 minutes');
    expect(timeLeft(10_799_999)).toBe('in 2 hours');
  });

  it('shows the question as text, who it is for, when it expires, and Approve and Deny', async () => {
    const { page, open } = setup();
    const { url } = await open({ message: 'Delete "api-prod" <b>now</b> & forever' });
    const cookie = await signIn(page, 'alice');
    const response = await page(new Request(url, { headers: { cookie } }));
    expectSecurityHeaders(response);
    const body = await response.text();
    expect(body).toContain('Delete &quot;api-prod&quot; &lt;b&gt;now&lt;/b&gt; &amp; forever');
    expect(body).toContain('This cannot be undone.');
    expect(body).toContain('<dt>For principal</dt><dd>alice</dd>');
    expect(body).toMatch(/value="approve"[^>]*>Approve</);
    expect(body).toMatch(/value="deny"[^>]*>Deny</);
    // One script, a file of the page's own (approve.js); no inline script or style.
    expect(body.match(/<script[^>]*>/gi)).toEqual([
      '<script src="/approve/assets/approve.js" defer>',
    ]);
    expect(body).not.toMatch(/style=/i);
    // The Approve button is sent hidden and disabled for the script to show; a noscript one stands in.
    expect(body).toMatch(
      /<button [^>]*value="approve"[^>]*id="approve" aria-disabled="true" hidden>/,
    );
    expect(body).toMatch(
      /<noscript><button [^>]*value="approve"[^>]*>Approve<\/button><\/noscript>/,
    );
  });

  it('renders a question holding NUL, a lone surrogate and astral characters without failing', async () => {
    const { page, open, errors } = setup();
    const { url } = await open({ message: 'a\0b \ud800 c 😀 <i>d</i>' });
    const cookie = await signIn(page, 'alice');
    const response = await page(new Request(url, { headers: { cookie } }));
    expect(response.status).toBe(200);
    // NUL and the lone surrogate are shown as their codes, as every character that could hide or act.
    expect(await response.text()).toContain('a\\u{0}b \\u{d800} c 😀 &lt;i&gt;d&lt;/i&gt;');
    expect(errors).toEqual([]);
  });

  it('shows characters that reorder or hide text as their codes, and says so', async () => {
    const { page, open } = setup();
    // Trojan Source (CVE-2021-42574): U+202E would show "report‮fdp.exe" as "reportexe.pdf".
    const { url } = await open({
      message: 'Send report\u202efdp.exe\u202c to \u2066x\u2069 now\u200b?',
    });
    const cookie = await signIn(page, 'alice');
    const body = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(body).toContain(
      'Send report\\u{202e}fdp.exe\\u{202c} to \\u{2066}x\\u{2069} now\\u{200b}?',
    );
    expect(body).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b]/);
    expect(body).toContain('shown as their code');
    // A joiner between ASCII letters joins nothing: `api‍-staging` would read as `api-staging`.
    const stray = await open({
      message:
        'Delete api\u200d-staging and api\ufe0f-staging, not api\u{e0100} nor \u043f\u200d\u0430?',
    });
    const strayBody = await (await page(new Request(stray.url, { headers: { cookie } }))).text();
    expect(strayBody).toContain(
      'Delete api\\u{200d}-staging and api\\u{fe0f}-staging, not api\\u{e0100} nor \u043f\\u{200d}\u0430?',
    );
    expect(strayBody).not.toMatch(/[\u200d\ufe0f]/);
    // Private-use and unassigned code points: a font may draw them blank, or as what it likes.
    const unknown = await open({ message: 'Delete prod\ue000\u{f0000}-db\u0378 now?' });
    const unknownBody = await (
      await page(new Request(unknown.url, { headers: { cookie } }))
    ).text();
    expect(unknownBody).toContain('Delete prod\\u{e000}\\u{f0000}-db\\u{378} now?');
    expect(unknownBody).not.toMatch(/[\ue000\u{f0000}\u0378]/u);
    // Emoji joiners read right and reorder nothing: kept, and no note without a code.
    const plain = await open({ message: 'Delete 👩\u200d💻 notes?' });
    const shown = await (await page(new Request(plain.url, { headers: { cookie } }))).text();
    expect(shown).toContain('Delete 👩\u200d💻 notes?');
    expect(shown).not.toContain('shown as their code');
  });

  it('refuses another signed-in principal with 403 and shows nothing of the approval', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open({ message: 'secret volume name' });
    const cookie = await signIn(page, 'bob');
    const response = await page(new Request(url, { headers: { cookie } }));
    expect(response.status).toBe(403);
    const body = await response.text();
    expect(body).not.toContain('secret volume name');
    expect(body).not.toContain('alice');
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it('answers only under its own host: a foreign Host gets 403 on every route and shows nothing', async () => {
    const { page, open } = setup();
    const { url, path } = await open({ message: 'secret volume name' });
    const cookie = await signIn(page, 'alice');
    const own = new URL(ORIGIN).host;
    const foreign = [
      'evil.example',
      `evil.example:${new URL(ORIGIN).port}`,
      `${own}.`,
      `${own}@evil.example`,
      '',
      'a b',
    ];
    for (const host of foreign)
      for (const target of [
        url,
        `${ORIGIN}/approve/sign-in`,
        `${ORIGIN}/approve/assets/page.css`,
      ]) {
        const response = await page(new Request(target, { headers: { cookie, host } }));
        expect(response.status, `${host} ${target}`).toBe(403);
        expectSecurityHeaders(response);
        expect(await response.text()).not.toContain('secret volume name');
      }
    const decision = await page(
      post(url, { decision: 'approve', csrf: 'x' }, { cookie, host: 'evil.example' }),
    );
    expect(decision.status).toBe(403);
    // The same host in another spelling (upper case) is still the page's, and a loopback name
    // (what a proxy rewriting Host to its upstream sends; no rebinding page can) is served too.
    for (const host of [own.toUpperCase(), 'localhost:8080', '[::1]']) {
      const shown = await page(new Request(url, { headers: { cookie, host } }));
      expect(shown.status, host).toBe(200);
    }
    expect(path).toMatch(/^\/approve\//);
  });

  it('answers the hosts allowedHosts names, its default port dropped, and refuses a malformed entry', async () => {
    const store = new MemoryApprovalStore();
    const origin = 'https://ops.example.com';
    const page = createApprovalPage({
      store,
      origin,
      signIn: { users: { alice: 'alice-token-0123456789' } },
      allowedHosts: ['ops.example.com', 'internal:8080'],
    });
    const status = async (host: string) =>
      (await page(new Request(`${origin}/approve/sign-in`, { headers: { host } }))).status;
    expect(await status('ops.example.com:443')).toBe(200);
    expect(await status('INTERNAL:8080')).toBe(200);
    expect(await status('internal')).toBe(403);
    expect(await status('ops.example.com:8443')).toBe(403);
    expect(() =>
      createApprovalPage({ store, origin, signIn: { users: {} }, allowedHosts: ['http://x/'] }),
    ).toThrow(/allowedHosts entries must be host\[:port\]/);
  });

  it('answers 404 for an unknown id and for paths that are not ids, with the headers', async () => {
    const { page } = setup();
    const cookie = await signIn(page, 'alice');
    for (const path of [
      '/approve/AAAAAAAAAAAAAAAAAAAAAA',
      '/approve/%00',
      '/approve/x%ZZ',
      '/approve/',
      '/other',
      '/approve/assets/x.js',
    ]) {
      const response = await page(new Request(`${ORIGIN}${path}`, { headers: { cookie } }));
      expect(response.status, path).toBe(404);
      expectSecurityHeaders(response);
    }
  });

  it('answers HEAD as GET without a body: the same status and headers', async () => {
    const { page, open } = setup();
    const { url } = await open();
    const cookie = await signIn(page, 'alice');
    for (const target of [url, `${ORIGIN}/approve/sign-in`, `${ORIGIN}/approve/assets/page.css`]) {
      const get = await page(new Request(target, { headers: { cookie } }));
      const head = await page(new Request(target, { method: 'HEAD', headers: { cookie } }));
      expect([head.status, head.headers.get('content-type')], target).toEqual([
        get.status,
        get.headers.get('content-type'),
      ]);
      expect(await head.text()).toBe('');
      expectSecurityHeaders(head);
    }
  });

  it('serves its stylesheet with the headers, and 405 for other methods', async () => {
    const { page, open } = setup();
    const css = await page(new Request(`${ORIGIN}/approve/assets/page.css`));
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expectSecurityHeaders(css);
    const { url } = await open();
    const put = await page(new Request(url, { method: 'PUT' }));
    expect(put.status).toBe(405);
    expectSecurityHeaders(put);
    // The sign-in's own routes too, naming the methods they take.
    for (const [path, method, allow] of [
      ['sign-in', 'PATCH', 'GET, HEAD, POST'],
      ['sign-out', 'GET', 'POST'],
    ] as const) {
      const other = await page(new Request(`${ORIGIN}/approve/${path}`, { method }));
      expect([other.status, other.headers.get('allow')], `${method} ${path}`).toEqual([405, allow]);
      expectSecurityHeaders(other);
    }
  });

  it('renders through templates that never output unescaped values', () => {
    for (const source of Object.values(TEMPLATES)) expect(source).not.toMatch(/\{\{\{|\{\{&/);
  });

  it('shows that a passkey is required for a presence approval, without an Approve button', async () => {
    const { page, open } = setup();
    const { url } = await open({ level: 'presence' });
    const cookie = await signIn(page, 'alice');
    const body = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(body).toContain('A passkey is required to approve this');
    expect(body).toContain('you have none yet');
    // Handlebars escapes `=` as `&#x3D;`; the browser reads it back as `=`.
    const register = `/approve/passkeys?return&#x3D;${encodeURIComponent(new URL(url).pathname)}`;
    expect(body).toContain(`href="${register}"`);
    expect(body).not.toContain('<script');
    expect(body).not.toContain('value="approve"');
    expect(body).not.toContain('Approve with passkey');
    expect(body).toContain('value="deny"');
  });

  it('answers 503 and records nothing when the store cannot be reached', async () => {
    const store = new MemoryApprovalStore();
    const down = () => Promise.reject(new ApprovalStoreUnavailableError('down'));
    const { page, open, errors } = setup({ store });
    const { url } = await open();
    const cookie = await signIn(page, 'alice');
    store.get = down;
    store.readSession = down;
    const response = await page(new Request(url, { headers: { cookie } }));
    expect(response.status).toBe(503);
    expectSecurityHeaders(response);
    expect(errors).toHaveLength(1);
    // The passkey options, read by the page's script, get the JSON `{ error }` it shows.
    for (const path of [`${new URL(url).pathname}/passkey-options`, '/approve/passkeys/options']) {
      const options = await page(post(`${ORIGIN}${path}`, { csrf: 'x' }, { cookie }));
      expect(options.status, path).toBe(503);
      expect(options.headers.get('content-type')).toContain('application/json');
      expect((await options.json()).error).toMatch(/^The approval service is unavailable\./);
    }
  });
});

describe('a sign-in whose store is unavailable', () => {
  it('says the person is not signed in, not that what they sent may have been recorded', async () => {
    const store = new MemoryApprovalStore();
    const { page, open } = setup({ store });
    store.createSession = () => Promise.reject(new ApprovalStoreUnavailableError('down'));
    const response = await page(
      post(`${ORIGIN}/approve/sign-in`, { principal: 'alice', password: USERS.alice, return: '' }),
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('set-cookie')).toBeNull();
    const body = await response.text();
    expect(body).toContain('You are not signed in: sign in again shortly.');
    expect(body).toContain('href="/approve/sign-in"');
    expect(body).not.toContain('may or may not have been recorded');
    // Sent from the form of an approval's sign-in: the link leads back to that form, and on.
    const { path } = await open();
    const form = await (await page(new Request(`${ORIGIN}/approve/sign-in?return=${path}`))).text();
    const action = /action="([^"]+)"/.exec(form)?.[1]?.replaceAll('&#x3D;', '=') ?? '';
    expect(action).toBe(`/approve/sign-in?return=${encodeURIComponent(path)}`);
    const fromForm = await page(
      post(`${ORIGIN}${action}`, { principal: 'alice', password: USERS.alice, return: path }),
    );
    expect(fromForm.status).toBe(503);
    expect((await fromForm.text()).replaceAll('&#x3D;', '=')).toContain(
      `href="/approve/sign-in?return=${encodeURIComponent(path)}"`,
    );
  });
});

describe('the decision POST', () => {
  it('whose write lost its answer says the decision may have been recorded, not that nothing was', async () => {
    const store = new MemoryApprovalStore();
    const { page, open, channel } = setup({ store });
    const { url, approval } = await open();
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const decide = store.decide.bind(store);
    // The write lands, its answer does not come back (a stalled connection, a proxy).
    store.decide = async (...args: Parameters<typeof store.decide>) => {
      await decide(...args);
      throw new ApprovalStoreUnavailableError('no reply within 2000 ms');
    };
    const response = await page(post(url, { csrf, decision: 'approve' }, { cookie }));
    expect(response.status).toBe(503);
    const body = await response.text();
    expect(body).toContain('may or may not have been recorded: open the page again');
    // A link to read it on (a reload would send the POST again): the approval's own page.
    expect(body).toContain(`href="${new URL(url).pathname}"`);
    expect(body).not.toContain('Nothing was recorded');
    expect(await channel.decision(approval.id, approval)).toMatchObject({ status: 'approved' });
  });

  it('records an approval once, then refuses a replay with 409', async () => {
    const { page, open, channel } = setup();
    const { url, approval, path } = await open();
    const cookie = await signIn(page, 'alice');
    const before = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(before).toContain('<dt>Expires</dt>');
    // The header's Passkeys link leads back to this request.
    // (Handlebars writes the `=` of the query as `&#x3D;`, which the browser reads as `=`.)
    expect(before).toContain(`href="/approve/passkeys?return&#x3D;${encodeURIComponent(path)}"`);
    const csrf = await csrfOf(page, url, cookie);
    const first = await page(post(url, { csrf, decision: 'approve' }, { cookie }));
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(path);
    expect(await channel.decision(approval.id, approval)).toMatchObject({
      status: 'approved',
      via: 'url',
    });
    const replay = await page(post(url, { csrf, decision: 'deny' }, { cookie }));
    expect(replay.status).toBe(409);
    expect(await channel.decision(approval.id, approval)).toMatchObject({ status: 'approved' });
    const after = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(after).toContain('You approved this request');
    expect(after).not.toContain('value="approve"');
    // Decided: when the request would have expired no longer matters.
    expect(after).not.toContain('<dt>Expires</dt>');
  });

  it('shows an approval the client declined as closed, without buttons, and refuses to record a decision', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open();
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    await channel.withdraw(approval.id, approval);
    const shown = await page(new Request(url, { headers: { cookie } }));
    expect(shown.status).toBe(200);
    const text = await shown.text();
    expect(text).toContain('Closed in your MCP client');
    expect(text).toContain('your client declined this request, or the server asked it again');
    expect(text).toContain('Nothing will run');
    expect(text).not.toContain('value="approve"');
    const late = await page(post(url, { csrf, decision: 'approve' }, { cookie }));
    expect(late.status).toBe(409);
    expect(await late.text()).toContain('already closed in your MCP client');
    expect(await channel.decision(approval.id, approval)).toMatchObject({ status: 'denied' });
  });

  it('refuses without recording: another origin, no Origin, cross-site fetch metadata', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open();
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const attempts = [
      post(url, { csrf, decision: 'approve' }, { cookie, origin: 'https://evil.example' }),
      post(url, { csrf, decision: 'approve' }, { cookie, origin: 'null' }),
      post(url, { csrf, decision: 'approve' }, { cookie, 'sec-fetch-site': 'same-site' }),
    ];
    const noOrigin = post(url, { csrf, decision: 'approve' }, { cookie });
    noOrigin.headers.delete('origin');
    for (const request of [...attempts, noOrigin]) {
      const response = await page(request);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('Nothing was recorded.');
    }
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it('accepts Origin: null only with Sec-Fetch-Site: same-origin (what its own no-referrer policy makes a browser send)', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open();
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const framed = post(
      url,
      { csrf, decision: 'approve' },
      { cookie, origin: 'null', 'sec-fetch-site': 'cross-site' },
    );
    expect((await page(framed)).status).toBe(403);
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
    const own = post(
      url,
      { csrf, decision: 'approve' },
      { cookie, origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect((await page(own)).status).toBe(303);
    expect(await channel.decision(approval.id, approval)).toMatchObject({ status: 'approved' });
  });

  it('refuses a missing, wrong, foreign-session or other-approval CSRF token', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open();
    const other = await open();
    const cookie = await signIn(page, 'alice');
    const secondSession = await signIn(page, 'alice');
    const tokens = [
      undefined,
      'x'.repeat(43),
      await csrfOf(page, url, secondSession),
      await csrfOf(page, other.url, cookie),
    ];
    for (const csrf of tokens) {
      const fields: Record<string, string> = { decision: 'approve' };
      if (csrf !== undefined) fields.csrf = csrf;
      expect((await page(post(url, fields, { cookie }))).status).toBe(403);
    }
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it('counts a session only on the page that made it, and only while its principal is a user', async () => {
    const store = new MemoryApprovalStore();
    const mine = setup({ store });
    const { url, approval } = await mine.open();
    // Another server on the same store (another port of this host: a browser sends it the cookie too).
    const other = setup({ store, origin: 'http://127.0.0.1:4200' });
    const theirs = await signIn(other.page, 'alice', 'http://127.0.0.1:4200');
    expect(
      (
        await other.page(
          new Request(`http://127.0.0.1:4200/approve/passkeys`, { headers: { cookie: theirs } }),
        )
      ).status,
    ).toBe(200);
    const read = await mine.page(new Request(url, { headers: { cookie: theirs } }));
    expect(read.status).toBe(303);
    expect(read.headers.get('location')).toContain('/approve/sign-in');
    const decided = await mine.page(
      post(url, { csrf: 'x', decision: 'approve' }, { cookie: theirs }),
    );
    expect(decided.status).toBe(401);
    expect(await mine.channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
    // The same page (origin and base path) with alice taken out of its users: her session ends.
    const cookie = await signIn(mine.page, 'alice');
    expect((await mine.page(new Request(url, { headers: { cookie } }))).status).toBe(200);
    const without = createApprovalPage({
      store,
      origin: ORIGIN,
      signIn: { users: { bob: 'bob-token-0123456789' } },
    });
    const after = await without(new Request(url, { headers: { cookie } }));
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toContain('/approve/sign-in');
    // Deleted, not hidden: alice put back, with her old password or a new one, does not revive it.
    expect((await mine.page(new Request(url, { headers: { cookie } }))).status).toBe(303);
    // A changed password ends the sessions made with the old one.
    const fresh = await signIn(mine.page, 'alice');
    const renamed = createApprovalPage({
      store,
      origin: ORIGIN,
      signIn: { users: { alice: 'alice-new-password-0123456789' } },
    });
    expect((await renamed(new Request(url, { headers: { cookie: fresh } }))).status).toBe(303);
    expect((await mine.page(new Request(url, { headers: { cookie: fresh } }))).status).toBe(303);
    const stale = await mine.page(post(url, { csrf: 'x', decision: 'approve' }, { cookie: fresh }));
    expect(stale.status).toBe(401);
    expect(await mine.channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it('refuses another principal, even with its own valid session and token', async () => {
    const { page, open, channel, store } = setup();
    const { url, approval } = await open();
    const bob = await signIn(page, 'bob');
    // Bob's real token for this approval, as if he had read it off a page: only the principal check is left.
    const session = await store.readSession(sessionKeyOf(bob));
    const csrf = csrfToken(session?.csrfSecret as string, approval.id);
    const response = await page(post(url, { csrf, decision: 'approve' }, { cookie: bob }));
    expect(response.status).toBe(403);
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  // helper-152 F2: an approval past its expiry still promised that a retry would run it.
  it('an approval that expired after it was decided no longer says a retry runs it', async () => {
    const { page, open, clock } = setup();
    const { url } = await open({ expiresAt: Date.now() + 60_000 });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    expect((await page(post(url, { csrf, decision: 'approve' }, { cookie }))).status).toBe(303);
    const before = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(before).toContain('let it retry the request: it runs once');
    clock.now += 61_000;
    const after = await page(new Request(url, { headers: { cookie } }));
    expect(after.status).toBe(200);
    const text = await after.text();
    expect(text).toContain('You approved this request');
    expect(text).not.toContain('let it retry the request');
    expect(text).toMatch(
      /This approval expired at .*: if your MCP client retried the request before then, it ran once; if not, nothing ran/,
    );
    clock.now -= 61_000;
    // helper-156 L2: denied, then expired: no retry is answered as declined any more.
    const denied = await open({ expiresAt: Date.now() + 60_000 });
    const token = await csrfOf(page, denied.url, cookie);
    await page(post(denied.url, { csrf: token, decision: 'deny' }, { cookie }));
    clock.now += 61_000;
    const late = await (await page(new Request(denied.url, { headers: { cookie } }))).text();
    expect(late).toContain('Nothing ran, and nothing will: this request has expired.');
    expect(late).not.toContain('answered as declined');
    clock.now -= 61_000;
  });

  it('refuses a decision after expiry with 410', async () => {
    const { page, open, channel, clock } = setup();
    const { url, approval } = await open({ expiresAt: Date.now() + 60_000 });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    clock.now += 61_000;
    const response = await page(post(url, { csrf, decision: 'approve' }, { cookie }));
    expect(response.status).toBe(410);
    expect((await page(new Request(url, { headers: { cookie } }))).status).toBe(410);
    clock.now -= 61_000;
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it('refuses to approve a presence approval with the button, but records a denial', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open({ level: 'presence' });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    expect((await page(post(url, { csrf, decision: 'approve' }, { cookie }))).status).toBe(403);
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
    expect((await page(post(url, { csrf, decision: 'deny' }, { cookie }))).status).toBe(303);
    expect(await channel.decision(approval.id, approval)).toMatchObject({ status: 'denied' });
  });

  it('answers hostile bodies with 4xx, never 500, and records nothing', async () => {
    const { page, open, channel, errors } = setup();
    const { url, approval } = await open();
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const headers = { origin: ORIGIN, cookie, 'content-type': 'application/x-www-form-urlencoded' };
    const bodies = [
      `csrf=${csrf}&decision=approve&decision=deny`,
      `csrf=${csrf}&decision=%00approve`,
      `csrf=${csrf}%ZZ&decision=approve`,
      `csrf=${csrf}&decision=${'a'.repeat(10_000)}`,
      `csrf=\ud800&decision=approve`,
      new Uint8Array([0xff, 0xfe, 0x00, 0x3d]),
    ];
    for (const body of bodies) {
      const response = await page(new Request(url, { method: 'POST', headers, body }));
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    }
    const json = await page(
      new Request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      }),
    );
    expect(json.status).toBe(400);
    expect(errors).toEqual([]);
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });
});

describe('an approval that asks for fields', () => {
  const requestedSchema = {
    type: 'object' as const,
    properties: {
      note_id: {
        type: 'string' as const,
        title: 'Note to delete',
        oneOf: [
          { const: 'note-1', title: 'note-1: Kick-off <b>notes</b>' },
          { const: 'note-2', title: 'note-2: Weekly sync' },
        ],
      },
      reason: { type: 'string' as const, title: 'Reason', maxLength: 200 },
    },
    required: ['note_id'],
  };

  it('shows the fields, refuses an approval that does not fit (400, nothing recorded), records one that does', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open({ requestedSchema });
    const cookie = await signIn(page, 'alice');
    const body = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(body).toContain('<legend>Note to delete</legend>');
    // Inputs are named, and options valued, by position: nothing of the question goes through the form.
    expect(body).toContain('name="f0" value="0"');
    expect(body).not.toContain('value="note-1"');
    expect(body).toContain('note-1: Kick-off &lt;b&gt;notes&lt;/b&gt;');
    const csrf = await csrfOf(page, url, cookie);
    const answers: Record<string, string>[] = [
      {},
      { f0: '2' }, // no third option
      { f0: 'note-1' }, // a value, not a position
      { f0: '0', f1: 'x'.repeat(201) },
    ];
    for (const fields of answers) {
      const response = await page(
        post(url, { csrf, form: FORM_LAYOUT, decision: 'approve', ...fields }, { cookie }),
      );
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('Some answers do not fit the question.');
    }
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
    const fine = await page(
      post(
        url,
        { csrf, form: FORM_LAYOUT, decision: 'approve', f0: '1', f1: 'duplicate' },
        { cookie },
      ),
    );
    expect(fine.status).toBe(303);
    expect(await channel.decision(approval.id, approval)).toMatchObject({
      status: 'approved',
      content: { note_id: 'note-2', reason: 'duplicate' },
    });
    const after = await (await page(new Request(url, { headers: { cookie } }))).text();
    // Shown by the label the person chose from.
    expect(after).toContain('<dt>Note to delete</dt><dd>note-2: Weekly sync</dd>');
  });

  it('shows the labels of a choice with their codes, and records the option value as the question has it', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open({
      requestedSchema: {
        type: 'object' as const,
        properties: {
          file: {
            type: 'string' as const,
            title: 'File \u202eto delete',
            description: 'one of \u2067these\u2069',
            oneOf: [{ const: 'report\u202efdp.exe', title: 'report\u202efdp.exe' }],
          },
        },
        required: ['file'],
      },
    });
    const cookie = await signIn(page, 'alice');
    const body = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(body).toContain('<legend>File \\u{202e}to delete</legend>');
    expect(body).toContain('one of \\u{2067}these\\u{2069}');
    expect(body).toContain('> report\\u{202e}fdp.exe</label>');
    expect(body).not.toContain('\u202e');
    const csrf = await csrfOf(page, url, cookie);
    // The option's position goes back; the page records the value the question offered, exactly.
    const approved = await page(
      post(url, { csrf, form: FORM_LAYOUT, decision: 'approve', f0: '0' }, { cookie }),
    );
    expect(approved.status).toBe(303);
    expect(await channel.decision(approval.id, approval)).toMatchObject({
      status: 'approved',
      content: { file: 'report\u202efdp.exe' },
    });
    const after = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(after).toContain('<dd>report\\u{202e}fdp.exe</dd>'); // its label
    expect(after).not.toContain('\u202e');
  });

  it('keeps what goes back exact and spells out a value that does not show: U+202E only in a value attribute', async () => {
    const { page, open, channel } = setup();
    const odd = '\u202e';
    const { url, approval } = await open({
      message: `Delete ${odd}this?`,
      requestedSchema: {
        type: 'object' as const,
        properties: {
          [`pick${odd}`]: {
            type: 'string' as const,
            title: `Pick${odd}`,
            oneOf: [{ const: `a${odd}`, title: `A${odd}` }],
          },
          // A soft hyphen in a default: the box holds it as it is, so the default still fits.
          note: { type: 'string' as const, title: 'Note', maxLength: 4, default: 'ab\u00adc' },
        },
      },
    });
    const cookie = await signIn(page, 'alice');
    const body = await (await page(new Request(url, { headers: { cookie } }))).text();
    // Only a text box's own value carries the question's characters; names and options are positions.
    expect(body).not.toContain(odd);
    expect(body).toContain('value="ab\u00adc"');
    expect(body).toContain('This value holds characters that do not show: ab\\u{ad}c');
    const csrf = await csrfOf(page, url, cookie);
    const approved = await page(
      post(
        url,
        { csrf, form: FORM_LAYOUT, decision: 'approve', f0: '0', f1: 'ab\u00adc' },
        { cookie },
      ),
    );
    expect(approved.status).toBe(303);
    expect(await channel.decision(approval.id, approval)).toMatchObject({
      status: 'approved',
      content: { [`pick${odd}`]: `a${odd}`, note: 'ab\u00adc' },
    });
  });

  it('records the option the person picked when option values differ only in what a browser rewrites (CR, CRLF, NUL)', async () => {
    const { page, open, channel } = setup();
    // A browser posts CR and LF as CRLF and NUL as U+FFFD: as values, A would come back as B, C as D.
    const options = [
      { const: 'keep\nme', title: 'A: archive' },
      { const: 'keep\r\nme', title: 'B: DELETE EVERYTHING' },
      { const: 'x\u0000y', title: 'C: archive' },
      { const: 'x\ufffdy', title: 'D: DELETE ALL' },
    ];
    const { url, approval } = await open({
      requestedSchema: {
        type: 'object' as const,
        properties: { pick: { type: 'string' as const, title: 'Pick', oneOf: options } },
        required: ['pick'],
      },
    });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    expect(
      (await page(post(url, { csrf, form: FORM_LAYOUT, decision: 'approve', f0: '0' }, { cookie })))
        .status,
    ).toBe(303);
    expect(await channel.decision(approval.id, approval)).toMatchObject({
      status: 'approved',
      content: { pick: 'keep\nme' },
    });
    const after = await (await page(new Request(url, { headers: { cookie } }))).text();
    expect(after).toContain('<dt>Pick</dt><dd>A: archive</dd>');
  });

  it('refuses a position that names no option, on an optional choice and a multi-select too (400, nothing recorded)', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open({
      requestedSchema: {
        type: 'object' as const,
        properties: {
          pick: { type: 'string' as const, enum: ['a', '2'] }, // '2' a value, never a position
          many: { type: 'array' as const, items: { type: 'string' as const, enum: ['x', 'y'] } },
        },
      },
    });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const stray: Record<string, string>[] = [
      { f0: '2' },
      { f0: '01' },
      { f0: ' 1' },
      { f0: '1e0' },
      { f1: '7' },
    ];
    for (const fields of stray) {
      const response = await page(
        post(url, { csrf, form: FORM_LAYOUT, decision: 'approve', ...fields }, { cookie }),
      );
      expect(response.status, JSON.stringify(fields)).toBe(400);
      expect(await response.text()).toContain('is not one of the offered choices');
    }
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it('refuses a form of a page made by another version of the server (no layout marker), saying so', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open({ requestedSchema });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    // An earlier page posted property names: read as positions, they would be fields left empty.
    const response = await page(
      post(url, { csrf, decision: 'approve', note_id: 'note-1', f0: '0' }, { cookie }),
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('made by another version of the server');
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it("shows a re-rendered form of fields named like Object.prototype's members empty, not with its functions", async () => {
    const { page, open } = setup();
    const { url } = await open({
      requestedSchema: {
        type: 'object' as const,
        properties: {
          constructor: { type: 'string' as const, title: 'Constructor' },
          need: { type: 'string' as const, title: 'Need' },
        },
        required: ['need'],
      },
    });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const response = await page(
      post(url, { csrf, form: FORM_LAYOUT, decision: 'approve' }, { cookie }),
    );
    expect(response.status).toBe(400);
    const body = await response.text();
    expect(body).not.toContain('native code');
    expect(body).not.toContain('[object Object]');
  });

  it('denies without the fields', async () => {
    const { page, open, channel } = setup();
    const { url, approval } = await open({ requestedSchema });
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    expect((await page(post(url, { csrf, decision: 'deny' }, { cookie }))).status).toBe(303);
    expect(await channel.decision(approval.id, approval)).toMatchObject({ status: 'denied' });
  });
});
