/**
 * Production `delete_service` needs a passkey: the person registers one on
 * the service deleter's own page (Chromium's virtual authenticator over
 * CDP), the tool call asks for URL-mode confirmation at level `presence`,
 * the page offers only "Approve with passkey", and the retry deletes once.
 * Served on `localhost`: WebAuthn takes no IP address as its RP ID.
 */

import type { GateAuditEvent } from '@mrtr/gate';
import { callTool } from '@mrtr/spec-schema';
import { chromiumAvailable } from '@mrtr/test-services/browser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/app.js';
import type { Database } from '../src/db.js';
import { getService, insertService } from '../src/services.js';
import { type PasskeyBrowser, startPasskeyBrowser } from './passkey-browser.js';

const available = chromiumAvailable();
const ALICE = 'tok-alice-passkey-01';
const URL_ONLY = { elicitation: { url: {} } };

describe.skipIf(!available)('production delete_service with a passkey (presence)', () => {
  let db: Database;
  let server: RunningServer;
  let tab: Page;
  let running: PasskeyBrowser | undefined;
  const events: GateAuditEvent[] = [];

  beforeAll(async () => {
    running = await startPasskeyBrowser(ALICE, events);
    ({ db, server, tab } = running);
  });
  afterAll(() => running?.close());

  it('registers a passkey, approves with it, and the retry deletes the service once', async () => {
    expect(server.origin).toMatch(/^http:\/\/localhost:\d+$/);
    await db.transaction((tx) =>
      insertService(tx, {
        id: 'svc_pk1',
        name: 'pk-prod',
        environment: 'production',
        instances: 3,
        dnsRecords: [],
        volumes: [],
      }),
    );
    // Register a passkey on the server's own page, signed in as alice.
    await tab.goto(`${server.origin}/approve/passkeys`);
    await tab.getByLabel('Principal').fill('alice');
    await tab.getByLabel('Password').fill(ALICE);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByLabel('Your page password').fill(ALICE);
    await tab.getByRole('button', { name: 'Register a passkey' }).click();
    await tab.getByText('Your passkey is registered.').waitFor();

    const args = { serviceId: 'svc_pk1', name: 'pk-prod' };
    const asked = await callTool(server.url, ALICE, 'delete_service', args, {
      capabilities: URL_ONLY,
    });
    const params = asked.body.result.inputRequests.confirm_delete.params;
    expect(params.mode).toBe('url');
    const retry = () =>
      callTool(server.url, ALICE, 'delete_service', args, {
        capabilities: URL_ONLY,
        requestState: asked.body.result.requestState,
        inputResponses: { confirm_delete: { action: 'accept' } },
      });

    await tab.goto(params.url);
    expect(await tab.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect((await retry()).body.result.resultType).toBe('input_required');
    await tab.getByRole('button', { name: 'Approve with passkey' }).click();
    await tab.getByRole('heading', { name: 'You approved this request' }).waitFor();

    const done = await retry();
    expect(done.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await getService(db, 'svc_pk1')).toBeUndefined();
    expect((await retry()).body.result).toEqual(done.body.result);
    const completed = events.filter((e) => e.outcome === 'completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]?.confirmation).toBe('presence');
  });

  it('a form-only client cannot delete a production service: -32021 naming URL elicitation', async () => {
    await db.transaction((tx) =>
      insertService(tx, {
        id: 'svc_pk2',
        name: 'pk-prod2',
        environment: 'production',
        instances: 1,
        dnsRecords: [],
        volumes: [],
      }),
    );
    const r = await callTool(
      server.url,
      ALICE,
      'delete_service',
      { serviceId: 'svc_pk2', name: 'pk-prod2' },
      {
        capabilities: { elicitation: { form: {} } },
      },
    );
    expect(r.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
    expect(await getService(db, 'svc_pk2')).toBeDefined();
  });
});
