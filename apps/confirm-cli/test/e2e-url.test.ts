/**
 * `mrtr` and a browser together, as a person uses them: `delete_volume` on
 * the service deleter is confirmed on the server's approval page. mrtr shows
 * the URL and asks before opening it; the person signs in and approves in
 * Chromium; mrtr continues, the server reads the decision and destroys the
 * volume once.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromiumAvailable, launchChromium, signInAndOpen } from '@mrtr/test-services/browser';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningServer,
  randomSecret,
  startServiceDeleter,
} from '../../service-deleter/src/app.js';
import { type Database, openDatabase } from '../../service-deleter/src/db.js';
import { TmuxSession, tmuxAvailable } from './tmux.js';

const MAIN = join(import.meta.dirname, '../dist/main.js');
const TOKEN = 'tok-e2e-url-0123';
const ready = tmuxAvailable() && chromiumAvailable();

let db: Database;
let server: RunningServer;
let browser: Browser;
const sessions: TmuxSession[] = [];

beforeAll(async () => {
  if (!ready) return;
  if (!existsSync(MAIN)) throw new Error(`build mrtr first: ${MAIN} is missing`);
  db = await openDatabase('memory://');
  server = await startServiceDeleter({
    db,
    tokens: new Map([[TOKEN, 'ops']]),
    secret: randomSecret(),
  });
  browser = await launchChromium();
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db?.close();
});

const active = (title: string) => new RegExp(`[◆*]  ${title.replace(/[?]/g, '\\?')}`);
const volumeExists = async (id: string) =>
  (await db.query('SELECT 1 FROM volumes WHERE id = $1', [id])).rows.length === 1;

describe.skipIf(!ready)('mrtr with the approval page', () => {
  it('shows the URL, the person approves in the browser, mrtr continues and the volume is destroyed once', async () => {
    const t = new TmuxSession(
      [process.execPath, MAIN, 'call', server.url, 'delete_volume', '--arg', 'volumeId=vol_9c4d'],
      { MRTR_TOKEN: TOKEN, NO_COLOR: '1' },
    );
    sessions.push(t);
    let screen = await t.waitFor(active('Go to this URL in your browser?'));
    expect(screen).toContain('Destroy volume vol_9c4d');
    const url = /URL:\s+(\S+)/.exec(screen)?.[1] as string;
    expect(url.startsWith(`${server.origin}/approve/`)).toBe(true);
    t.keys(['Enter']); // Open it
    screen = await t.waitFor(active('Continue once you have finished in the browser'));
    // Nothing is sent before the person comes back from the browser, and mrtr does not say otherwise.
    expect(screen).toContain('Finish in your browser.');
    expect(screen).not.toContain('Sending your answer.');

    // Continuing before deciding: the server asks again with the same URL; nothing happens.
    t.keys(['Enter']);
    screen = await t.waitFor(/Nothing was decided on the approval page yet/);
    expect(await volumeExists('vol_9c4d')).toBe(true);
    await t.waitFor(active('Go to this URL in your browser?'));
    t.keys(['Enter']);
    await t.waitFor(active('Continue once you have finished in the browser'));

    const context = await browser.newContext();
    const tab = await context.newPage();
    await signInAndOpen(tab, url, 'ops', TOKEN);
    await tab.getByRole('button', { name: 'Approve' }).click();
    await tab.getByRole('heading', { name: 'You approved this request' }).waitFor();
    await context.close();

    t.keys(['Enter']); // Continue
    screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain('Sending your answer.');
    expect(screen).toContain('Destroyed volume vol_9c4d (10 GB).');
    expect(screen).toContain('[mrtr exited 0]');
    expect(await volumeExists('vol_9c4d')).toBe(false);
  });
});
