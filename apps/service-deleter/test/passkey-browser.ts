/**
 * What the browser tests of passkeys share: a service deleter served on
 * `localhost` (WebAuthn takes no IP address as its RP ID) with one bearer
 * token for alice, and a Chromium tab with a virtual authenticator over CDP
 * (CTAP2, resident keys, the user verified, presence simulated).
 */
import type { GateAuditEvent } from '@mrtr/gate';
import { addVirtualAuthenticator, launchChromium } from '@mrtr/test-services/browser';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';

/** The server, its database and the tab; `close` ends all of them. */
export interface PasskeyBrowser {
  db: Database;
  server: RunningServer;
  browser: Browser;
  context: BrowserContext;
  tab: Page;
  cdp: CDPSession;
  authenticatorId: string;
  close(): Promise<void>;
}

/** Start both; audit events go to `events`. */
export async function startPasskeyBrowser(
  aliceToken: string,
  events: GateAuditEvent[],
): Promise<PasskeyBrowser> {
  const db = await openDatabase('memory://');
  const server = await startServiceDeleter({
    db,
    tokens: new Map([[aliceToken, 'alice']]),
    secret: randomSecret(),
    host: 'localhost',
    audit: (e) => void events.push(e),
  });
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await server.close();
    await db.close();
  };
  try {
    browser = await launchChromium();
    const context = await browser.newContext();
    const tab = await context.newPage();
    const cdp = await context.newCDPSession(tab);
    const authenticatorId = await addVirtualAuthenticator(cdp);
    return { db, server, browser, context, tab, cdp, authenticatorId, close };
  } catch (error) {
    // Nothing left running when the browser cannot start: the test process could not exit.
    await close();
    throw error;
  }
}
