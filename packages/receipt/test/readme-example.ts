// The example of README.md, between the markers, with '@mrtr/receipt' for '../src/index.js'.
// It is type-checked with the package and run by readme.test.ts.
// README:start
import { digestJson } from '@mrtr/digest';
import { MemoryReplayStore } from '@mrtr/replay';
import { generateKeyPair } from 'jose';
import { ReceiptError, ReceiptSigner, verifyAndRun } from '../src/index.js';

// The MCP server: one Ed25519 key; keep the private key secret, publish signer.jwks().
const signer = await ReceiptSigner.create({
  keys: [{ kid: '2026-11', ...(await generateKeyPair('EdDSA')) }],
  issuer: 'https://deleter.example',
});

// The principal confirmed `delete_service {serviceId, name}`: sign what was approved.
const args = { serviceId: 'svc_8f21c', name: 'api-prod' };
const question = {
  mode: 'form', // the confirmation level
  message: 'Delete service api-prod (svc_8f21c)? This cannot be undone.',
  requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
};
const { receipt } = await signer.sign({
  sub: 'user_5f2a', // the tool call's principal
  op: 'tools/call:delete_service',
  ad: digestJson(args), // the argument digest, as the gate computes it
  qd: digestJson(question), // the question digest, as the gate computes it
  lvl: 'form', // or 'url', or 'passkey' with cred: <credential id>
  n: 'kq3C6V0bq1G8b6C2fV7cMw', // the ticket nonce
});

// The executor, another process: the published JWKS and a replay store of its own.
const jwks = signer.jwks(); // in practice: new URL('https://deleter.example/.well-known/jwks.json')
const store = new MemoryReplayStore(); // several executors: @mrtr/replay-redis or -postgres
const services = new Set(['svc_8f21c', 'svc_other']);

async function deleteService(receipt: string, serviceId: string, name: string) {
  const { outcome } = await verifyAndRun(
    receipt,
    { operation: 'tools/call:delete_service', arguments: { serviceId, name }, keys: jwks, store },
    async ({ claims }) => {
      services.delete(serviceId); // runs at most once per confirmation
      return { deleted: serviceId, approvedBy: claims.sub };
    },
  );
  return outcome;
}

const refusal = (error: unknown) => (error instanceof ReceiptError ? error.code : 'bug');
const first = await deleteService(receipt, 'svc_8f21c', 'api-prod'); // { deleted: 'svc_8f21c', approvedBy: 'user_5f2a' }
const again = await deleteService(receipt, 'svc_8f21c', 'api-prod').catch(refusal); // 'already_used'
const other = await deleteService(receipt, 'svc_other', 'api-prod').catch(refusal); // 'arguments_mismatch'
// README:end

export const results = { first, again, other, services: [...services] };
