/**
 * `mrtr receipt verify` as a person runs it (the built `dist/main.js`, in a
 * child process) against the JWKS a running service deleter publishes: what
 * a good receipt proves, and a clear refusal with a non-zero exit for a bad
 * signature, an unknown key, an expired or malformed receipt, and keys that
 * cannot be fetched.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { digestJson } from '@mrtr/digest';
import { ReceiptSigner } from '@mrtr/receipt';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningServer,
  randomSecret,
  startServiceDeleter,
} from '../../service-deleter/src/app.js';
import { type Database, openDatabase } from '../../service-deleter/src/db.js';

const MAIN = join(import.meta.dirname, '../dist/main.js');
const AD = `sha256:${'A'.repeat(43)}`;
const QD = `sha256:${'B'.repeat(43)}`;

let db: Database;
let server: RunningServer;
let jwks: string;
let signer: ReceiptSigner;
let keyPair: Awaited<ReturnType<typeof generateKeyPair>>;

/** Run mrtr; resolves with its exit code and output (never rejects on a non-zero exit). */
function mrtr(args: string[], stdin?: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [MAIN, ...args], (error, out, err) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
    );
    child.stdin?.end(stdin ?? '');
  });
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`build mrtr first: ${MAIN} is missing`);
  db = await openDatabase('memory://');
  keyPair = await generateKeyPair('EdDSA');
  server = await startServiceDeleter({
    db,
    tokens: new Map([['tok-receipt-cli', 'ops']]),
    secret: randomSecret(),
    approvalPage: false,
    receiptKeys: [{ kid: 'sd-1', ...keyPair }],
  });
  jwks = `${server.origin}/.well-known/jwks.json`;
  signer = await ReceiptSigner.create({
    keys: [{ kid: 'sd-1', ...keyPair }],
    issuer: server.origin,
  });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

const claims = { sub: 'alice', op: 'tools/call:delete_service', ad: AD, qd: QD, n: 'nonce-1' };

describe('mrtr receipt verify', () => {
  it('prints what a passkey receipt proves and what it does not, exit 0', async () => {
    const { receipt } = await signer.sign({ ...claims, lvl: 'passkey', cred: 'cHJlc2VuY2U' });
    const r = await mrtr(['receipt', 'verify', receipt, '--jwks', jwks, '--issuer', server.origin]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Receipt verified: signed by key "sd-1" of ${jwks}`);
    expect(r.out).toMatch(/principal\s+"alice"/);
    expect(r.out).toMatch(/operation\s+"tools\/call:delete_service"/);
    expect(r.out).toMatch(new RegExp(`argument digest\\s+${AD}`));
    expect(r.out).toMatch(new RegExp(`question digest\\s+${QD}`));
    expect(r.out).toMatch(/confirmed by\s+passkey .*credential "cHJlc2VuY2U"/);
    expect(r.out).toMatch(/ticket nonce\s+"nonce-1"/);
    expect(r.out).toMatch(/issued at\s+\d{4}-\d\d-\d\dT/);
    expect(r.out).toMatch(/expires at\s+\d{4}-\d\d-\d\dT/);
    expect(r.out).toMatch(/expires at .*\(this check accepts it 30 s longer, for clock skew\)/);
    expect(r.out).toContain("that the passkey is the principal's own");
    expect(r.out).toContain('It does not prove:');
    expect(r.out).toContain('not already performed');
  });

  it('reads the receipt from stdin with -, and says a form receipt does not prove a person answered', async () => {
    const { receipt } = await signer.sign({ ...claims, lvl: 'form' });
    const r = await mrtr(['receipt', 'verify', '-', '--jwks', jwks], `${receipt}\n`);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/confirmed by\s+form/);
    expect(r.out).toContain('that a person, rather than the client or its model, answered');
  });

  it('stops reading stdin past 16 KiB: exit 2 and why, even when the input never ends', async () => {
    const long = await mrtr(['receipt', 'verify', '-', '--jwks', jwks], 'x'.repeat(20_000));
    expect(long.code).toBe(2);
    expect(long.err).toContain('the receipt on stdin is longer than 16384 bytes');
    // Endless input: mrtr must exit on its own, not read until memory runs out.
    const child = spawn(process.execPath, [MAIN, 'receipt', 'verify', '-', '--jwks', jwks]);
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdin.on('error', () => {}); // EPIPE once mrtr has stopped reading
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const pump = () => {
      while (child.exitCode === null && child.stdin.writable && child.stdin.write(chunk));
      if (child.exitCode === null && child.stdin.writable) child.stdin.once('drain', pump);
    };
    pump();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(err).toContain('longer than 16384 bytes');
  });

  it('refuses with exit 1 and a reason: altered, foreign key, unknown kid, expired, malformed', async () => {
    const { receipt } = await signer.sign({ ...claims, lvl: 'url' });
    const [h, p, s] = receipt.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const altered = Buffer.from(JSON.stringify({ ...payload, sub: 'mallory' })).toString(
      'base64url',
    );
    const other = await generateKeyPair('EdDSA');
    const forged = await (
      await ReceiptSigner.create({ keys: [{ kid: 'sd-1', ...other }], issuer: server.origin })
    ).sign({ ...claims, lvl: 'url' });
    const stranger = await (
      await ReceiptSigner.create({ keys: [{ kid: 'mallory', ...other }], issuer: server.origin })
    ).sign({ ...claims, lvl: 'url' });
    const old = await (
      await ReceiptSigner.create({
        keys: [{ kid: 'sd-1', ...keyPair }],
        issuer: server.origin,
        now: () => Date.now() - 3_600_000,
      })
    ).sign({ ...claims, lvl: 'url' });
    const cases: [string, string, RegExp][] = [
      [
        `${h}.${altered}.${s}`,
        'bad_signature',
        /altered after signing, or signed with another key/,
      ],
      [forged.receipt, 'bad_signature', /signature does not verify/],
      [stranger.receipt, 'unknown_key', /key id is not in the key set/],
      ['not-a-receipt', 'malformed', /not a well-formed approval receipt/],
    ];
    for (const [input, code, why] of cases) {
      const r = await mrtr(['receipt', 'verify', input, '--jwks', jwks]);
      expect(r.code, code).toBe(1);
      expect(r.err).toContain(`Receipt NOT verified (${code})`);
      expect(r.err).toMatch(why);
      expect(r.out).toBe('');
    }
    // Expired: authentic, but past its lifetime; the person is told so, and how to check it as of its use.
    const expired = await mrtr(['receipt', 'verify', old.receipt, '--jwks', jwks]);
    expect(expired.code).toBe(1);
    expect(expired.out).toBe('');
    expect(expired.err).toContain(
      `Receipt NOT verified as of now (expired): its signature checks out with the keys of ${jwks}, but the receipt is outside its lifetime (it expired at `,
    );
    expect(expired.err).toContain('this alone does not mean it was forged or misused');
    expect(expired.err).toContain('run again with --at <time of use>');
    expect(expired.err).not.toContain('It proves nothing');
    // As of when it was valid (e.g. its audit record's time), the expired one verifies.
    const at = new Date(Date.now() - 3_600_000 + 60_000).toISOString();
    expect((await mrtr(['receipt', 'verify', old.receipt, '--jwks', jwks, '--at', at])).code).toBe(
      0,
    );
    const wrongIssuer = await mrtr([
      'receipt',
      'verify',
      receipt,
      '--jwks',
      jwks,
      '--issuer',
      'https://x.example',
    ]);
    expect(wrongIssuer.code).toBe(1);
    expect(wrongIssuer.err).toContain('(wrong_issuer)');
    expect(wrongIssuer.err).toContain(
      `it was issued by "${server.origin}", not by --issuer "https://x.example"`,
    );
  });

  it('says it could not load the keys (exit 2) for a JWKS that cannot be fetched or is not one', async () => {
    const { receipt } = await signer.sign({ ...claims, lvl: 'form' });
    const broken = createServer((_req, res) => res.writeHead(500).end('oops'));
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const { port } = broken.address() as AddressInfo;
    try {
      for (const url of [`http://127.0.0.1:${port}/jwks.json`, `${server.origin}/nothing-here`]) {
        const r = await mrtr(['receipt', 'verify', receipt, '--jwks', url]);
        expect(r.code, url).toBe(2);
        expect(r.err).toContain(`Could not load the keys from ${url}`);
        expect(r.err).toContain('Nothing was verified');
      }
    } finally {
      broken.close();
    }
    const closed = await mrtr([
      'receipt',
      'verify',
      receipt,
      '--jwks',
      `http://127.0.0.1:${port}/jwks.json`,
    ]);
    expect(closed.code).toBe(2);
    for (const wrong of ['ftp://127.0.0.1/jwks.json', 'data://x', 'file://elsewhere/jwks.json']) {
      const usage = await mrtr(['receipt', 'verify', receipt, '--jwks', wrong]);
      expect(usage.code, wrong).toBe(2);
      expect(usage.err).toContain(
        '--jwks must be an http(s) URL of a JWKS, or a file holding one (a path or a file:// URL)',
      );
    }
  });

  it('verifies with the JWKS archived in a file, as a path or a file:// URL, also as of --at', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-jwks-'));
    try {
      // The set the issuer published, saved for an audit.
      const file = join(dir, 'jwks.json');
      writeFileSync(file, await (await fetch(jwks)).text());
      const { receipt } = await signer.sign({ ...claims, lvl: 'passkey', cred: 'cHJlc2VuY2U' });
      for (const given of [file, pathToFileURL(file).href]) {
        const r = await mrtr(['receipt', 'verify', receipt, '--jwks', given]);
        expect(r.code, given).toBe(0);
        expect(r.out).toContain(`Receipt verified: signed by key "sd-1" of ${file}, issuer`);
        expect(r.out).toMatch(/principal\s+"alice"/);
      }
      // An old receipt, long expired: checked against the archived set as of its time of use.
      const old = await (
        await ReceiptSigner.create({
          keys: [{ kid: 'sd-1', ...keyPair }],
          issuer: server.origin,
          now: () => Date.now() - 86_400_000,
        })
      ).sign({ ...claims, lvl: 'url' });
      const at = new Date(Date.now() - 86_400_000 + 60_000).toISOString();
      const asOfUse = await mrtr(['receipt', 'verify', old.receipt, '--jwks', file, '--at', at]);
      expect(asOfUse.code).toBe(0);
      expect(asOfUse.out).toContain('Receipt verified');
      const now = await mrtr(['receipt', 'verify', old.receipt, '--jwks', file]);
      expect(now.code).toBe(1);
      expect(now.err).toContain(`(expired): its signature checks out with the keys of ${file}`);
      // Another issuer's set in the file: the receipt's key is not in it.
      const other = join(dir, 'other.json');
      const stranger = await ReceiptSigner.create({
        keys: [{ kid: 'sd-1', ...(await generateKeyPair('EdDSA')) }],
        issuer: server.origin,
      });
      writeFileSync(other, JSON.stringify(stranger.jwks()));
      const forged = await mrtr(['receipt', 'verify', receipt, '--jwks', other]);
      expect(forged.code).toBe(1);
      expect(forged.err).toContain('Receipt NOT verified (bad_signature)');
      // A file that is missing, not JSON, or not a JWKS: nothing verified, exit 2, the file not quoted.
      writeFileSync(join(dir, 'notes.txt'), 'secret: hunter2\n');
      writeFileSync(join(dir, 'array.json'), '[1, 2]');
      for (const [name, why] of [
        ['missing.json', 'no such file'],
        ['notes.txt', 'the file is not JSON'],
        ['array.json', 'the file is not a JWKS'],
      ] as const) {
        const r = await mrtr(['receipt', 'verify', receipt, '--jwks', join(dir, name)]);
        expect(r.code, name).toBe(2);
        expect(r.err).toContain(`Could not load the keys from ${join(dir, name)}: ${why}`);
        expect(r.err).toContain('Nothing was verified');
        expect(r.err).not.toContain('hunter2');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mrtr receipt verify against an action (--operation, --arguments …)', () => {
  const args = { serviceId: 'svc_8f21c', options: { volumes: true, regions: ['eu', 'us'] } };
  const content = { serviceName: 'api-prod' };
  const op = 'tools/call:delete_service';
  const sign = (extra: Record<string, unknown> = {}) =>
    signer.sign({
      ...claims,
      ad: digestJson(args),
      cd: digestJson(content),
      lvl: 'url',
      ...extra,
    } as Parameters<ReceiptSigner['sign']>[0]);
  const verify = (receipt: string, ...extra: string[]) =>
    mrtr(['receipt', 'verify', receipt, '--jwks', jwks, ...extra]);

  it('verifies a receipt for exactly these arguments, given in another member order or from a file', async () => {
    const { receipt } = await sign();
    const reordered =
      '{ "options": { "regions": ["eu", "us"], "volumes": true }, "serviceId": "svc_8f21c" }';
    const r = await verify(
      receipt,
      '--operation',
      op,
      '--arguments',
      reordered,
      '--content',
      JSON.stringify(content),
      '--principal',
      'alice',
      '--min-level',
      'url',
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('It approves exactly the action given:');
    expect(r.out).toContain(`the arguments of --arguments (RFC 8785 digest ${digestJson(args)})`);
    expect(r.out).toContain('approved by the principal "alice"');
    expect(r.out).not.toContain('give them with --operation');
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-args-'));
    try {
      writeFileSync(join(dir, 'args.json'), JSON.stringify(args, null, 2));
      const f = await verify(
        receipt,
        '--operation',
        op,
        '--arguments',
        `@${join(dir, 'args.json')}`,
      );
      expect(f.code, f.err).toBe(0);
      expect(f.out).toContain('not the answer: give --content to check it too');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses, exit 1 with both digests, a receipt for other arguments, another operation or answer, principal or a lower level', async () => {
    const { receipt } = await sign();
    const changed = { ...args, serviceId: 'svc_0000' };
    const cases: [string[], RegExp][] = [
      [
        ['--operation', op, '--arguments', JSON.stringify(changed)],
        new RegExp(
          `\\(arguments_mismatch\\): it approves the arguments whose RFC 8785 digest is ${digestJson(args)}; the digest of --arguments is ${digestJson(changed)}`,
        ),
      ],
      [
        ['--operation', 'tools/call:delete_everything', '--arguments', JSON.stringify(args)],
        /\(operation_mismatch\): it approves the operation "tools\/call:delete_service", not "tools\/call:delete_everything"/,
      ],
      [
        [
          '--operation',
          op,
          '--arguments',
          JSON.stringify(args),
          '--content',
          '{"serviceName":"api-staging"}',
        ],
        /\(content_mismatch\)/,
      ],
      [
        ['--operation', op, '--arguments', JSON.stringify(args), '--principal', 'mallory'],
        /\(principal_mismatch\): it was approved by "alice", not "mallory"/,
      ],
      [
        ['--operation', op, '--arguments', JSON.stringify(args), '--min-level', 'passkey'],
        /\(insufficient_level\): it was confirmed at level url, below --min-level passkey/,
      ],
      [
        // A lone surrogate: JSON text can hold it, RFC 8785 cannot, so no confirmation ever named it.
        ['--operation', op, '--arguments', '{"serviceId":"\\ud800"}'],
        /\(arguments_mismatch\).*the digest of --arguments is none \(they hold what JSON cannot carry exactly/,
      ],
    ];
    for (const [extra, why] of cases) {
      const r = await verify(receipt, ...extra);
      expect(r.code, extra.join(' ')).toBe(1);
      expect(r.err).toMatch(why);
      expect(r.err).toContain('Its signature checks out');
      expect(r.out).toBe('');
    }
  });

  it('exits 2, never the 1 of a refused receipt, for what commander refuses: a missing --jwks, an unknown command', async () => {
    for (const [args, message] of [
      [['receipt', 'verify', 'x'], "required option '--jwks <url-or-file>' not specified"],
      [['frob'], "unknown command 'frob'"],
      [[], 'Usage: mrtr'],
    ] as const) {
      const r = await mrtr([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain(message);
    }
    expect((await mrtr(['--help'])).code).toBe(0);
    // The version is the package's, not a copy that falls behind it.
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dirname, '../package.json'), 'utf8'),
    );
    const printed = await mrtr(['--version']);
    expect([printed.code, printed.out.trim()]).toEqual([0, version]);
    // A reader that closes the pipe at once: commander's write fails with EPIPE, which is no error of mrtr.
    const piped = execFileSync(
      'bash',
      ['-c', `"${process.execPath}" "${MAIN}" --help | true; echo "\${PIPESTATUS[0]}"`],
      { encoding: 'utf8' },
    );
    expect(piped.trim()).toBe('0');
  });

  it('reads @file only from a regular UTF-8 file of at most 8 MiB, never quoting it, and never waits on a FIFO', async () => {
    const { receipt } = await sign();
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-files-'));
    try {
      writeFileSync(join(dir, 'latin1.json'), Buffer.from('{"serviceId":"svc_\xff"}', 'latin1'));
      writeFileSync(join(dir, 'secret.txt'), 'hunter2: not JSON');
      writeFileSync(join(dir, 'big.json'), `"${'x'.repeat(9 * 1024 * 1024)}"`);
      execFileSync('mkfifo', [join(dir, 'fifo')]);
      for (const [file, why] of [
        ['latin1.json', 'it is not UTF-8 text'],
        ['secret.txt', 'names a file that is not JSON'],
        ['big.json', 'it is larger than 8388608 bytes'],
        ['fifo', 'it is not a regular file'],
      ] as const) {
        const r = await verify(receipt, '--operation', op, '--arguments', `@${join(dir, file)}`);
        expect(r.code, file).toBe(2);
        expect(r.err).toContain(why);
        expect(r.err).not.toContain('hunter2');
      }
      const fifo = await verify(receipt, '--jwks', join(dir, 'fifo'));
      expect(fifo.code).toBe(2);
      expect(fifo.err).toContain('it is not a regular file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a receipt refused before the action is looked at keeps its own reason and exit 1', async () => {
    const { receipt } = await sign();
    const [h, , sig] = receipt.split('.') as [string, string, string];
    for (const [bad, code] of [
      [`${h}.e30.${sig}`, 'bad_signature'],
      ['garbage', 'malformed'],
    ] as const) {
      const r = await verify(bad, '--operation', op, '--arguments', JSON.stringify(args));
      expect(r.code, bad).toBe(1);
      expect(r.err).toContain(`(${code})`);
      expect(r.err).toContain('It proves nothing');
    }
  });

  it('checks the signature first: a forged receipt for the right arguments is refused as a bad signature', async () => {
    const { receipt } = await sign();
    const [h, p, sig] = receipt.split('.') as [string, string, string];
    const forged = `${h}.${p}.${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`;
    const r = await verify(forged, '--operation', op, '--arguments', JSON.stringify(args));
    expect(r.code).toBe(1);
    expect(r.err).toContain('(bad_signature)');
  });

  it('exits 2 for an action option without --operation and --arguments, JSON that does not parse, a missing file or an unknown level', async () => {
    const { receipt } = await sign();
    for (const [extra, message] of [
      [['--arguments', '{}'], 'give both --operation'],
      [['--operation', op], 'give both --operation'],
      [['--min-level', 'passkey'], 'give both --operation'],
      [['--operation', op, '--arguments', '{serviceId: 1}'], '--arguments must be JSON'],
      [['--operation', op, '--arguments', '@/nonexistent/args.json'], 'no such file'],
      [['--operation', op, '--arguments', '@/dev/zero'], '(/dev/zero): it is not a regular file'],
      [['--bogus'], "unknown option '--bogus'"],
      [
        ['--operation', op, '--arguments', '{}', '--principal', ''],
        '--principal must not be empty',
      ],
      [['--operation', op, '--arguments', '[]'], '--arguments must be a JSON object'],
      [
        ['--operation', op, '--arguments', '{}', '--content', 'null'],
        '--content must be a JSON object',
      ],
      [['--operation', op, '--arguments', '{}', '--issuer', ''], '--issuer must not be empty'],
      [['--issuer', ''], '--issuer must not be empty'],
      [['--operation', op, '--arguments', 'null'], '--arguments must be a JSON object'],
      [['--operation', op, '--arguments', '@'], '--arguments @ names no file'],
      [['--jwks', '/dev/zero'], 'Could not load the keys from /dev/zero: it is not a regular file'],
      [
        ['--operation', op, '--arguments', '{}', '--min-level', 'retina'],
        '--min-level must be form, url or passkey',
      ],
    ] as const) {
      const r = await verify(receipt, ...extra);
      expect(r.code, extra.join(' ')).toBe(2);
      expect(r.err).toContain(message);
    }
  });
});

describe('mrtr against a server that wants a token', () => {
  it('says which variable or option carries the token, without a token and with a wrong one', async () => {
    const url = `${server.origin}/mcp`;
    for (const extra of [[], ['--token', 'wrong-token']]) {
      const r = await mrtr(['tools', url, ...extra]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(
        /HTTP 401\): set MRTR_TOKEN to the token the server printed at start, or pass --token/,
      );
    }
  });
});
