import { existsSync } from 'node:fs';
import {
  type Browser,
  type BrowserContext,
  type CDPSession,
  chromium,
  type Page,
} from 'playwright-core';

/** Debian's Chromium, the only browser the tests drive (never a download). */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags for a headless Chromium on a machine with a closed network. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether Chromium is installed. Under `CI=true` a missing Chromium throws:
 * CI must never go green without the browser tests (`.ci/run` installs it).
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (process.env.CI === 'true')
    throw new Error(`${why}: the browser tests cannot run under CI=true`);
  console.warn(`skipping the Chromium tests: ${why}`);
  return false;
}

/** Launch Debian's Chromium through playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, timeout: 60_000 });
}

/** A fresh browser context (a person) with its console errors and page errors recorded. */
export async function browserPerson(
  browser: Browser,
): Promise<{ context: BrowserContext; tab: Page; problems: string[] }> {
  const context = await browser.newContext();
  const tab = await context.newPage();
  const problems: string[] = [];
  tab.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  tab.on('pageerror', (e) => problems.push(e.message));
  return { context, tab, problems };
}

/**
 * Open an approval `url` signed out, sign in on the example sign-in form of
 * `@mrtr/approval-page` as `principal` with `token`, and land on the page.
 */
export async function signInAndOpen(
  tab: Page,
  url: string,
  principal: string,
  token: string,
): Promise<void> {
  await tab.goto(url);
  await tab.getByLabel('Principal').fill(principal);
  await tab.getByLabel('Password').fill(token);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.waitForLoadState();
}

/**
 * Give the tab of `cdp` a virtual authenticator (CDP `WebAuthn` domain): a
 * platform authenticator (CTAP2, internal transport) with resident keys that
 * verifies its user and simulates presence, so a passkey ceremony completes
 * without a person. @returns its `authenticatorId`.
 */
export async function addVirtualAuthenticator(cdp: CDPSession): Promise<string> {
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return authenticatorId;
}
