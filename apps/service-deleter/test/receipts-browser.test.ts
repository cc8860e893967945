/**
 * What a receipt says about how the person confirmed, on real runs in
 * Chromium: `delete_volume` approved on the page → level `url`, also when
 * the person used the passkey the page offers there; production
 * `delete_service` approved with a passkey (virtual authenticator over CDP) →
 * level `passkey` and the id of the credential that signed the assertion.
 * Both verify with jose and the JWKS fetched over HTTP. Served on
 * `localhost`: WebAuthn takes no IP address as its RP ID.
 */
import type { GateAuditEvent } from '@mrtr/gate';
import { callTool } from '@mrtr/spec-schema';
import { chromiumAvailable } from '@mrtr/test-services/browser';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/app.js';
import type { Database } from '../src/db.js';
import { getService, getVolume, insertService } from '../src/services.js';
import { type PasskeyBrowser, startPasskeyBrowser } from './passkey-browser.js';

const available = chromiumAvailable();
const ALICE = 'tok-alice-receipt-01';
const URL_ONLY = { elicitation: { url: {} } };

describe.skipIf(!available)('receipts of URL and passkey approvals', () => {
  let db: Database;
  let server: RunningServer;
  let tab: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let running: PasskeyBrowser | undefined;
  const events: GateAuditEvent[] = [];

  beforeAll(async () => {
    running = await startPasskeyBrowser(ALICE, events);
    ({ db, server, tab, cdp, authenticatorId } = running);
    await db.transaction((tx) =>
      insertService(tx, {
        id: 'svc_rb1',
        name: 'rb-prod',
        environment: 'production',
        instances: 2,
        dnsRecords: [],
        volumes: [
          { id: 'vol_rb1', sizeGb: 4 },
          { id: 'vol_rb2', sizeGb: 4 },
        ],
      }),
    );
    // Signed in as alice, with a passkey registered on the server's own page.
    await tab.goto(`${server.origin}/approve/passkeys`);
    await tab.getByLabel('Principal').fill('alice');
    await tab.getByLabel('Password').fill(ALICE);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByLabel('Your page password').fill(ALICE);
    await tab.getByRole('button', { name: 'Register a passkey' }).click();
    await tab.getByText('Your passkey is registered.').waitFor();
  });
  afterAll(() => running?.close());

  /** Ask on the page, approve with `button`, retry; the completed record's receipt, verified with jose. */
  async function approved(tool: string, args: Record<string, unknown>, button: string) {
    const completedOf = () => events.filter((e) => e.outcome === 'completed' && e.name === tool);
    const before = completedOf().length;
    const asked = await callTool(server.url, ALICE, tool, args, { capabilities: URL_ONLY });
    const [key, request] = Object.entries(
      asked.body.result.inputRequests as Record<string, any>,
    )[0] as [string, any];
    expect(request.params.mode).toBe('url');
    await tab.goto(request.params.url);
    await tab.getByRole('button', { name: button, exact: true }).click();
    await tab.getByRole('heading', { name: 'You approved this request' }).waitFor();
    const done = await callTool(server.url, ALICE, tool, args, {
      capabilities: URL_ONLY,
      requestState: asked.body.result.requestState,
      inputResponses: { [key]: { action: 'accept' } },
    });
    expect(done.body.result).toMatchObject({ resultType: 'complete', isError: false });
    // One completed record for this flow, the last one.
    const completed = completedOf().slice(before);
    expect(completed).toHaveLength(1);
    const receipt = completed[0]?.receipt as string;
    const jwks = createRemoteJWKSet(new URL('/.well-known/jwks.json', server.origin));
    const { payload } = await jwtVerify(receipt, jwks, {
      algorithms: ['EdDSA'],
      typ: 'mrtr-receipt+jwt',
      issuer: server.origin,
    });
    expect(payload).toMatchObject({
      sub: 'alice',
      op: `tools/call:${tool}`,
      n: completed[0]?.nonce,
    });
    return { payload, confirmation: completed[0]?.confirmation };
  }

  it('a volume approved on the page: level url, no credential', async () => {
    const { payload, confirmation } = await approved(
      'delete_volume',
      { volumeId: 'vol_rb1' },
      'Approve',
    );
    expect(confirmation).toBe('url');
    expect(payload.lvl).toBe('url');
    expect(payload.cred).toBeUndefined();
    expect(await getVolume(db, 'vol_rb1')).toBeUndefined();
  });

  it('a volume (level url) approved with the passkey anyway: it runs once, signed as url without a credential', async () => {
    const { payload, confirmation } = await approved(
      'delete_volume',
      { volumeId: 'vol_rb2' },
      'Approve with passkey',
    );
    expect(confirmation).toBe('url');
    // lvl is the level the question was asked at (a verifier recomputes qd with it); cred goes with passkey only.
    expect(payload.lvl).toBe('url');
    expect(payload.cred).toBeUndefined();
    expect(await getVolume(db, 'vol_rb2')).toBeUndefined();
  });

  it('a production service approved with a passkey: level passkey and the credential id', async () => {
    const { payload, confirmation } = await approved(
      'delete_service',
      { serviceId: 'svc_rb1', name: 'rb-prod' },
      'Approve with passkey',
    );
    expect(confirmation).toBe('presence');
    expect(payload.lvl).toBe('passkey');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    // CDP gives the id in base64; the receipt in base64url.
    const id = Buffer.from(credentials[0]?.credentialId as string, 'base64').toString('base64url');
    expect(payload.cred).toBe(id);
    expect(await getService(db, 'svc_rb1')).toBeUndefined();
  });
});
