/**
 * `strongest-express.ts` runs as written and does what its header says: a
 * form-only client is refused (`-32021`); a URL client is sent to the page on
 * `localhost`; in Chromium, alice signs in with her page password, registers
 * a passkey (a virtual authenticator over CDP) and approves with it; the
 * retry deletes the row once and carries a receipt that verifies against the
 * published JWKS as a passkey approval of exactly this call.
 */
import { generateKeyPairSync } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { ReceiptError, verifyAndRun, verifyReceipt } from '@mrtr/receipt';
import { PostgresReplayStore } from '@mrtr/replay-postgres';
import { pgPoolDriver } from '@mrtr/sql';
import {
  addVirtualAuthenticator,
  chromiumAvailable,
  launchChromium,
} from '@mrtr/test-services/browser';
import { afterAll, describe, expect, it } from 'vitest';
import { callDelete, start, testDatabase, twoTokenReplies } from './run.js';

const { pool, reachable } = await testDatabase();
afterAll(() => pool.end());

const PAGE_PASSWORD = 'alice-page-pass-4b1e9c';
const SCHEMA = 'examples_strongest';

type Reply = { result?: Record<string, unknown>; error?: { code: number; message: string } };
const URL_MODE = { elicitation: { url: {} } };

describe.skipIf(!reachable || !chromiumAvailable())('the strongest example (Express)', () => {
  it('serves MCP on the host PUBLIC_ORIGIN names, as its page, and nowhere else', async () => {
    const schema = `${SCHEMA}_origin`;
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    const { privateKey } = generateKeyPairSync('ed25519');
    const server = await start('strongest-express.ts', schema, undefined, {
      ALICE_PAGE_PASSWORD: PAGE_PASSWORD,
      RECEIPT_KEY_PEM: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      PUBLIC_ORIGIN: 'http://records.test:8443',
    });
    try {
      const { port } = new URL(server.url);
      const statusFor = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const request = httpRequest(
            {
              port,
              path: '/mcp',
              method: 'POST',
              headers: { host, 'content-type': 'application/json' },
            },
            (response) => {
              response.resume();
              resolve(response.statusCode ?? 0);
            },
          );
          request.on('error', reject);
          request.end('{}');
        });
      // Past the Host check (no token: 401); another host is refused as before.
      expect(await statusFor('records.test:8443')).toBe(401);
      expect(await statusFor('elsewhere.test')).toBe(403);
    } finally {
      server.stop();
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });

  it('refuses a form client, sends a URL client to the page; a passkey approval deletes once with a receipt', async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`);
    const { privateKey } = generateKeyPairSync('ed25519');
    const server = await start('strongest-express.ts', SCHEMA, undefined, {
      ALICE_PAGE_PASSWORD: PAGE_PASSWORD,
      RECEIPT_KEY_PEM: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    const browser = await launchChromium();
    try {
      const form = (await callDelete(server, 1)) as Reply;
      expect(form.error?.code).toBe(-32021);
      // Two Authorization fields, the right one first or last: neither passes.
      expect((await twoTokenReplies(server)).map(([status]) => status)).toEqual([401, 401]);

      const asked = (await callDelete(server, 2, {}, URL_MODE)) as Reply;
      const question = (
        asked.result?.inputRequests as Record<string, { params: { mode: string; url: string } }>
      ).confirm?.params;
      expect(question?.mode).toBe('url');
      const pageUrl = new URL(question?.url ?? '');
      expect(pageUrl.hostname).toBe('localhost'); // browsers refuse passkeys on an IP address
      // A malformed path on the page is a plain 400: no stack trace from Express's error page.
      const malformed = await fetch(`${pageUrl.origin}/approve/%E0%A4%A`);
      expect([malformed.status, await malformed.text()]).toEqual([400, 'Bad Request']);

      const context = await browser.newContext();
      const tab = await context.newPage();
      await addVirtualAuthenticator(await context.newCDPSession(tab));
      await tab.goto(`${pageUrl.origin}/approve/passkeys`);
      await tab.getByLabel('Principal').fill('alice');
      await tab.getByLabel('Password').fill(PAGE_PASSWORD);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByLabel('Your page password').fill(PAGE_PASSWORD);
      await tab.getByRole('button', { name: 'Register a passkey' }).click();
      await tab.getByText('Your passkey is registered.').waitFor();
      await tab.goto(pageUrl.href);
      await tab.getByRole('button', { name: 'Approve with passkey' }).click();
      await tab.getByRole('heading', { name: 'You approved this request' }).waitFor();

      const answer = {
        requestState: asked.result?.requestState,
        inputResponses: { confirm: { action: 'accept' } },
      };
      const done = (await callDelete(server, 3, answer, URL_MODE)) as Reply;
      expect(done.result).toMatchObject({ resultType: 'complete', isError: false });
      const { receipt } = done.result?.structuredContent as { receipt: string };
      expect(JSON.stringify(done.result?.content)).toContain(receipt); // for clients that read only content
      const { rows } = await pool.query(`SELECT id FROM ${SCHEMA}.records WHERE id = 'rec-1'`);
      expect(rows).toEqual([]);
      const again = (await callDelete(server, 4, answer, URL_MODE)) as Reply;
      expect(again.result?.structuredContent).toEqual(done.result?.structuredContent);

      const jwks = await (await fetch(`${pageUrl.origin}/.well-known/jwks.json`)).json();
      // Throws (ReceiptError) unless it approves exactly this call, by alice, with a passkey.
      const verified = await verifyReceipt(receipt, {
        keys: jwks,
        issuer: pageUrl.origin,
        operation: 'tools/call:delete_record',
        arguments: { id: 'rec-1' },
        principal: 'alice',
        minLevel: 'passkey',
      });
      expect(verified.kid).toBe('k1');
      // An executor claiming it in the example's replay table: the deletion already used it.
      let ran = 0;
      const executor = await verifyAndRun(
        receipt,
        {
          keys: jwks,
          issuer: pageUrl.origin,
          operation: 'tools/call:delete_record',
          arguments: { id: 'rec-1' },
          minLevel: 'passkey',
          store: new PostgresReplayStore(pgPoolDriver(pool), { table: `${SCHEMA}.mrtr_replay` }),
        },
        async () => ++ran,
      ).catch((e: unknown) => e);
      expect(executor).toBeInstanceOf(ReceiptError);
      expect((executor as ReceiptError).code).toBe('already_used');
      expect(ran).toBe(0);
      await expect(
        verifyReceipt(receipt, {
          keys: jwks,
          issuer: pageUrl.origin,
          operation: 'tools/call:delete_record',
          arguments: { id: 'rec-2' },
        }),
      ).rejects.toMatchObject({ code: 'arguments_mismatch' });
    } finally {
      await browser.close();
      server.stop();
    }
  }, 180_000);
});
