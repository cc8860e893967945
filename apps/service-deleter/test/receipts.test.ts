/**
 * Signed approval receipts on a real run: a form-accepted delete_service
 * yields a receipt that verifies with the JWKS fetched over HTTP and with
 * jose alone; a separate executor (its own instance, keys fetched from the
 * published JWKS URL) refuses every receipt that does not approve exactly
 * what it is asked to do, and acts once on one that does.
 */
import { readAuditRecords } from '@mrtr/audit-postgres';
import { digestJson } from '@mrtr/digest';
import { bearerAuthenticator, listen } from '@mrtr/example-kit';
import type { GateAuditEvent } from '@mrtr/gate';
import { ConfirmationGate } from '@mrtr/gate';
import { ReceiptError, type ReceiptInput, ReceiptSigner } from '@mrtr/receipt';
import { PostgresReplayStore } from '@mrtr/replay-postgres';
import { createMcpEndpoint } from '@mrtr/server';
import { callTool } from '@mrtr/spec-schema';
import { TicketSealer } from '@mrtr/ticket';
import {
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  generateKeyPair,
  jwtVerify,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase, type Queryable } from '../src/db.js';
import { ExecutorRefusal, RECEIPT_USES_TABLE, ServiceExecutor } from '../src/executor.js';
import { getService, insertService } from '../src/services.js';
import { serviceTools } from '../src/tools.js';

const TOKEN = 'tok-receipts-0123456';
const OP = 'tools/call:delete_service';
let db: Database;
let server: RunningServer;
let jwksUrl: URL;
/** The server's own signing key, so this test can sign receipts as the server would. */
let serverKey: { kid: string; privateKey: CryptoKey; publicKey: CryptoKey };
const events: GateAuditEvent[] = [];

beforeAll(async () => {
  db = await openDatabase('memory://');
  serverKey = { kid: 'sd-2026-11', ...(await generateKeyPair('EdDSA')) };
  server = await startServiceDeleter({
    db,
    tokens: new Map([[TOKEN, 'ops']]),
    secret: randomSecret(),
    approvalPage: false, // every confirmation by form; receipts-browser.test.ts covers url and passkey
    auditTable: true,
    audit: (e) => void events.push(e),
    receiptKeys: [serverKey],
  });
  jwksUrl = new URL('/.well-known/jwks.json', server.origin);
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

let n = 0;
async function newService(environment = 'staging', volumes: { id: string; sizeGb: number }[] = []) {
  n++;
  const s = { id: `svc_r${n}`, name: `rcpt-${n}` };
  await db.transaction((tx) =>
    insertService(tx, { ...s, environment, instances: 2, dnsRecords: [], volumes }),
  );
  return s;
}
const exists = async (id: string) => (await getService(db, id)) !== undefined;
const uses = async () =>
  Number((await db.query(`SELECT count(*)::int AS n FROM ${RECEIPT_USES_TABLE}`)).rows[0]?.n);

describe('a receipt from a real form-accepted delete', () => {
  it('is served with the result and the audit trail, and verifies with the published JWKS and jose alone', async () => {
    const s = await newService();
    const args = { serviceId: s.id, name: s.name };
    const asked = await callTool(server.url, TOKEN, 'delete_service', args);
    const done = await callTool(server.url, TOKEN, 'delete_service', args, {
      requestState: asked.body.result.requestState,
      inputResponses: { confirm_delete: { action: 'accept', content: { serviceName: s.name } } },
    });
    expect(done.body.result).toMatchObject({ resultType: 'complete', isError: false });
    // A service without DNS records: said as such, not "DNS none removed".
    expect(done.body.result.content[0].text).toContain(
      `Deleted "${s.name}" (${s.id}): 2 instances stopped, no DNS records to remove.`,
    );
    expect(await exists(s.id)).toBe(false);
    const receipt = done.body.result.structuredContent.receipt as string;

    // The audit trail holds the same receipt: the completed record, in the sink and the table.
    const completed = events.filter(
      (e) => e.outcome === 'completed' && e.arguments?.serviceId === s.id,
    );
    expect(completed.map((e) => e.receipt)).toEqual([receipt]);
    const rows = await readAuditRecords(db, { nonce: completed[0]?.nonce as string });
    expect(rows.find((r) => r.outcome === 'completed')).toMatchObject({
      receipt,
      confirmation: 'form',
    });

    // The JWKS over HTTP: JSON, cacheable, public keys only.
    const response = await fetch(jwksUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const jwks = await response.json();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: serverKey.kid });
    expect(jwks.keys[0].d).toBeUndefined();
    expect((await fetch(jwksUrl, { method: 'POST' })).status).toBe(405);

    // An outside verifier: jose and the published URL, nothing of ours.
    const { payload, protectedHeader } = await jwtVerify(receipt, createRemoteJWKSet(jwksUrl), {
      algorithms: ['EdDSA'],
      typ: 'mrtr-receipt+jwt',
      issuer: server.origin,
    });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: serverKey.kid });
    expect(payload).toMatchObject({ sub: 'ops', op: OP, lvl: 'form', n: completed[0]?.nonce });
    expect(payload.ad).toBe(digestJson(args));
    expect(payload.ad).toBe(completed[0]?.argumentsDigest);
    // The person's answer is bound too: the content as accepted.
    expect(payload.cd).toBe(digestJson({ serviceName: s.name }));
    expect(payload.cred).toBeUndefined();
    const key = await createLocalJWKSet(jwks)(protectedHeader, { payload: '', signature: '' });
    await expect(compactVerify(receipt, key)).resolves.toBeDefined();

    // The executor already used it: presented again, nothing happens.
    const executor = await ServiceExecutor.create({ db, keys: jwksUrl, issuer: server.origin });
    await expect(
      executor.deleteService(receipt, args, { content: { serviceName: args.name } }),
    ).rejects.toMatchObject({ code: 'already_used' });
  });
});

describe('the executor, on its own, with the keys fetched from the JWKS URL', () => {
  let executor: ServiceExecutor;
  let sign: (input: Partial<ReceiptInput>, now?: number) => Promise<string>;
  beforeAll(async () => {
    executor = await ServiceExecutor.create({ db, keys: jwksUrl, issuer: server.origin });
    sign = async (input, now) => {
      const signer = await ReceiptSigner.create({
        keys: [serverKey],
        issuer: server.origin,
        ...(now !== undefined ? { now: () => now } : {}),
      });
      const base = { sub: 'ops', op: OP, qd: digestJson({ q: 1 }), lvl: 'form' as const };
      const nonce = `nonce-${Math.random().toString(36).slice(2)}`;
      return (await signer.sign({ ad: '', n: nonce, ...base, ...input } as ReceiptInput)).receipt;
    };
  });
  const del = (
    receipt: unknown,
    s: { id: string; name: string },
    content: Record<string, unknown> = {},
  ) => executor.deleteService(receipt as string, { serviceId: s.id, name: s.name }, { content });
  const forService = (s: { id: string; name: string }) => ({
    ad: digestJson({ serviceId: s.id, name: s.name }),
  });
  async function refused(receipt: unknown, s: { id: string; name: string }, code: string) {
    const before = await uses();
    const error = await del(receipt, s).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReceiptError);
    expect((error as ReceiptError).code).toBe(code);
    expect(await exists(s.id)).toBe(true);
    expect(await uses()).toBe(before); // nothing claimed
  }

  it('deletes once for a valid receipt; the second use is refused and deletes nothing', async () => {
    const s = await newService();
    const receipt = await sign(forService(s));
    const done = await del(receipt, s);
    expect(done).toMatchObject({
      deleted: { id: s.id },
      approvedBy: { principal: 'ops', level: 'form' },
    });
    expect(await exists(s.id)).toBe(false);
    // The same id and name again: a second use of the receipt must not delete the new service.
    await db.transaction((tx) =>
      insertService(tx, {
        ...s,
        environment: 'staging',
        instances: 1,
        dnsRecords: [],
        volumes: [],
      }),
    );
    await refused(receipt, s, 'already_used');
  });

  it("with policy levels enforced, destroying volumes takes delete_volume's level: a form receipt deletes the service only", async () => {
    const strict = await ServiceExecutor.create({
      db,
      keys: jwksUrl,
      issuer: server.origin,
      enforcePolicyLevels: true,
    });
    const volume = { id: `vol_r${n + 1}`, sizeGb: 4 };
    const s = await newService('staging', [volume]);
    const destroy = { serviceName: s.name, deleteVolumes: true };
    const target = { serviceId: s.id, name: s.name };
    const before = await uses();
    const form = await sign({ ...forService(s), cd: digestJson(destroy), lvl: 'form' });
    const error = await strict.deleteService(form, target, { content: destroy }).catch((e) => e);
    expect(error).toMatchObject({ code: 'insufficient_level' });
    expect(await exists(s.id)).toBe(true);
    expect(await uses()).toBe(before); // the claim rolled back with the refusal
    // At the approval page's level it runs; keeping the volumes, a form suffices.
    const url = await sign({ ...forService(s), cd: digestJson(destroy), lvl: 'url' });
    expect(await strict.deleteService(url, target, { content: destroy })).toMatchObject({
      volumes: { destroyed: [volume] },
    });
    expect(await exists(s.id)).toBe(false);
    const keptVolume = { id: `vol_r${n + 1}`, sizeGb: 2 };
    const kept = await newService('staging', [keptVolume]);
    const keep = { serviceName: kept.name, deleteVolumes: false };
    const receipt = await sign({ ...forService(kept), cd: digestJson(keep), lvl: 'form' });
    const done = strict.deleteService(
      receipt,
      { serviceId: kept.id, name: kept.name },
      { content: keep },
    );
    expect(await done).toMatchObject({
      deleted: { id: kept.id },
      volumes: { destroyed: [], retained: [keptVolume] },
    });
  });

  it('refuses a choice the person did not make: volumes kept in the answer, destroy asked of the executor', async () => {
    const s = await newService();
    const answered = { serviceName: s.name, deleteVolumes: false };
    const receipt = await sign({ ...forService(s), cd: digestJson(answered) });
    const error = await del(receipt, s, { ...answered, deleteVolumes: true }).catch((e) => e);
    expect(error).toMatchObject({ code: 'content_mismatch' });
    expect(await exists(s.id)).toBe(true);
    // A receipt without cd approves only the empty answer.
    const bare = await del(await sign(forService(s)), s, { deleteVolumes: true }).catch((e) => e);
    expect(bare).toMatchObject({ code: 'content_mismatch' });
    expect(await exists(s.id)).toBe(true);
    // The answer as given: deleted.
    expect(await del(receipt, s, answered)).toMatchObject({ deleted: { id: s.id } });
  });

  it('refuses a receipt for svc A presented to delete svc B', async () => {
    const a = await newService();
    const b = await newService();
    await refused(await sign(forService(a)), b, 'arguments_mismatch');
    expect(await exists(a.id)).toBe(true);
  });

  it('refuses another operation, an expired receipt, a wrong issuer, and no receipt at all', async () => {
    const s = await newService();
    await refused(
      await sign({ ...forService(s), op: 'tools/call:delete_volume' }),
      s,
      'operation_mismatch',
    );
    await refused(await sign(forService(s), Date.now() - 10 * 60_000), s, 'expired');
    await refused(undefined, s, 'malformed');
    await refused('', s, 'malformed');
    const volume = await executor
      .deleteVolume(await sign(forService(s)), { volumeId: 'vol_x' })
      .catch((e) => e);
    expect(volume).toMatchObject({ code: 'operation_mismatch' });
    const foreign = await ReceiptSigner.create({
      keys: [serverKey],
      issuer: 'https://elsewhere.example',
    });
    const { receipt } = await foreign.sign({
      sub: 'ops',
      op: OP,
      ...forService(s),
      qd: digestJson({}),
      lvl: 'form',
      n: 'n-foreign',
    });
    await refused(receipt, s, 'wrong_issuer');
  });

  it('refuses a receipt with any field of header or payload altered, or re-signed with another key', async () => {
    const s = await newService();
    const receipt = await sign(forService(s));
    const [h, p, sig] = receipt.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const altered: Record<string, unknown> = {
      iss: 'https://attacker.example',
      sub: 'mallory',
      iat: payload.iat - 1,
      exp: payload.exp + 3600,
      jti: 'A'.repeat(22),
      op: 'tools/call:delete_volume',
      ad: digestJson({ other: 1 }),
      qd: digestJson({ other: 2 }),
      lvl: 'passkey',
      n: 'another-nonce',
      cred: 'Y3JlZA',
    };
    for (const [claim, value] of Object.entries(altered))
      await refused(`${h}.${enc({ ...payload, [claim]: value })}.${sig}`, s, 'bad_signature');
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    await refused(`${enc({ ...header, kid: 'other' })}.${p}.${sig}`, s, 'unknown_key');
    await refused(`${enc({ ...header, alg: 'none' })}.${p}.`, s, 'unsupported_algorithm');
    await refused(`${enc({ ...header, typ: 'JWT' })}.${p}.${sig}`, s, 'wrong_type');
    await refused(`${h}.${p}.${sig.slice(0, -4)}AAAA`, s, 'bad_signature');
    // An attacker's own key, under the server's kid and under its own.
    for (const kid of [serverKey.kid, 'attacker']) {
      const attacker = await ReceiptSigner.create({
        keys: [{ kid, ...(await generateKeyPair('EdDSA')) }],
        issuer: server.origin,
      });
      const forged = await attacker.sign({ ...payload, ...forService(s) });
      expect(decodeProtectedHeader(forged.receipt).kid).toBe(kid);
      await refused(forged.receipt, s, kid === 'attacker' ? 'unknown_key' : 'bad_signature');
    }
  });

  it('refuses a valid receipt whose principal is not in the owning team, and releases the claim', async () => {
    const s = await newService();
    const receipt = await sign({ ...forService(s), sub: 'mallory' });
    const before = await uses();
    await expect(del(receipt, s)).rejects.toBeInstanceOf(ExecutorRefusal);
    expect(await exists(s.id)).toBe(true);
    expect(await uses()).toBe(before);
  });
});

describe('an MCP layer that hands over no receipt', () => {
  it('deletes nothing: the executor refuses, the tool says so', async () => {
    // A gate built without `receipts`, as a bug or a bypass in the MCP layer would leave it.
    const gate = new ConfirmationGate<Queryable>({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: randomSecret() }] }),
      store: new PostgresReplayStore(db),
    });
    const executor = await ServiceExecutor.create({ db, keys: jwksUrl, issuer: server.origin });
    const endpoint = createMcpEndpoint({
      serverInfo: { name: 'bypass', version: '0' },
      tools: serviceTools(db, gate, executor),
      authenticate: bearerAuthenticator(new Map([[TOKEN, 'ops']])),
    });
    const bare = await listen(endpoint);
    try {
      const s = await newService();
      const args = { serviceId: s.id, name: s.name };
      const asked = await callTool(bare.url, TOKEN, 'delete_service', args);
      const done = await callTool(bare.url, TOKEN, 'delete_service', args, {
        requestState: asked.body.result.requestState,
        inputResponses: { confirm_delete: { action: 'accept', content: { serviceName: s.name } } },
      });
      expect(done.body.result).toMatchObject({ resultType: 'complete', isError: true });
      expect(done.body.result.content[0].text).toContain('malformed');
      expect(done.body.result.content[0].text).toContain('Nothing was deleted');
      expect(await exists(s.id)).toBe(true);
    } finally {
      await bare.close();
    }
  });
});
