// Take the README's screenshot of the approval page: `pnpm --filter @mrtr/approval-page screenshot`
// (after a build). Serves the built page on 127.0.0.1, signs in as alice in Debian's Chromium and
// saves docs/approval-page.png at the repository root.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { chromium } from 'playwright-core';
import { createApprovalChannel, createApprovalPage, MemoryApprovalStore } from '../dist/index.js';

const out = fileURLToPath(new URL('../../../docs/approval-page.png', import.meta.url));
const users = { alice: 'alice-screenshot-token' };
let listener;
const server = createServer((req, res) => listener(req, res));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const store = new MemoryApprovalStore();
const channel = createApprovalChannel({ store, origin });
listener = getRequestListener(
  createApprovalPage({ store, origin, signIn: { users }, serviceName: 'mrtr service deleter' }),
);
const url = await channel.open({
  id: 'q3Yx0fM2b7Zr9KcW1nT4vA',
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
  level: 'url',
  expiresAt: Date.now() + 5 * 60_000,
});
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  await page.goto(url);
  await page.getByLabel('Principal').fill('alice');
  await page.getByLabel('Token').fill(users.alice);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Approve' }).waitFor();
  await page.screenshot({ path: out, fullPage: true });
  console.log(`saved ${out}`);
} finally {
  await browser.close();
  server.close();
}
