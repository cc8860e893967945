import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JWKS_BYTES, RECEIPT_TYPE, remoteKeySet, verifyReceipt } from '../src/index.js';
import {
  ARGS_A,
  expectRefused,
  ISSUER,
  inputFor,
  NOW,
  newKey,
  OPERATION,
  signerWith,
} from './helpers.js';

const signer = await signerWith([await newKey('r1'), await newKey('r0')]);
/** The JWKS as an outside verifier gets it: JSON text over the wire. */
const published = JSON.stringify(signer.jwks());

describe('an outside verifier with jose alone', () => {
  it('verifies a receipt with jwtVerify and createLocalJWKSet on the published JWKS text', async () => {
    const { receipt, claims } = await signer.sign(inputFor({ lvl: 'passkey', cred: 'AQID' }));
    // Nothing of @mrtr/receipt below: only jose and the JWKS text.
    const { payload, protectedHeader } = await jwtVerify(
      receipt,
      createLocalJWKSet(JSON.parse(published)),
      {
        algorithms: ['EdDSA'],
        typ: 'mrtr-receipt+jwt',
        issuer: ISSUER,
        currentDate: new Date(NOW),
        requiredClaims: ['sub', 'exp', 'jti'],
      },
    );
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: 'r1', typ: RECEIPT_TYPE });
    expect(payload).toEqual(claims);
    expect(decodeProtectedHeader(receipt).kid).toBe('r1');
  });

  it('jose alone refuses a receipt changed after signing', async () => {
    const { receipt } = await signer.sign(inputFor());
    const [h, p, s] = receipt.split('.') as [string, string, string];
    const changed = JSON.parse(Buffer.from(p, 'base64url').toString());
    changed.ad = 'sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const forged = `${h}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${s}`;
    await expect(
      jwtVerify(forged, createLocalJWKSet(JSON.parse(published)), {
        algorithms: ['EdDSA'],
        currentDate: new Date(NOW),
      }),
    ).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });
});

describe('keys from a JWKS URL', () => {
  let server: Server;
  let url: URL;
  let body = published;
  let status = 200;
  let fetches = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      fetches++;
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    );
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const expected = () => ({ operation: OPERATION, arguments: ARGS_A, now: NOW });

  it('verifies with a URL, and with a remote set made once (one fetch for many receipts)', async () => {
    const { receipt } = await signer.sign(inputFor());
    await expect(verifyReceipt(receipt, { ...expected(), keys: url })).resolves.toBeDefined();
    for (const remote of [createRemoteJWKSet(url), remoteKeySet(url)]) {
      const before = fetches;
      for (let i = 0; i < 3; i++)
        await expect(
          verifyReceipt(receipt, { ...expected(), keys: remote }),
        ).resolves.toBeDefined();
      expect(fetches - before).toBe(1);
    }
  });

  it('a set that cannot be fetched or is not a JWKS: keys_unavailable, nothing verified', async () => {
    const { receipt } = await signer.sign(inputFor());
    try {
      status = 500;
      await expectRefused(verifyReceipt(receipt, { ...expected(), keys: url }), 'keys_unavailable');
      status = 200;
      body = '{"keys": "nope"}';
      await expectRefused(verifyReceipt(receipt, { ...expected(), keys: url }), 'keys_unavailable');
      body = '<html>';
      await expectRefused(verifyReceipt(receipt, { ...expected(), keys: url }), 'keys_unavailable');
    } finally {
      status = 200;
      body = published;
    }
    const closed = new URL('http://127.0.0.1:1/jwks.json');
    const error = await expectRefused(
      verifyReceipt(receipt, { ...expected(), keys: closed }),
      'keys_unavailable',
    );
    expect(error.cause).toBeDefined();
  });

  it('a receipt under a kid the published set lacks: unknown_key', async () => {
    const stranger = await signerWith([await newKey('r9')]);
    const { receipt } = await stranger.sign(inputFor());
    await expectRefused(verifyReceipt(receipt, { ...expected(), keys: url }), 'unknown_key');
  });
});

describe('a JWKS URL that sends without end', () => {
  it('is refused as keys_unavailable once past MAX_JWKS_BYTES, not read into memory', async () => {
    let sent = 0;
    const endless = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        while (!res.destroyed && sent < 512 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
      };
      res.write('{"keys":[');
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const at = new URL(`http://127.0.0.1:${(endless.address() as AddressInfo).port}/jwks.json`);
      const { receipt } = await signer.sign(inputFor());
      const error = await expectRefused(
        verifyReceipt(receipt, { operation: OPERATION, arguments: ARGS_A, now: NOW, keys: at }),
        'keys_unavailable',
      );
      expect(String((error.cause as Error | undefined)?.message)).toContain(
        `larger than ${MAX_JWKS_BYTES} bytes`,
      );
      // Stopped soon after the cap (socket buffers aside), far from the 512 MiB on offer.
      expect(sent).toBeLessThan(MAX_JWKS_BYTES * 16);
      // The same bound on a key set made once to verify many receipts.
      const before = sent;
      await expectRefused(
        verifyReceipt(receipt, {
          operation: OPERATION,
          arguments: ARGS_A,
          now: NOW,
          keys: remoteKeySet(at),
        }),
        'keys_unavailable',
      );
      expect(sent - before).toBeLessThan(MAX_JWKS_BYTES * 16);
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((resolve) => endless.close(() => resolve()));
    }
  });
});
