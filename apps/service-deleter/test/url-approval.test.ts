/**
 * URL-mode confirmation end to end: the service deleter asks for
 * `delete_volume` and production `delete_service` on its own approval page;
 * a person signs in and decides in Chromium; the client's retry acts on the
 * recorded decision. Two instances share the database: the page on one, the
 * retry on the other. People sign in with page passwords of their own
 * (`pageUsers`, as `MRTR_PAGE_USERS`): the client's bearer token is refused.
 */
import { callTool } from '@mrtr/spec-schema';
import {
  browserPerson,
  chromiumAvailable,
  launchChromium,
  signInAndOpen,
} from '@mrtr/test-services/browser';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { getService, getVolume, insertService } from '../src/services.js';

const available = chromiumAvailable();
const ALICE = 'tok-alice-0123456789';
const BOB = 'tok-bob-0123456789ab';
const tokens = new Map([
  [ALICE, 'alice'],
  [BOB, 'bob'],
]);
/** The page passwords (`MRTR_PAGE_USERS`): what a person knows and no MCP client holds. */
const ALICE_PAGE = 'page-alice-0123456789';
const BOB_PAGE = 'page-bob-0123456789ab';
const pageUsers = new Map([
  ['alice', ALICE_PAGE],
  ['bob', BOB_PAGE],
]);
/** A client that can only open URLs (no form elicitation). */
const URL_ONLY = { elicitation: { url: {} } };

describe.skipIf(!available)('URL-mode confirmation on the approval page', () => {
  let db: Database;
  let a: RunningServer;
  let b: RunningServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let n = 0;

  beforeAll(async () => {
    db = await openDatabase('memory://');
    const secret = randomSecret();
    a = await startServiceDeleter({ db, tokens, secret, pageUsers });
    // Two instances behind one public origin, as behind a load balancer: A serves the page.
    b = await startServiceDeleter({ db, tokens, secret, pageUsers, publicOrigin: a.origin });
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await a?.close();
    await b?.close();
    await db?.close();
  });

  async function person() {
    const p = await browserPerson(browser);
    contexts.push(p.context);
    return p;
  }
  async function newService(environment = 'production', withVolume = true) {
    n++;
    const s = { id: `svc_u${n}`, name: `web-${n}`, vol: `vol_u${n}` };
    await db.transaction((tx) =>
      insertService(tx, {
        id: s.id,
        name: s.name,
        environment,
        instances: 2,
        dnsRecords: [],
        volumes: withVolume ? [{ id: s.vol, sizeGb: 8 }] : [],
      }),
    );
    return s;
  }
  /** Round 1 on instance `on`: the URL it asks the person to open, and the ticket. */
  async function ask(
    on: RunningServer,
    tool: string,
    args: Record<string, unknown>,
    token = ALICE,
  ) {
    const r = await callTool(on.url, token, tool, args, { capabilities: URL_ONLY });
    const result = r.body.result;
    expect(result?.resultType).toBe('input_required');
    const request = Object.values(result.inputRequests as Record<string, any>)[0];
    expect(request.params.mode).toBe('url');
    return {
      url: request.params.url as string,
      state: result.requestState as string,
      key: Object.keys(result.inputRequests)[0] as string,
    };
  }
  const retry = (
    on: RunningServer,
    tool: string,
    args: Record<string, unknown>,
    q: { state: string; key: string },
    token = ALICE,
  ) =>
    callTool(on.url, token, tool, args, {
      capabilities: URL_ONLY,
      requestState: q.state,
      inputResponses: { [q.key]: { action: 'accept' } },
    });

  it('delete_volume: sign in on instance A, approve; the retry on instance B destroys it once', async () => {
    const s = await newService('staging');
    const args = { volumeId: s.vol };
    const q = await ask(a, 'delete_volume', args);
    expect(q.url.startsWith(`${a.origin}/approve/`)).toBe(true);
    expect(q.url).not.toContain('alice');
    // Before any decision: asked again with the same URL, nothing done.
    const early = await retry(b, 'delete_volume', args, q);
    expect(early.body.result.resultType).toBe('input_required');
    expect(
      Object.values(early.body.result.inputRequests as Record<string, any>)[0].params.url,
    ).toBe(q.url);
    const { tab, problems } = await person();
    await signInAndOpen(tab, q.url, 'alice', ALICE_PAGE);
    await expect(tab.locator('.message').textContent()).resolves.toContain(
      `Destroy volume ${s.vol}`,
    );
    await tab.getByRole('button', { name: 'Approve' }).click();
    await tab.getByRole('heading', { name: 'You approved this request' }).waitFor();
    const done = await retry(b, 'delete_volume', args, q);
    expect(done.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await getVolume(db, s.vol)).toBeUndefined();
    // The identical retry gets the recorded result; nothing runs twice.
    const again = await retry(a, 'delete_volume', args, q);
    expect(again.body.result.content).toEqual(done.body.result.content);
    expect(problems).toEqual([]);
  });

  it('production delete_service: deny on the page; the retry refuses, and its repeat gets the same refusal', async () => {
    const s = await newService('production');
    const args = { serviceId: s.id, name: s.name };
    const q = await ask(a, 'delete_service', args);
    const { tab } = await person();
    await signInAndOpen(tab, q.url, 'alice', ALICE_PAGE);
    await tab.getByRole('button', { name: 'Deny' }).click();
    await tab.getByText('You denied this request').waitFor();
    const denied = await retry(a, 'delete_service', args, q);
    expect(denied.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await getService(db, s.id)).toBeDefined();
    // The ticket is used up: the identical retry gets the recorded refusal, never a deletion.
    const after = await retry(b, 'delete_service', args, q);
    expect(after.body.result.content).toEqual(denied.body.result.content);
    expect(await getService(db, s.id)).toBeDefined();
  });

  it("the client's bearer token does not sign in to the page (401); nothing is decided", async () => {
    const s = await newService('production');
    const args = { serviceId: s.id, name: s.name };
    const q = await ask(a, 'delete_service', args);
    const { tab } = await person();
    const answers: number[] = [];
    tab.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().includes('/approve/sign-in'))
        answers.push(r.status());
    });
    await signInAndOpen(tab, q.url, 'alice', ALICE);
    expect(answers).toEqual([401]);
    await tab.getByText('That principal and password do not match.').waitFor();
    expect(await tab.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    const still = await retry(a, 'delete_service', args, q);
    expect(still.body.result.resultType).toBe('input_required');
    expect(await getService(db, s.id)).toBeDefined();
  });

  it('another principal signed in on the page is refused and records nothing', async () => {
    const s = await newService('production');
    const args = { serviceId: s.id, name: s.name };
    const q = await ask(a, 'delete_service', args);
    const { tab } = await person();
    await signInAndOpen(tab, q.url, 'bob', BOB_PAGE);
    expect(await tab.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    const still = await retry(a, 'delete_service', args, q);
    expect(still.body.result.resultType).toBe('input_required');
    expect(await getService(db, s.id)).toBeDefined();
  });

  it('a staging service is confirmed by form; a form-only client gets -32021 for a production one', async () => {
    const prod = await newService('production');
    const r = await callTool(
      a.url,
      ALICE,
      'delete_service',
      { serviceId: prod.id, name: prod.name },
      {
        capabilities: { elicitation: { form: {} } },
      },
    );
    expect(r.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
    const staging = await newService('staging', false);
    const f = await callTool(
      a.url,
      ALICE,
      'delete_service',
      { serviceId: staging.id, name: staging.name },
      {
        capabilities: { elicitation: { form: {} } },
      },
    );
    const request = Object.values(f.body.result.inputRequests as Record<string, any>)[0];
    expect(request.params.mode).toBe('form');
  });

  it("a staging service with a volume takes delete_volume's level: the form that could destroy it is not offered to a form-only client", async () => {
    const staging = await newService('staging');
    const args = { serviceId: staging.id, name: staging.name };
    const f = await callTool(a.url, ALICE, 'delete_service', args, {
      capabilities: { elicitation: { form: {} } },
    });
    expect(f.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
    // Asked on the page instead, as delete_volume is.
    const q = await ask(a, 'delete_service', args);
    expect(q.url).toMatch(/\/approve\//);
    expect(await getService(db, staging.id)).toBeDefined();
  });
});
