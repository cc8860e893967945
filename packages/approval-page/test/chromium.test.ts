/**
 * The approval page in a real browser (Debian's Chromium through
 * playwright-core): what a person sees and does, and what each attack gets.
 */
import type { ApprovalChannel, PendingApproval } from '@mrtr/gate';
import { pgPoolDriver } from '@mrtr/sql';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import type pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createApprovalChannel,
  createApprovalPage,
  MemoryApprovalStore,
  migrateApprovalTables,
  PostgresApprovalStore,
} from '../src/index.js';
import { chromiumAvailable, launchChromium, serve } from './browser.js';
import { USERS } from './helpers.js';
import { approval } from './store-contract.js';

const available = chromiumAvailable();

/** A browser context with its console errors, page errors and requests recorded. */
async function person(browser: Browser) {
  const context = await browser.newContext();
  const tab = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  tab.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  tab.on('pageerror', (e) => problems.push(e.message));
  tab.on('request', (r) => requests.push(r.url()));
  return { context, tab, problems, requests };
}

/** Fill the built-in sign-in form the page redirected to. */
async function signInOnForm(tab: Page, principal: keyof typeof USERS) {
  await tab.getByLabel('Principal').fill(principal);
  await tab.getByLabel('Password').fill(USERS[principal]);
  await tab.getByRole('button', { name: 'Sign in' }).click();
}

/** Open `url` signed out, sign in on the form, and land on the approval page. */
async function reach(tab: Page, url: string, principal: keyof typeof USERS = 'alice') {
  await tab.goto(url);
  expect(new URL(tab.url()).pathname).toBe('/approve/sign-in');
  await signInOnForm(tab, principal);
  await tab.waitForLoadState();
}

describe.skipIf(!available)('the approval page in Chromium', () => {
  let browser: Browser;
  let site: Awaited<ReturnType<typeof serve>>;
  let evil: Awaited<ReturnType<typeof serve>>;
  let channel: ApprovalChannel;
  const contexts: BrowserContext[] = [];

  /** How far the clock of this block's store, channel and page is ahead of `Date.now()`, ms. */
  const clock = { skewMs: 0 };
  afterEach(() => {
    clock.skewMs = 0;
  });

  async function open(overrides: Partial<PendingApproval> = {}) {
    const a = approval(overrides);
    return { approval: a, url: await channel.open(a) };
  }
  async function newPerson() {
    const p = await person(browser);
    contexts.push(p.context);
    return p;
  }

  beforeAll(async () => {
    browser = await launchChromium();
    site = await serve();
    evil = await serve();
    // One clock for the store, the channel and the page, which a test may move forward.
    const now = () => Date.now() + clock.skewMs;
    const store = new MemoryApprovalStore({ now });
    channel = createApprovalChannel({ store, origin: site.origin, now });
    site.use(
      createApprovalPage({
        store,
        origin: site.origin,
        signIn: { users: USERS },
        serviceName: 'Service deleter',
        now,
      }),
    );
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await site?.close();
    await evil?.close();
  });

  it('sign in from the link, approve: the decision is approved, styled by its own CSS, no errors', async () => {
    const { url, approval: a } = await open();
    const { tab, problems } = await newPerson();
    await reach(tab, url);
    expect(tab.url()).toBe(url);
    await expect(tab.locator('.message').textContent()).resolves.toBe(a.message);
    expect(
      await tab.locator('.consequence').evaluate((e) => getComputedStyle(e).borderTopColor),
    ).toBe('rgb(180, 35, 24)');
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
    await tab.getByRole('button', { name: 'Approve' }).click();
    await expect(
      tab.getByRole('heading', { name: 'You approved this request' }).count(),
    ).resolves.toBe(1);
    expect(await channel.decision(a.id, a)).toMatchObject({ status: 'approved', via: 'url' });
    expect(problems).toEqual([]);
  });

  // helper-152 F3: a double click begun on another page landed its second click on Approve.
  it('Approve takes no click until the page has been in front for APPROVE_AFTER_MS', async () => {
    const { url, approval: a } = await open();
    const { tab, problems } = await newPerson();
    await reach(tab, url);
    // A lure navigates this tab to the approval between the two clicks of a double click.
    await tab.goto('about:blank');
    await tab.goto(url);
    const approve = tab.locator('#approve');
    expect(await approve.getAttribute('aria-disabled')).toBe('true');
    // The second click, a moment after the page appeared, does nothing.
    await approve.click({ force: true, timeout: 1000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
    // helper-158 M1: a game of "click ten times fast" goes on past the second: each click restarts the wait.
    for (let i = 0; i < 12; i++) {
      await approve.click({ force: true, timeout: 1000 });
      await new Promise((resolve) => setTimeout(resolve, 180));
    }
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
    expect(await tab.getByText('Approve shows a moment after').isVisible()).toBe(false);
    // Read for a moment without clicking, then clicked: approved.
    await tab.waitForFunction(
      () => document.getElementById('approve')?.getAttribute('aria-disabled') === 'false',
    );
    await tab.getByRole('button', { name: 'Approve' }).click();
    await tab.getByText('You approved this request').waitFor();
    expect(await channel.decision(a.id, a)).toMatchObject({ status: 'approved' });
    expect(problems).toEqual([]);
  });

  it('deny: the decision is denied and the page says nothing will run', async () => {
    const { url, approval: a } = await open();
    const { tab } = await newPerson();
    await reach(tab, url);
    await tab.getByRole('button', { name: 'Deny' }).click();
    await expect(tab.getByText('You denied this request').count()).resolves.toBe(1);
    expect(await channel.decision(a.id, a)).toMatchObject({ status: 'denied' });
  });

  it('a choice among candidates: pick one and approve, the decision carries it', async () => {
    const requestedSchema = {
      type: 'object' as const,
      properties: {
        note_id: {
          type: 'string' as const,
          title: 'Note to delete',
          enum: ['note-1', 'note-2', 'note-3'],
        },
      },
      required: ['note_id'],
    };
    const { url, approval: a } = await open({ requestedSchema });
    const { tab, problems } = await newPerson();
    await reach(tab, url);
    await tab.getByLabel('note-2').check();
    await tab.getByRole('button', { name: 'Approve' }).click();
    await tab.getByText('You approved this request').waitFor();
    expect(await channel.decision(a.id, a)).toMatchObject({
      status: 'approved',
      content: { note_id: 'note-2' },
    });
    expect(problems).toEqual([]);
  });

  it('records the option picked, not one a browser would rewrite its value into (CRLF, U+FFFD)', async () => {
    const requestedSchema = {
      type: 'object' as const,
      properties: {
        pick: {
          type: 'string' as const,
          title: 'Pick',
          // Posted as values, A would come back as B (CR/LF to CRLF) and C as D (NUL to U+FFFD).
          oneOf: [
            { const: 'keep\nme', title: 'A: archive' },
            { const: 'keep\r\nme', title: 'B: DELETE EVERYTHING' },
            { const: 'x\u0000y', title: 'C: archive too' },
            { const: 'x\ufffdy', title: 'D: DELETE ALL' },
          ],
        },
      },
      required: ['pick'],
    };
    for (const [label, value] of [
      ['A: archive', 'keep\nme'],
      ['C: archive too', 'x\u0000y'],
    ] as const) {
      const { url, approval: a } = await open({ requestedSchema });
      const { tab, problems } = await newPerson();
      await reach(tab, url);
      await tab.getByLabel(label).check();
      await tab.getByRole('button', { name: 'Approve' }).click();
      await tab.getByText('You approved this request').waitFor();
      expect(await channel.decision(a.id, a)).toMatchObject({
        status: 'approved',
        content: { pick: value },
      });
      await expect(tab.getByText(label, { exact: true }).count()).resolves.toBe(1);
      expect(problems).toEqual([]);
    }
  });

  it('another principal signed in is refused (403), sees nothing, records nothing', async () => {
    const { url, approval: a } = await open({ message: 'Delete the volume vol-secret-42.' });
    const { tab } = await newPerson();
    await tab.goto(url);
    await signInOnForm(tab, 'bob');
    const reload = await tab.goto(url);
    expect(reload?.status()).toBe(403);
    expect(await tab.content()).not.toContain('vol-secret-42');
    expect(await tab.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
  });

  it('a message with <script> and <img onerror> shows as text and runs nothing', async () => {
    const message = `Note body: <script>window.__pwned = 'script'</script><img src=x onerror="window.__pwned = 'img'"> end`;
    const { url } = await open({ message });
    const { tab, problems, requests } = await newPerson();
    await reach(tab, url);
    await expect(tab.locator('.message').textContent()).resolves.toBe(message);
    // No element of the message's: the page's only script is its own approve.js.
    expect(await tab.locator('img, script:not([src="/approve/assets/approve.js"])').count()).toBe(
      0,
    );
    expect(
      await tab.evaluate(() => (window as unknown as { __pwned?: string }).__pwned),
    ).toBeUndefined();
    expect(requests.filter((r) => r.endsWith('/x'))).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('a replayed decision POST is refused (409) and changes nothing', async () => {
    const { url, approval: a } = await open();
    const { tab, context } = await newPerson();
    await reach(tab, url);
    const csrf = await tab.locator('input[name=csrf]').inputValue();
    await tab.getByRole('button', { name: 'Approve' }).click();
    await tab.getByText('You approved this request').waitFor();
    const replay = await context.request.post(url, {
      form: { csrf, decision: 'deny' },
      headers: { origin: site.origin },
      maxRedirects: 0,
    });
    expect(replay.status()).toBe(409);
    expect(await channel.decision(a.id, a)).toMatchObject({ status: 'approved' });
  });

  it('a cross-origin form post (same site, cookie sent, even with the token) is refused', async () => {
    const { url, approval: a } = await open();
    const { tab } = await newPerson();
    await reach(tab, url);
    const csrf = await tab.locator('input[name=csrf]').inputValue();
    evil.use(
      () =>
        new Response(
          `<form id="f" method="post" action="${url}"><input name="csrf" value="${csrf}"><input name="decision" value="approve"></form><script>document.getElementById('f').submit()</script>`,
          { headers: { 'content-type': 'text/html' } },
        ),
    );
    for (const attacker of [evil.origin, `http://localhost:${evil.port}`]) {
      const landed = tab.waitForResponse((r) => r.url() === url && r.request().method() === 'POST');
      await tab.goto(`${attacker}/`);
      expect((await landed).status()).toBe(403);
    }
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
  });

  it('a POST with another Origin, without or with a wrong CSRF token is refused', async () => {
    const { url, approval: a } = await open();
    const { tab, context } = await newPerson();
    await reach(tab, url);
    const csrf = await tab.locator('input[name=csrf]').inputValue();
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{ csrf, decision: 'approve' }, { origin: 'https://evil.example' }],
      [{ decision: 'approve' }, { origin: site.origin }],
      // One character changed (never the same one: a token ending in A stays valid).
      [
        { csrf: `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`, decision: 'approve' },
        { origin: site.origin },
      ],
    ];
    for (const [form, headers] of attempts) {
      const response = await context.request.post(url, { form, headers, maxRedirects: 0 });
      expect(response.status()).toBe(403);
    }
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
  });

  it('a decision after expiry is refused (410) and records nothing', async () => {
    const { url, approval: a } = await open({ expiresAt: Date.now() + 60_000 });
    const { tab } = await newPerson();
    await reach(tab, url);
    // The page is shown with its Approve button; then its time runs out before the click
    // (moving the clock, not sleeping: sign-in and page load must not eat the window).
    clock.skewMs = a.expiresAt - Date.now() + 1000;
    const answered = tab.waitForResponse((r) => r.url() === url && r.request().method() === 'POST');
    await tab.getByRole('button', { name: 'Approve' }).click();
    expect((await answered).status()).toBe(410);
    await expect(tab.getByRole('heading', { name: 'This request expired' }).count()).resolves.toBe(
      1,
    );
    expect(await channel.decision(a.id, a)).toEqual({ status: 'unknown' });
    clock.skewMs = 0;
  });

  it('a presence approval says a passkey is required, has no Approve button and refuses a POSTed approve', async () => {
    const { url, approval: a } = await open({ level: 'presence' });
    const { tab, context } = await newPerson();
    await reach(tab, url);
    await expect(tab.getByText('A passkey is required to approve this').count()).resolves.toBe(1);
    expect(await tab.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    const csrf = await tab.locator('input[name=csrf]').inputValue();
    const forced = await context.request.post(url, {
      form: { csrf, decision: 'approve' },
      headers: { origin: site.origin },
      maxRedirects: 0,
    });
    expect(forced.status()).toBe(403);
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
  });
});

const pgReachable = available ? await postgresReachable() : false;

describe.skipIf(!available || !pgReachable)(
  'two instances on one PostgreSQL store, in Chromium',
  () => {
    const schema = `approval_browser_${process.pid}_${Date.now().toString(36)}`;
    const pools: pg.Pool[] = [];
    let browser: Browser;
    let site: Awaited<ReturnType<typeof serve>>;

    beforeAll(async () => {
      browser = await launchChromium();
      site = await serve();
    });
    afterAll(async () => {
      await browser?.close();
      await site?.close();
      for (const pool of pools) await pool.end();
      await dropSchema(schema);
    });

    it('the page served by instance A records a decision that instance B reads', async () => {
      const instance = async () => {
        const pool = await poolInSchema(schema, 4);
        pools.push(pool);
        const driver = pgPoolDriver(pool);
        await migrateApprovalTables(driver);
        return new PostgresApprovalStore(driver);
      };
      const [storeA, storeB] = [await instance(), await instance()];
      // Behind one load balancer both instances have the same public origin.
      site.use(
        createApprovalPage({ store: storeA, origin: site.origin, signIn: { users: USERS } }),
      );
      const channelB = createApprovalChannel({ store: storeB, origin: site.origin });
      const a = approval();
      const url = await channelB.open(a);
      const { context, tab } = await person(browser);
      try {
        await reach(tab, url);
        await tab.getByRole('button', { name: 'Approve' }).click();
        await tab.getByText('You approved this request').waitFor();
        expect(await channelB.decision(a.id, a)).toMatchObject({ status: 'approved', via: 'url' });
      } finally {
        await context.close();
      }
    });
  },
);
