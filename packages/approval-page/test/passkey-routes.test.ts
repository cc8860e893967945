/**
 * The passkey routes over HTTP semantics, without a browser: every refusal
 * that needs no authenticator, and that none of them records anything or
 * answers 500. The ceremonies themselves run in Chromium (passkeys.chromium.test.ts).
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { csrfToken } from '../src/csrf.js';
import { FORM_LAYOUT } from '../src/fields.js';
import {
  type ApprovalStore,
  CONTENT_SECURITY_POLICY,
  createApprovalPage,
  MemoryApprovalStore,
} from '../src/index.js';
import { REGISTRATION_LABEL } from '../src/registration.js';
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
import { credential, newRandom } from './store-contract.js';

/** The CSRF token a session would carry for `label`, read from its record in the store. */
async function tokenOf(store: ApprovalStore, cookie: string, label: string) {
  const session = await store.readSession(sessionKeyOf(cookie));
  if (!session) throw new Error('no session');
  return csrfToken(session.csrfSecret, label);
}

/** The JSON of a registration that reads as one but verifies for nothing. */
const UNVERIFIABLE_REGISTRATION = JSON.stringify({
  id: 'AAAA',
  rawId: 'AAAA',
  type: 'public-key',
  response: { clientDataJSON: 'AA', attestationObject: 'AA' },
  clientExtensionResults: {},
});

const json = async (response: Response) => (await response.json()) as Record<string, unknown>;

describe('the passkey scripts', () => {
  it('are served as same-origin files with the headers, and the CSP allows only those', async () => {
    const { page } = setup();
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("connect-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    for (const file of ['passkey.js', 'webauthn.js']) {
      const response = await page(new Request(`${ORIGIN}/approve/assets/${file}`));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expectSecurityHeaders(response);
      expect((await response.text()).length).toBeGreaterThan(500);
      expect((await page(post(`${ORIGIN}/approve/assets/${file}`, {}))).status).toBe(405);
    }
    const bundle = await (await page(new Request(`${ORIGIN}/approve/assets/webauthn.js`))).text();
    expect(bundle).toContain('SimpleWebAuthnBrowser');
  });
});

describe('passkey options for an approval', () => {
  async function ready(level: 'presence' | 'url' = 'presence') {
    const kit = setup();
    const opened = await kit.open({ level });
    const cookie = await signIn(kit.page, 'alice');
    const csrf = await csrfOf(kit.page, opened.url, cookie);
    return { ...kit, ...opened, cookie, csrf, options: `${opened.url}/passkey-options` };
  }

  it('refuses without a registered passkey (409), and keeps no challenge', async () => {
    const { page, options, cookie, csrf, store, approval } = await ready();
    const response = await page(post(options, { csrf, password: USERS.alice }, { cookie }));
    expect(response.status).toBe(409);
    expect(await json(response)).toEqual({
      error: 'You have no passkey registered. Nothing was recorded.',
    });
    expect((await store.get(approval.id))?.challenge).toBeUndefined();
  });

  it('answers request options whose challenge is the one kept with the approval', async () => {
    const { page, options, cookie, csrf, store, approval } = await ready();
    const mine = credential();
    await store.addCredential(mine);
    await store.addCredential(credential({ principal: 'bob' }));
    const response = await page(post(options, { csrf, password: USERS.alice }, { cookie }));
    expect(response.status).toBe(200);
    expectSecurityHeaders(response);
    const body = (await json(response)).options as Record<string, unknown>;
    const kept = (await store.get(approval.id))?.challenge;
    expect(body.challenge).toBe(kept?.challenge);
    expect(body).toMatchObject({
      rpId: '127.0.0.1',
      userVerification: 'required',
      allowCredentials: [{ id: mine.id, type: 'public-key', transports: ['internal'] }],
    });
    const again = (
      await json(await page(post(options, { csrf, password: USERS.alice }, { cookie })))
    ).options as {
      challenge: string;
    };
    expect(again.challenge).not.toBe(body.challenge);
    expect((await store.get(approval.id))?.challenge?.challenge).toBe(again.challenge);
  });

  it('refuses another origin, no sign-in, a bad CSRF token, another principal, a decided approval', async () => {
    const { page, options, cookie, csrf, store, approval } = await ready();
    await store.addCredential(credential());
    await store.addCredential(credential({ principal: 'bob' }));
    const bob = await signIn(page, 'bob');
    const bobsToken = csrfToken('x'.repeat(43), approval.id);
    const attempts: [Request, number][] = [
      [
        post(options, { csrf, password: USERS.alice }, { cookie, origin: 'https://evil.example' }),
        403,
      ],
      [
        post(options, { csrf, password: USERS.alice }, { cookie, 'sec-fetch-site': 'cross-site' }),
        403,
      ],
      [post(options, { csrf, password: USERS.alice }), 401],
      [post(options, { csrf: bobsToken }, { cookie }), 403],
      [post(options, {}, { cookie }), 403],
      // bob, signed in with a valid token of his own session for this approval id.
      [post(options, { csrf: await tokenOf(store, bob, approval.id) }, { cookie: bob }), 403],
    ];
    for (const [request, status] of attempts) {
      const response = await page(request);
      expect(response.status).toBe(status);
      expect(typeof (await json(response)).error).toBe('string');
    }
    expect((await store.get(approval.id))?.challenge).toBeUndefined();
    await store.decide({ id: approval.id, principal: 'alice', outcome: 'denied' });
    expect((await page(post(options, { csrf, password: USERS.alice }, { cookie }))).status).toBe(
      409,
    );
  });

  it('refuses answers that do not fit the question (400) and keeps no challenge', async () => {
    const kit = setup();
    const requestedSchema = {
      type: 'object' as const,
      properties: { note_id: { type: 'string' as const, enum: ['note-1', 'note-2'] } },
      required: ['note_id'],
    };
    const { url, approval } = await kit.open({ level: 'presence', requestedSchema });
    await kit.store.addCredential(credential());
    const cookie = await signIn(kit.page, 'alice');
    const csrf = await csrfOf(kit.page, url, cookie);
    // Fields are posted by position (f0), options as their position.
    for (const fields of [{}, { f0: '2' }, { f0: 'note-1' }] as Record<string, string>[]) {
      const response = await kit.page(
        post(`${url}/passkey-options`, { csrf, form: FORM_LAYOUT, ...fields }, { cookie }),
      );
      expect(response.status).toBe(400);
      expect(String((await json(response)).error)).toContain('note_id');
    }
    expect((await kit.store.get(approval.id))?.challenge).toBeUndefined();
    const ok = await kit.page(
      post(`${url}/passkey-options`, { csrf, form: FORM_LAYOUT, f0: '0' }, { cookie }),
    );
    expect(ok.status).toBe(200);
    expect((await kit.store.get(approval.id))?.challenge?.content).toEqual({ note_id: 'note-1' });
  });

  it('refuses answers that fit the form but not a store (400, not 500), and keeps no challenge', async () => {
    const kit = setup();
    const requestedSchema = {
      type: 'object' as const,
      properties: { reason: { type: 'string' as const, title: 'Reason' } },
    };
    const { url, approval } = await kit.open({ level: 'url', requestedSchema });
    await kit.store.addCredential(credential());
    const cookie = await signIn(kit.page, 'alice');
    const csrf = await csrfOf(kit.page, url, cookie);
    // 30,000 raw (not percent-encoded) control bytes: under the form's 32 KiB, a valid
    // string, and 180,000 characters as JSON.
    const head = new URLSearchParams({ csrf, form: FORM_LAYOUT }).toString();
    const request = post(`${url}/passkey-options`, {}, { cookie });
    const response = await kit.page(
      new Request(request, { body: `${head}&f0=${'\u0001'.repeat(30_000)}` }),
    );
    expect(response.status).toBe(400);
    expect(String((await json(response)).error)).toContain('too long to record');
    expect((await kit.store.get(approval.id))?.challenge).toBeUndefined();
  });

  it('spells out a field name that would reorder the refusal the page shows', async () => {
    const kit = setup();
    const name = 'note\u202eid';
    const requestedSchema = {
      type: 'object' as const,
      properties: { [name]: { type: 'string' as const } },
      required: [name],
    };
    const { url } = await kit.open({ level: 'presence', requestedSchema });
    await kit.store.addCredential(credential());
    const cookie = await signIn(kit.page, 'alice');
    const csrf = await csrfOf(kit.page, url, cookie);
    const response = await kit.page(
      post(`${url}/passkey-options`, { csrf, form: FORM_LAYOUT }, { cookie }),
    );
    expect(response.status).toBe(400);
    const error = String((await json(response)).error);
    expect(error).toContain('note\\u{202e}id');
    expect(error).not.toContain('\u202e');
  });
});

describe('the passkey assertion POST', () => {
  it('refuses what cannot be an assertion, one without a pending challenge, and hostile bodies, recording nothing', async () => {
    const { page, open, store, channel } = setup();
    const { url, approval } = await open({ level: 'presence' });
    await store.addCredential(credential());
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const target = `${url}/passkey`;
    const forged = JSON.stringify({
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' },
      clientExtensionResults: {},
    });
    const cases: [Record<string, string>, number][] = [
      [{ csrf }, 400],
      [{ csrf, assertion: 'not json' }, 400],
      [{ csrf, assertion: '{"id":"x y"}' }, 400],
      [{ csrf, assertion: '\u0000\ud800' }, 400],
      [{ csrf, assertion: JSON.stringify({ ...JSON.parse(forged), type: 'other' }) }, 400],
      [{ csrf, assertion: forged }, 403],
    ];
    for (const [fields, status] of cases) {
      const response = await page(post(target, fields, { cookie }));
      expect(response.status).toBe(status);
      expectSecurityHeaders(response);
    }
    await store.setChallenge({
      id: approval.id,
      principal: 'alice',
      random: newRandom(),
      content: {},
      expiresAt: Date.now() + 60_000,
    });
    // An unknown credential, then a well-formed but invalid signature by a known one.
    expect((await page(post(target, { csrf, assertion: forged }, { cookie }))).status).toBe(403);
    const [known] = await store.listCredentials('alice');
    const signed = JSON.stringify({ ...JSON.parse(forged), id: known?.id, rawId: known?.id });
    const response = await page(post(target, { csrf, assertion: signed }, { cookie }));
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('The passkey answer was refused');
    const huge = await page(post(target, { csrf, assertion: 'x'.repeat(40_000) }, { cookie }));
    expect(huge.status).toBe(400);
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
  });

  it('approves with an assertion signed in a top-level page; refuses one made in a frame and says nothing of the challenge', async () => {
    const { page, open, store, channel } = setup();
    const { url, approval } = await open({ level: 'presence' });
    // An Ed25519 authenticator in software: its COSE key (RFC 9053 OKP) is what the store keeps.
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const x = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
    const cose = Buffer.concat([
      Buffer.from([0xa4, 0x01, 0x01, 0x03, 0x27, 0x20, 0x06, 0x21, 0x58, 0x20]),
      x,
    ]);
    const id = randomBytes(16).toString('base64url');
    await store.addCredential(credential({ id, publicKey: cose.toString('base64url') }));
    const cookie = await signIn(page, 'alice');
    const csrf = await csrfOf(page, url, cookie);
    const challengeOf = async () =>
      (
        (await json(await page(post(`${url}/passkey-options`, { csrf }, { cookie })))).options as {
          challenge: string;
        }
      ).challenge;
    let counter = 0;
    const assertion = (challenge: string, crossOrigin: boolean, key = privateKey) => {
      const clientData = Buffer.from(
        JSON.stringify({ type: 'webauthn.get', challenge, origin: ORIGIN, crossOrigin }),
      );
      const flags = Buffer.from([0x05]); // user present, user verified
      const count = Buffer.alloc(4);
      count.writeUInt32BE(++counter);
      const authData = Buffer.concat([
        createHash('sha256').update('127.0.0.1').digest(),
        flags,
        count,
      ]);
      const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()]);
      return JSON.stringify({
        id,
        rawId: id,
        type: 'public-key',
        response: {
          clientDataJSON: clientData.toString('base64url'),
          authenticatorData: authData.toString('base64url'),
          signature: sign(null, signed, key).toString('base64url'),
        },
        clientExtensionResults: {},
      });
    };
    const send = (a: string) => page(post(`${url}/passkey`, { csrf, assertion: a }, { cookie }));
    const old = await challengeOf();
    const current = await challengeOf();
    const framed = await send(assertion(current, true));
    expect(framed.status).toBe(403);
    expect(await framed.text()).toContain('not given on this page itself');
    const stale = await send(assertion(old, false));
    expect(stale.status).toBe(403);
    const text = await stale.text();
    expect(text).toContain('does not verify for this approval');
    expect(text).not.toContain(current);
    // Everything right but the key that signed: told as a signature that does not verify.
    const forged = await send(assertion(current, false, generateKeyPairSync('ed25519').privateKey));
    expect(forged.status).toBe(403);
    const forgedText = await forged.text();
    expect(forgedText).toContain('its signature does not verify');
    expect(forgedText).not.toContain('user verification');
    expect(await channel.decision(approval.id, approval)).toEqual({ status: 'pending' });
    const approved = await send(assertion(current, false));
    expect(approved.status).toBe(303);
    expect((await channel.decision(approval.id, approval)).status).toBe('approved');
  });

  it('answers unknown routes under an approval with 404 and wrong methods with 405', async () => {
    const { page, open } = setup();
    const { url } = await open();
    const cookie = await signIn(page, 'alice');
    expect((await page(new Request(`${url}/passkey`, { headers: { cookie } }))).status).toBe(405);
    expect(
      (await page(new Request(`${url}/passkey-options`, { headers: { cookie } }))).status,
    ).toBe(405);
    for (const path of [`${url}/other`, `${url}/passkey/x`, `${url}/`])
      expect((await page(new Request(path, { headers: { cookie } }))).status).toBe(404);
  });
});

/** Alice signed in on the registration page: her cookie and the page's CSRF token. */
async function onRegistrationPage(page: (request: Request) => Promise<Response>) {
  const cookie = await signIn(page, 'alice');
  const list = await (
    await page(new Request(`${ORIGIN}/approve/passkeys`, { headers: { cookie } }))
  ).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(list)?.[1] ?? '' };
}

describe('registering needs the page password, not only the session', () => {
  it('refuses a session cookie without the password (one replayed from another port of the host), and counts the tries', async () => {
    const { page, store } = setup({ attempts: { limit: 3, windowSeconds: 60 } });
    const { cookie, csrf } = await onRegistrationPage(page);
    const listed = await (
      await page(new Request(`${ORIGIN}/approve/passkeys`, { headers: { cookie } }))
    ).text();
    expect(listed).toMatch(/<input id="passkey-password" type="password"[^>]*required/);
    // Outside the form that posts the credential, and with no name: Enter never posts it there.
    const form = /<form id="passkey-form"[\s\S]*?<\/form>/.exec(listed)?.[0] ?? '';
    expect(form).toContain('name="registration"');
    expect(form).not.toContain('password');
    const options = `${ORIGIN}/approve/passkeys/options`;
    const none = await page(post(options, { csrf }, { cookie }));
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: string }).error).toContain('Nothing was registered');
    const wrong = await page(post(options, { csrf, password: 'not-alice-password' }, { cookie }));
    expect(wrong.status).toBe(401);
    // The third try of the window (limit 3) still counts; the fourth is held back, right or not.
    expect((await page(post(options, { csrf, password: 'x' }, { cookie }))).status).toBe(401);
    const held = await page(post(options, { csrf, password: USERS.alice }, { cookie }));
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    // Nothing was started: a registration posted now finds no challenge of this session.
    const posted = await page(
      post(
        `${ORIGIN}/approve/passkeys`,
        { csrf, registration: UNVERIFIABLE_REGISTRATION },
        { cookie },
      ),
    );
    expect(posted.status).toBe(403);
    expect(await store.listCredentials('alice')).toEqual([]);
  });

  it('gives options for the right password; a page on a SignInHook asks none', async () => {
    const { page } = setup();
    const { cookie, csrf } = await onRegistrationPage(page);
    const right = await page(
      post(`${ORIGIN}/approve/passkeys/options`, { csrf, password: USERS.alice }, { cookie }),
    );
    expect(right.status).toBe(200);
    expect(((await right.json()) as { options: { challenge: string } }).options.challenge).toMatch(
      /^[\w-]+$/,
    );
    // Behind a SignInHook the page knows no password: the hook's session is what it has.
    const secret = 'hook-csrf-secret-0123456789abcdef0123';
    const hooked = createApprovalPage({
      store: new MemoryApprovalStore(),
      origin: ORIGIN,
      signIn: {
        authenticate: () => ({ principal: 'alice', csrfSecret: secret }),
        signInUrl: () => '/sso',
      },
    });
    const shown = await (await hooked(new Request(`${ORIGIN}/approve/passkeys`))).text();
    expect(shown).toContain('passkey-register');
    expect(shown).not.toContain('type="password"');
    const csrf2 = csrfToken(secret, REGISTRATION_LABEL);
    expect((await hooked(post(`${ORIGIN}/approve/passkeys/options`, { csrf: csrf2 }))).status).toBe(
      200,
    );
  });
});

describe('the registration page', () => {
  it('says why passkeys cannot work on a page served at an IP address, and not under a name', async () => {
    const onIp = setup();
    const ip = await onRegistrationPage(onIp.page);
    const listed = await (
      await onIp.page(new Request(`${ORIGIN}/approve/passkeys`, { headers: { cookie: ip.cookie } }))
    ).text();
    expect(listed).toContain('served at an IP address (127.0.0.1)');
    const { url } = await onIp.open({ level: 'presence' });
    const approval = await (
      await onIp.page(new Request(url, { headers: { cookie: ip.cookie } }))
    ).text();
    expect(approval).toContain('served at an IP address (127.0.0.1)');
    const named = setup({ origin: 'http://localhost:4100' });
    const cookie = await signIn(named.page, 'alice', 'http://localhost:4100');
    const page = await (
      await named.page(
        new Request('http://localhost:4100/approve/passkeys', { headers: { cookie } }),
      )
    ).text();
    expect(page).toContain('Register a passkey');
    expect(page).not.toContain('IP address');
  });

  it('sends a person who is not signed in to the sign-in, and back afterwards', async () => {
    const { page, open } = setup();
    const { url } = await open({ level: 'presence' });
    const path = `/approve/passkeys?return=${encodeURIComponent(new URL(url).pathname)}`;
    const first = await page(new Request(`${ORIGIN}${path}`));
    expect(first.status).toBe(303);
    const signInPath = first.headers.get('location') ?? '';
    expect(new URL(signInPath, ORIGIN).searchParams.get('return')).toBe(path);
    const back = await page(
      post(`${ORIGIN}/approve/sign-in`, {
        principal: 'alice',
        password: 'alice-token-0123456789',
        return: path,
      }),
    );
    expect(back.headers.get('location')).toBe(path);
    const cookie = (back.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const shown = await page(new Request(`${ORIGIN}${path}`, { headers: { cookie } }));
    expect(shown.status).toBe(200);
    const html = await shown.text();
    expect(html).toContain('You have no passkey registered yet.');
    expect(html).toContain(`<script src="/approve/assets/webauthn.js" defer></script>`);
    expect(html).toContain(`href="${new URL(url).pathname}"`);
    for (const evil of [
      '/approve/passkeys?return=https%3A%2F%2Fevil.example',
      '/approve/passkeys?return=%2Fapprove%2Fsign-in',
    ])
      expect(
        (
          await page(
            post(`${ORIGIN}/approve/sign-in`, {
              principal: 'alice',
              password: 'alice-token-0123456789',
              return: evil,
            }),
          )
        ).status,
      ).toBe(200);
  });

  it('gives creation options that require user verification and exclude the passkeys already registered', async () => {
    const { page, store } = setup({ passkeyRegistration: 'open' });
    const cookie = await signIn(page, 'alice');
    const mine = credential();
    await store.addCredential(mine);
    const list = await (
      await page(new Request(`${ORIGIN}/approve/passkeys`, { headers: { cookie } }))
    ).text();
    expect(list).toContain(mine.id.slice(0, 8));
    const csrf = /name="csrf" value="([^"]+)"/.exec(list)?.[1] ?? '';
    const response = await page(
      post(`${ORIGIN}/approve/passkeys/options`, { csrf, password: USERS.alice }, { cookie }),
    );
    expect(response.status).toBe(200);
    const { options } = (await response.json()) as { options: Record<string, unknown> };
    expect(options).toMatchObject({
      rp: { id: '127.0.0.1', name: 'Test deleter' },
      user: { name: 'alice' },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      excludeCredentials: [{ id: mine.id, type: 'public-key' }],
    });
  });

  it('registers a passkey made on the page itself; refuses one made in a frame', async () => {
    const { page, store } = setup();
    const { cookie, csrf } = await onRegistrationPage(page);
    // A "none" attestation of an Ed25519 credential, CBOR written out (RFC 8949): what an
    // authenticator returns for navigator.credentials.create.
    const { publicKey } = generateKeyPairSync('ed25519');
    const x = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
    const cose = Buffer.concat([
      Buffer.from([0xa4, 0x01, 0x01, 0x03, 0x27, 0x20, 0x06, 0x21, 0x58, 0x20]),
      x,
    ]);
    // An RS256 key whose 4,000-byte modulus is longer than a store keeps: {1: 3, 3: -257, -1: n, -2: e}.
    const bigKey = Buffer.concat([
      Buffer.from([0xa4, 0x01, 0x03, 0x03, 0x39, 0x01, 0x00, 0x20, 0x59, 0x0f, 0xa0]),
      Buffer.concat([Buffer.from([0xc1]), randomBytes(3999)]),
      Buffer.from([0x21, 0x43, 0x01, 0x00, 0x01]),
    ]);
    const registration = async (
      crossOrigin: boolean,
      {
        idBytes = 16,
        posted,
        key = cose,
      }: { idBytes?: number; posted?: string; key?: Buffer } = {},
    ) => {
      const options = await page(
        post(`${ORIGIN}/approve/passkeys/options`, { csrf, password: USERS.alice }, { cookie }),
      );
      const { challenge } = ((await options.json()) as { options: { challenge: string } }).options;
      const id = randomBytes(idBytes);
      const authData = Buffer.concat([
        createHash('sha256').update('127.0.0.1').digest(),
        Buffer.from([0x45, 0, 0, 0, 0]), // user present, user verified, attested data; counter 0
        Buffer.alloc(16), // AAGUID
        Buffer.from([id.length >> 8, id.length & 0xff]),
        id,
        key,
      ]);
      const length =
        authData.length < 256
          ? Buffer.from([0x58, authData.length])
          : Buffer.from([0x59, authData.length >> 8, authData.length & 0xff]);
      const text = (t: string) => Buffer.concat([Buffer.from([0x60 + t.length]), Buffer.from(t)]);
      const attestation = Buffer.concat([
        Buffer.from([0xa3]),
        text('fmt'),
        text('none'),
        text('attStmt'),
        Buffer.from([0xa0]),
        text('authData'),
        length,
        authData,
      ]);
      const clientData = JSON.stringify({
        type: 'webauthn.create',
        challenge,
        origin: ORIGIN,
        crossOrigin,
      });
      return JSON.stringify({
        id: posted ?? id.toString('base64url'),
        rawId: posted ?? id.toString('base64url'),
        type: 'public-key',
        response: {
          clientDataJSON: Buffer.from(clientData).toString('base64url'),
          attestationObject: attestation.toString('base64url'),
        },
        clientExtensionResults: {},
      });
    };
    const send = async (
      crossOrigin: boolean,
      shape?: { idBytes?: number; posted?: string; key?: Buffer },
    ) =>
      page(
        post(
          `${ORIGIN}/approve/passkeys`,
          { csrf, registration: await registration(crossOrigin, shape) },
          { cookie },
        ),
      );
    const framed = await send(true);
    expect(framed.status).toBe(403);
    expect(await framed.text()).toContain('not made on this page itself');
    // Authenticator data naming a credential id other than the posted one (over 1023 bytes, or
    // short), or a public key longer than the store keeps: 400, nothing kept (each was a 500).
    for (const shape of [{ idBytes: 1100, posted: 'AAAA' }, { posted: 'ZZZZZZZZ' }]) {
      const other = await send(false, shape);
      expect(other.status).toBe(400);
      expect(await other.text()).toContain('names another credential');
    }
    const bigger = await send(false, { key: bigKey });
    expect(bigger.status).toBe(400);
    expect(await bigger.text()).toContain('its public key is too long. Nothing was registered.');
    expect(await store.listCredentials('alice')).toEqual([]);
    expect((await send(false)).status).toBe(303);
    expect(await store.listCredentials('alice')).toHaveLength(1);
  });

  it('refuses a registration without a challenge of this session, a bad token, another origin; removes only its own passkeys', async () => {
    const { page, store } = setup({ passkeyRegistration: 'open' });
    const { cookie, csrf } = await onRegistrationPage(page);
    const registration = UNVERIFIABLE_REGISTRATION;
    const target = `${ORIGIN}/approve/passkeys`;
    expect((await page(post(target, { csrf, registration }, { cookie }))).status).toBe(403);
    expect((await page(post(target, { csrf, registration: '[' }, { cookie }))).status).toBe(400);
    expect(
      (
        await page(
          post(
            target,
            { csrf: csrfToken('y'.repeat(43), REGISTRATION_LABEL), registration },
            { cookie },
          ),
        )
      ).status,
    ).toBe(403);
    expect(
      (await page(post(target, { csrf, registration }, { cookie, origin: 'https://evil.example' })))
        .status,
    ).toBe(403);
    expect(await store.listCredentials('alice')).toEqual([]);
    const bobs = credential({ principal: 'bob' });
    await store.addCredential(bobs);
    const remove = `${ORIGIN}/approve/passkeys/remove`;
    expect((await page(post(remove, { csrf, id: bobs.id }, { cookie }))).status).toBe(404);
    expect(await store.getCredential(bobs.id)).toEqual(bobs);
    const mine = credential();
    await store.addCredential(mine);
    expect((await page(post(remove, { csrf, id: mine.id }, { cookie }))).status).toBe(303);
    expect(await store.getCredential(mine.id)).toBeUndefined();
  });
});

describe('passkeyRegistration', () => {
  const list = async (page: (r: Request) => Promise<Response>, cookie: string) =>
    (await page(new Request(`${ORIGIN}/approve/passkeys`, { headers: { cookie } }))).text();

  it("'first-only' (the default): the first passkey may be registered; then none is added or removed here", async () => {
    const { page, store } = setup();
    const { cookie, csrf } = await onRegistrationPage(page);
    const options = `${ORIGIN}/approve/passkeys/options`;
    expect((await page(post(options, { csrf, password: USERS.alice }, { cookie }))).status).toBe(
      200,
    );
    const mine = credential();
    await store.addCredential(mine);
    const shown = await list(page, cookie);
    expect(shown).not.toContain('passkey-register');
    expect(shown).not.toContain('/approve/passkeys/remove');
    // Beside the passkey just registered, what is kept, not an error.
    expect(shown).toContain('Your passkeys stay as they are');
    expect(shown).not.toContain('does not let');
    const refused = await page(post(options, { csrf, password: USERS.alice }, { cookie }));
    expect(refused.status).toBe(403);
    expect(((await json(refused)) as { error: string }).error).toContain('ask its operator');
    // The registration POST asks again: options fetched before the first passkey do not help.
    const registration = UNVERIFIABLE_REGISTRATION;
    const posted = await page(
      post(`${ORIGIN}/approve/passkeys`, { csrf, registration }, { cookie }),
    );
    expect(posted.status).toBe(403);
    expect(await posted.text()).toContain('Nothing was registered');
    const removed = await page(
      post(`${ORIGIN}/approve/passkeys/remove`, { csrf, id: mine.id }, { cookie }),
    );
    expect(removed.status).toBe(403);
    expect(await removed.text()).toContain('Nothing was removed');
    expect(await store.listCredentials('alice')).toEqual([mine]);
  });

  it('a rule of your own is asked with the principal, the action, the count and the request', async () => {
    const asked: unknown[] = [];
    const { page, store } = setup({
      passkeyRegistration: ({ principal, action, passkeys, request }) => {
        asked.push({ principal, action, passkeys, fresh: request.headers.get('x-fresh') });
        return request.headers.get('x-fresh') === '1';
      },
    });
    const cookie = await signIn(page, 'alice');
    // The list shows no registration form to a session the rule refuses: the token from the store.
    expect(await list(page, cookie)).not.toContain('passkey-register');
    const csrf = await tokenOf(store, cookie, REGISTRATION_LABEL);
    const options = `${ORIGIN}/approve/passkeys/options`;
    expect((await page(post(options, { csrf, password: USERS.alice }, { cookie }))).status).toBe(
      403,
    );
    expect(
      (await page(post(options, { csrf, password: USERS.alice }, { cookie, 'x-fresh': '1' })))
        .status,
    ).toBe(200);
    const mine = credential();
    await store.addCredential(mine);
    const remove = `${ORIGIN}/approve/passkeys/remove`;
    expect((await page(post(remove, { csrf, id: mine.id }, { cookie }))).status).toBe(403);
    expect(await store.getCredential(mine.id)).toEqual(mine);
    expect(
      (await page(post(remove, { csrf, id: mine.id }, { cookie, 'x-fresh': '1' }))).status,
    ).toBe(303);
    expect(await store.getCredential(mine.id)).toBeUndefined();
    expect(asked).toContainEqual({ principal: 'alice', action: 'remove', passkeys: 1, fresh: '1' });
    expect(asked).toContainEqual({
      principal: 'alice',
      action: 'register',
      passkeys: 0,
      fresh: null,
    });
  });

  it('a rule that throws or rejects allows nothing, and is no 500', async () => {
    for (const rule of [
      () => {
        throw new Error('directory down');
      },
      async () => Promise.reject(new Error('directory down')),
    ]) {
      const { page, store, errors } = setup({ passkeyRegistration: rule });
      const cookie = await signIn(page, 'alice');
      const shown = await page(new Request(`${ORIGIN}/approve/passkeys`, { headers: { cookie } }));
      expect(shown.status).toBe(200);
      expect(await shown.text()).toContain('ask its operator');
      const csrf = await tokenOf(store, cookie, REGISTRATION_LABEL);
      const options = await page(
        post(`${ORIGIN}/approve/passkeys/options`, { csrf, password: USERS.alice }, { cookie }),
      );
      expect(options.status).toBe(403);
      expect(errors).toEqual([]);
    }
  });

  it('refuses a value that is not a policy at creation', () => {
    expect(() => setup({ passkeyRegistration: 'closed' as never })).toThrow(
      /passkeyRegistration must be 'first-only', 'open' or a function/,
    );
  });
});
