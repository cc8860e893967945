/**
 * Passkeys on the approval page in a real browser: Debian's Chromium through
 * playwright-core, with Chromium's virtual authenticator over CDP (WebAuthn
 * domain) standing in for a person's device. What a person does, and what
 * each attack on a `presence` approval gets.
 */
import type { ApprovalChannel, PendingApproval } from '@mrtr/gate';
import { addVirtualAuthenticator } from '@mrtr/test-services/browser';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApprovalStore,
  createApprovalChannel,
  createApprovalPage,
  MemoryApprovalStore,
} from '../src/index.js';
import { chromiumAvailable, launchChromium, serve } from './browser.js';
import { USERS } from './helpers.js';
import { approval } from './store-contract.js';

const available = chromiumAvailable();

/** A person: a browser context with a platform authenticator that verifies its user. */
interface Person {
  context: BrowserContext;
  tab: Page;
  cdp: CDPSession;
  authenticatorId: string;
  problems: string[];
}

describe.skipIf(!available)('passkeys on the approval page, in Chromium', () => {
  let browser: Browser;
  let site: Awaited<ReturnType<typeof serve>>;
  let evil: Awaited<ReturnType<typeof serve>>;
  let store: ApprovalStore;
  let channel: ApprovalChannel;
  /** WebAuthn refuses IP addresses as RP IDs: the page lives on `localhost`. */
  let origin: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    site = await serve();
    evil = await serve();
    origin = `http://localhost:${site.port}`;
    store = new MemoryApprovalStore();
    channel = createApprovalChannel({ store, origin });
    site.use(
      createApprovalPage({
        store,
        origin,
        signIn: { users: USERS },
        serviceName: 'Service deleter',
        // Every test is a new device (browser context, authenticator) of the same people.
        passkeyRegistration: 'open',
      }),
    );
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await site?.close();
    await evil?.close();
  });

  async function person(): Promise<Person> {
    const context = await browser.newContext();
    contexts.push(context);
    const tab = await context.newPage();
    const problems: string[] = [];
    tab.on('pageerror', (e) => problems.push(e.message));
    const cdp = await context.newCDPSession(tab);
    const authenticatorId = await addVirtualAuthenticator(cdp);
    return { context, tab, cdp, authenticatorId, problems };
  }

  /** Sign in on the form the page sent us to. */
  async function signIn(tab: Page, principal: keyof typeof USERS) {
    expect(new URL(tab.url()).pathname).toBe('/approve/sign-in');
    await tab.getByLabel('Principal').fill(principal);
    await tab.getByLabel('Password').fill(USERS[principal]);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.waitForLoadState();
  }

  /** Register a passkey on the registration page (signing in first if asked); returns its id (base64url). */
  async function register(p: Person, principal: keyof typeof USERS = 'alice') {
    await p.tab.goto(`${origin}/approve/passkeys`);
    if (new URL(p.tab.url()).pathname === '/approve/sign-in') await signIn(p.tab, principal);
    await p.tab.getByLabel('Your page password').fill(USERS[principal]);
    await p.tab.getByRole('button', { name: 'Register a passkey' }).click();
    await p.tab.getByText('Your passkey is registered.').waitFor();
    const { credentials } = await p.cdp.send('WebAuthn.getCredentials', {
      authenticatorId: p.authenticatorId,
    });
    const ids = credentials.map((c) => Buffer.from(c.credentialId, 'base64').toString('base64url'));
    const mine = (await store.listCredentials(principal)).map((c) => c.id);
    const id = ids.find((i) => mine.includes(i));
    if (!id) throw new Error('the registered passkey is not in the store');
    return id;
  }

  async function open(overrides: Partial<PendingApproval> = {}) {
    const a = approval({ level: 'presence', ...overrides });
    return { approval: a, url: await channel.open(a) };
  }

  /**
   * Press "Approve with passkey" on the page at `url` and hold the resulting
   * assertion POST back (aborted before it is sent): returns its form body
   * and the page's CSRF token.
   */
  async function assertionFor(tab: Page, url: string) {
    await tab.goto(url);
    const csrf = await tab.locator('#passkey-form input[name=csrf]').inputValue();
    const body = new Promise<string>((resolve) => {
      void tab.route(`${url}/passkey`, async (route) => {
        resolve(route.request().postData() ?? '');
        await route.abort();
      });
    });
    await tab.getByRole('button', { name: 'Approve with passkey' }).click();
    const posted = await body;
    await tab.unrouteAll({ behavior: 'wait' });
    if (!posted) throw new Error('no assertion was posted');
    return { body: posted, csrf };
  }

  /** POST a captured form body as the page would (same origin), without following the redirect. */
  function replay(p: Person, url: string, body: string, headers: Record<string, string> = {}) {
    return p.context.request.post(url, {
      data: body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin,
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
      maxRedirects: 0,
    });
  }

  it('register from the approval page, approve with the passkey: approved via passkey, with its credential, once', async () => {
    const { url, approval: a } = await open({
      message: 'Delete service "billing-api" in production.',
    });
    const p = await person();
    await p.tab.goto(url);
    await signIn(p.tab, 'alice');
    await p.tab.getByText('you have none yet').waitFor();
    expect(await p.tab.getByRole('button', { name: /Approve/ }).count()).toBe(0);
    await p.tab.getByRole('link', { name: 'Register a passkey' }).click();
    // The page's scripts are deferred: until they ran, Enter in the password field does nothing.
    await p.tab.waitForURL(/\/passkeys/);
    await p.tab.waitForLoadState('load');
    // Enter in the password field starts the ceremony, as the button does.
    await p.tab.getByLabel('Your page password').fill(USERS.alice);
    await p.tab.getByLabel('Your page password').press('Enter');
    await p.tab.getByText('Your passkey is registered.').waitFor();
    const [credential] = await store.listCredentials('alice');
    expect(credential).toMatchObject({ principal: 'alice', transports: ['internal'] });
    await p.tab.getByRole('link', { name: 'Back to the request' }).click();
    expect(p.tab.url()).toBe(url);
    expect(await p.tab.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    const posted: string[] = [];
    p.tab.on('request', (r) => {
      if (r.url() === `${url}/passkey`) posted.push(r.postData() ?? '');
    });
    await p.tab.getByRole('button', { name: 'Approve with passkey' }).click();
    await p.tab.getByText('You approved this request').waitFor();
    const decision = await channel.decision(a.id, a);
    const credentialIds = (await store.listCredentials('alice')).map((c) => c.id);
    expect(decision).toMatchObject({ status: 'approved', via: 'passkey' });
    expect(credentialIds).toContain(decision.status === 'approved' && decision.credentialId);
    // The same assertion POSTed again: refused, the decision stays the first one.
    expect(posted).toHaveLength(1);
    const again = await replay(p, `${url}/passkey`, posted[0] as string);
    expect(again.status()).toBe(409);
    expect(await channel.decision(a.id, a)).toEqual(decision);
    expect(p.problems).toEqual([]);
  });

  it('an assertion made for another approval is refused, and records nothing on either', async () => {
    const p = await person();
    await register(p);
    const first = await open({ message: 'Delete service "svc-a".' });
    const second = await open({ message: 'Delete service "svc-b".' });
    const { body: forFirst } = await assertionFor(p.tab, first.url);
    // The second approval has a pending challenge of its own; its form's CSRF token goes along.
    const { csrf } = await assertionFor(p.tab, second.url);
    const moved = new URLSearchParams(forFirst);
    moved.set('csrf', csrf);
    const refused = await replay(p, `${second.url}/passkey`, moved.toString());
    expect(refused.status()).toBe(403);
    expect(await channel.decision(second.approval.id, second.approval)).toEqual({
      status: 'pending',
    });
    expect(await channel.decision(first.approval.id, first.approval)).toEqual({
      status: 'pending',
    });
    // The assertion itself was good: on its own approval it is recorded.
    const own = await replay(p, `${first.url}/passkey`, forFirst);
    expect(own.status()).toBe(303);
    expect(await channel.decision(first.approval.id, first.approval)).toMatchObject({
      status: 'approved',
      via: 'passkey',
    });
  });

  it("an assertion by another principal's passkey is refused and records nothing", async () => {
    const p = await person();
    const bobs = await register(p, 'bob');
    await p.tab.getByRole('button', { name: 'Sign out' }).click();
    await register(p, 'alice');
    const { url, approval: a } = await open();
    // A page (or a script) that swaps the allowed credentials for bob's.
    await p.tab.route(`${url}/passkey-options`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.options.allowCredentials = [{ id: bobs, type: 'public-key' }];
      await route.fulfill({ response, json: body });
    });
    await p.tab.goto(url);
    const answered = p.tab.waitForResponse(`${url}/passkey`);
    await p.tab.getByRole('button', { name: 'Approve with passkey' }).click();
    expect((await answered).status()).toBe(403);
    await p.tab.getByText('This passkey is not registered to alice').waitFor();
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
  });

  it('without user verification: the browser refuses, and an assertion without it is refused by the server', async () => {
    const p = await person();
    await register(p);
    await p.cdp.send('WebAuthn.setUserVerified', {
      authenticatorId: p.authenticatorId,
      isUserVerified: false,
    });
    const { url, approval: a } = await open();
    await p.tab.goto(url);
    await p.tab.getByRole('button', { name: 'Approve with passkey' }).click();
    await p.tab.getByText(/could not verify you\..*Nothing was recorded\./).waitFor();
    // A script that asks the authenticator not to verify the user: presence only.
    await p.tab.route(`${url}/passkey-options`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.options.userVerification = 'discouraged';
      await route.fulfill({ response, json: body });
    });
    const answered = p.tab.waitForResponse(`${url}/passkey`);
    await p.tab.getByRole('button', { name: 'Approve with passkey' }).click();
    expect((await answered).status()).toBe(403);
    await p.tab.getByText('user verification', { exact: false }).first().waitFor();
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
  });

  it('a cross-origin POST of a valid assertion is refused and records nothing', async () => {
    const p = await person();
    await register(p);
    const { url, approval: a } = await open();
    const body = new URLSearchParams((await assertionFor(p.tab, url)).body);
    const inputs = [...body]
      .map(
        ([k, v]) =>
          `<input name="${k}" value="${v.replaceAll('&', '&amp;').replaceAll('"', '&quot;')}">`,
      )
      .join('');
    evil.use(
      () =>
        new Response(
          `<form id="f" method="post" action="${url}/passkey">${inputs}</form><script>document.getElementById('f').submit()</script>`,
          { headers: { 'content-type': 'text/html' } },
        ),
    );
    for (const attacker of [evil.origin, `http://localhost:${evil.port}`]) {
      const landed = p.tab.waitForResponse((r) => r.url() === `${url}/passkey`);
      await p.tab.goto(`${attacker}/`);
      expect((await landed).status()).toBe(403);
    }
    const scripted = await replay(p, `${url}/passkey`, body.toString(), {
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(scripted.status()).toBe(403);
    const options = await replay(p, `${url}/passkey-options`, `csrf=${body.get('csrf')}`, {
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(options.status()).toBe(403);
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
    // The same body from the page's own origin is accepted: the origin made the difference.
    expect((await replay(p, `${url}/passkey`, body.toString())).status()).toBe(303);
  });

  it('a registration whose unsigned transport hints are not a list is kept without them, never a 500', async () => {
    const p = await person();
    await p.tab.route(`${origin}/approve/passkeys`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const form = new URLSearchParams(route.request().postData() ?? '');
      const registration = JSON.parse(form.get('registration') ?? '{}');
      registration.response.transports = 'usb';
      form.set('registration', JSON.stringify(registration));
      await route.continue({ postData: form.toString() });
    });
    const before = (await store.listCredentials('bob')).length;
    await p.tab.goto(`${origin}/approve/passkeys`);
    await signIn(p.tab, 'bob');
    const answered = p.tab.waitForResponse(
      (r) => r.url() === `${origin}/approve/passkeys` && r.request().method() === 'POST',
    );
    await p.tab.getByLabel('Your page password').fill(USERS.bob);
    await p.tab.getByRole('button', { name: 'Register a passkey' }).click();
    expect((await answered).status()).toBe(303);
    await p.tab.getByText('Your passkey is registered.').waitFor();
    const after = await store.listCredentials('bob');
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)?.transports).toEqual([]);
  });

  it('a choice made before the passkey is what the approval records; a URL approval may use a passkey too', async () => {
    const p = await person();
    await register(p);
    const requestedSchema = {
      type: 'object' as const,
      properties: {
        note_id: { type: 'string' as const, title: 'Note to delete', enum: ['note-1', 'note-2'] },
      },
      required: ['note_id'],
    };
    const { url, approval: a } = await open({ requestedSchema });
    await p.tab.goto(url);
    await p.tab.getByLabel('note-2').check();
    await p.tab.getByRole('button', { name: 'Approve with passkey' }).click();
    await p.tab.getByText('You approved this request').waitFor();
    expect(await channel.decision(a.id, a)).toMatchObject({
      via: 'passkey',
      content: { note_id: 'note-2' },
    });
    const plain = await open({ level: 'url' });
    await p.tab.goto(plain.url);
    expect(await p.tab.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(1);
    await p.tab.getByRole('button', { name: 'Approve with passkey' }).click();
    await p.tab.getByText('You approved this request').waitFor();
    expect(await channel.decision(plain.approval.id, plain.approval)).toMatchObject({
      status: 'approved',
      via: 'passkey',
    });
    expect(p.problems).toEqual([]);
  });
});
