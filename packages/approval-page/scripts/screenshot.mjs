// Take the README's screenshots: `pnpm --filter @mrtr/approval-page screenshot` (after a build).
// Serves the built page on localhost (WebAuthn refuses IP addresses as RP IDs), signs in as alice in
// Debian's Chromium with a virtual authenticator (CDP WebAuthn domain) and saves, at the repository
// root: docs/approval-page.png (a URL-mode approval), docs/passkey-registration.png (alice's passkeys
// after registering one) and docs/passkey-approval.png (a presence approval, ready for the passkey).
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { addVirtualAuthenticator, launchChromium } from '@mrtr/test-services/browser';
import { createApprovalChannel, createApprovalPage, MemoryApprovalStore } from '../dist/index.js';

const docs = (name) => fileURLToPath(new URL(`../../../docs/${name}`, import.meta.url));
const users = { alice: 'alice-screenshot-password' };
let listener;
const server = createServer((req, res) => listener(req, res));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://localhost:${server.address().port}`;
const store = new MemoryApprovalStore();
const channel = createApprovalChannel({ store, origin });
listener = getRequestListener(
  createApprovalPage({ store, origin, signIn: { users }, serviceName: 'mrtr service deleter' }),
);
const question = {
  nonce: 'screenshot-nonce',
  principal: 'alice',
  operation: 'tools/call:delete_service',
  argumentsDigest: 'sha256:screenshot',
  questionDigest: 'sha256:screenshot',
  message:
    'Delete service "billing-api" (svc-7f3a) in production?\n' +
    '• 6 running instances will be stopped and removed\n' +
    '• 2 volumes (billing-data, 200 GiB; billing-logs, 20 GiB) will be deleted with it\n' +
    '• its public address billing.example.com will stop answering',
  expiresAt: Date.now() + 5 * 60_000,
};
const url = await channel.open({ ...question, id: 'q3Yx0fM2b7Zr9KcW1nT4vA', level: 'url' });
const presence = await channel.open({
  ...question,
  id: 'p7Kd2sVb9Qm4Xw1Zr8Tn3A',
  level: 'presence',
});
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const cdp = await page.context().newCDPSession(page);
  await addVirtualAuthenticator(cdp);
  await page.goto(url);
  await page.getByLabel('Principal').fill('alice');
  await page.getByLabel('Password').fill(users.alice);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Approve', exact: true }).waitFor();
  await page.screenshot({ path: docs('approval-page.png'), fullPage: true });
  await page.goto(
    `${origin}/approve/passkeys?return=${encodeURIComponent(new URL(presence).pathname)}`,
  );
  await page.getByLabel('Your page password').fill(users.alice);
  await page.getByRole('button', { name: 'Register a passkey' }).click();
  await page.getByText('Your passkey is registered.').waitFor();
  await page.screenshot({ path: docs('passkey-registration.png'), fullPage: true });
  await page.getByRole('link', { name: 'Back to the request' }).click();
  await page.getByRole('button', { name: 'Approve with passkey' }).waitFor();
  await page.screenshot({ path: docs('passkey-approval.png'), fullPage: true });
  console.log(`saved ${docs('approval-page.png')}, passkey-registration.png, passkey-approval.png`);
} finally {
  await browser.close();
  server.close();
}
