/**
 * Ticket size and speed: `@mrtr/ticket` seal + open against the official
 * SDK's `createRequestStateCodec` (`@modelcontextprotocol/server` 2.4.0,
 * HMAC-SHA256 over JSON) mint + verify, on the claims of the service
 * deleter's delete_service confirmation, alternating in one run on one machine.
 *
 * The project's targets: at most 200 characters on the wire, and at least 3× the
 * SDK's operations per second. The script prints figures; it asserts nothing.
 *
 * Run: `npx -y pnpm@12.4.2 bench:ticket` (builds the packages first).
 */

import { createCipheriv, createDecipheriv } from 'node:crypto';
import { createRequestStateCodec } from '@modelcontextprotocol/server';
import { digestJson } from '@mrtr/digest';
import { aeadReady, TicketSealer } from '@mrtr/ticket';
import { hchacha, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import sodium from 'libsodium-wrappers';
import { printTable } from './measure.js';

const SECRET = 'bench-master-secret-0123456789abcdefghijklmnop';

// The service deleter: the agent calls delete_service {serviceId: "svc_8f21c", name: "api-prod"} as user_5f2a;
// the server asks "confirm_delete" and seals what the retry must match.
const binding = {
  sub: 'user_5f2a',
  op: 'tools/call:delete_service',
  argsDigest: digestJson({ serviceId: 'svc_8f21c', name: 'api-prod' }),
};
// The gate seals the digest of the question shown, not the question itself.
const input = {
  ...binding,
  inputKey: 'confirm_delete',
  phase: 'confirm',
  questionDigest: digestJson({ message: 'Delete api-prod (svc_8f21c)?' }),
};

// Tickets switch from OpenSSL to libsodium once its WebAssembly is compiled: measure the steady state.
await aeadReady;
const sealer = new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET }], ttlSeconds: 300 });

/**
 * The same claims for the SDK codec, as its JSON payload: everything our
 * ticket carries, `iat` and `exp` included as a ticket of ours has them
 * (the codec adds its envelope `exp` on top).
 */
interface SdkClaims {
  sub: string;
  op: string;
  argsDigest: string;
  inputKey: string;
  phase: string;
  questionDigest: string;
  nonce: string;
  iat: number;
  exp: number;
}
const codec = createRequestStateCodec<SdkClaims>({ key: SECRET, ttlSeconds: 300 });
function sdkClaims(): SdkClaims {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  return { ...input, nonce, iat, exp: iat + 300 };
}

function oursOnce(): void {
  const { ticket } = sealer.seal(input);
  const opened = sealer.open(ticket, binding);
  if (!opened.ok) throw new Error(`open failed: ${opened.reason}`);
}

async function sdkOnce(): Promise<void> {
  const state = await codec.mint(sdkClaims());
  const p = await codec.verify(state, undefined as never);
  // The checks `open` makes with the binding, made by hand after the SDK's verify.
  if (p.sub !== binding.sub || p.op !== binding.op || p.argsDigest !== binding.argsDigest)
    throw new Error('binding mismatch');
}

/**
 * One timed slice: operations per wall-clock second, and per CPU second of
 * this process (all its threads, so the SDK's Web Crypto work counts too).
 * The CPU rate moves less when other processes load the machine.
 */
async function slice(fn: () => unknown, ms: number): Promise<{ wall: number; cpu: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < ms) {
    const r = fn();
    if (r instanceof Promise) await r;
    n++;
  }
  const wallMs = performance.now() - t0;
  const used = process.cpuUsage(cpu0);
  return { wall: (n * 1000) / wallMs, cpu: (n * 1e6) / (used.user + used.system) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

// Wire lengths, and a sanity check that both round-trip before timing.
oursOnce();
await sdkOnce();
const ours = sealer.seal(input).ticket;
const sdk = await codec.mint(sdkClaims());

// Warm up, then alternate short slices so load from other processes hits both alike;
// the ratio is taken per round (adjacent slices) and its median reported.
await slice(oursOnce, 1000);
await slice(sdkOnce, 1000);
const ROUNDS = 21;
const SLICE_MS = 300;
const o: { wall: number; cpu: number }[] = [];
const k: { wall: number; cpu: number }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  o.push(await slice(oursOnce, SLICE_MS));
  k.push(await slice(sdkOnce, SLICE_MS));
}
const oursWall = median(o.map((x) => x.wall));
const sdkWall = median(k.map((x) => x.wall));
const oursCpu = median(o.map((x) => x.cpu));
const sdkCpu = median(k.map((x) => x.cpu));
const wallRatio = median(o.map((x, i) => x.wall / (k[i] as { wall: number }).wall));
const cpuRatio = median(o.map((x, i) => x.cpu / (k[i] as { cpu: number }).cpu));

// Where the time of one seal + open goes: the AEAD as the sealer calls it (libsodium's
// XChaCha20-Poly1305), the CSPRNG, the rest; and, for comparison, the AEAD as tickets ran it
// before libsodium (HChaCha20 from noble, then RFC 8439 ChaCha20-Poly1305 in OpenSSL) and noble's.
const key = new Uint8Array(32).fill(1);
const nonce = new Uint8Array(24).fill(2);
const plain = new Uint8Array(57).fill(3);
const aad = new Uint8Array(82).fill(4);
const SIGMA = new Uint32Array(new TextEncoder().encode('expand 32-byte k').buffer);
function subkey(): Uint8Array {
  const out = new Uint32Array(8);
  hchacha(SIGMA, new Uint32Array(key.buffer), new Uint32Array(nonce.buffer, 0, 4), out);
  return new Uint8Array(out.buffer);
}
const iv = new Uint8Array(12);
iv.set(nonce.subarray(16), 4);
const sodiumSealed = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
  plain,
  aad,
  null,
  nonce,
  key,
);
function sodiumEncrypt(): Uint8Array {
  return sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plain, aad, null, nonce, key);
}
function sodiumDecrypt(): Uint8Array {
  return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(null, sodiumSealed, aad, nonce, key);
}
function encrypt(): Uint8Array {
  const c = createCipheriv('chacha20-poly1305', subkey(), iv, { authTagLength: 16 });
  c.setAAD(aad, { plaintextLength: plain.length });
  const out = Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
  return out;
}
const sealed = encrypt();
function decrypt(): void {
  const d = createDecipheriv('chacha20-poly1305', subkey(), iv, { authTagLength: 16 });
  d.setAAD(aad, { plaintextLength: plain.length });
  d.setAuthTag(sealed.subarray(plain.length));
  d.update(sealed.subarray(0, plain.length));
  d.final();
}
/** CPU-second rate of `fn`, median of five 200 ms slices. */
async function rate(fn: () => unknown): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) xs.push((await slice(fn, 200)).cpu);
  return median(xs);
}
const parts = {
  seal: await rate(() => sealer.seal(input)),
  open: await rate(() => sealer.open(ours, binding)),
  sodiumEncrypt: await rate(sodiumEncrypt),
  sodiumDecrypt: await rate(sodiumDecrypt),
  encrypt: await rate(encrypt),
  decrypt: await rate(decrypt),
  nobleEncrypt: await rate(() => xchacha20poly1305(key, nonce, aad).encrypt(plain)),
  nobleDecrypt: await rate(() => xchacha20poly1305(key, nonce, aad).decrypt(sealed)),
  random: await rate(() => crypto.getRandomValues(new Uint8Array(4096))),
};
const us = (r: number) => 1e6 / r;

console.log(
  `Node ${process.version}; delete_service claims; ${ROUNDS} alternating rounds of ${SLICE_MS} ms each.\n`,
);
printTable(
  [
    'implementation',
    'wire length (chars)',
    'mint+open ops/s (wall, median)',
    'ops per CPU second (median)',
  ],
  [
    ['@mrtr/ticket seal + open (XChaCha20-Poly1305)', ours.length, oursWall, oursCpu],
    ['@modelcontextprotocol/server 2.4.0 mint + verify (HMAC-SHA256)', sdk.length, sdkWall, sdkCpu],
  ],
);
console.log(
  `\nratio (median of per-round ratios): ${wallRatio.toFixed(2)}× wall-clock, ${cpuRatio.toFixed(2)}× per CPU second ` +
    `(target ≥ 3×); ratio of the medians: ${(oursWall / sdkWall).toFixed(2)}×.`,
);
console.log(
  `wire length: ${ours.length} characters (target ≤ 200); the SDK's token for the same claims: ${sdk.length}.\n`,
);
console.log('Where one seal + open goes (µs of CPU per call, medians):');
printTable(
  ['part', 'µs'],
  [
    ['seal (whole)', us(parts.seal)],
    ['open (whole)', us(parts.open)],
    ['  AEAD seal, 57 B (libsodium XChaCha20-Poly1305, WebAssembly)', us(parts.sodiumEncrypt)],
    ['  AEAD open, 57 B (same)', us(parts.sodiumDecrypt)],
    ['  CSPRNG, 40 B (drawn 4 KiB at a time)', us(parts.random) / 102],
    [
      '  layout, base64url, checks, allocation (the rest)',
      us(parts.seal) +
        us(parts.open) -
        us(parts.sodiumEncrypt) -
        us(parts.sodiumDecrypt) -
        us(parts.random) / 102,
    ],
    [
      'for comparison: noble HChaCha20 + OpenSSL ChaCha20-Poly1305 seal + open, 57 B',
      us(parts.encrypt) + us(parts.decrypt),
    ],
    [
      'for comparison: noble pure-JS XChaCha20-Poly1305 seal + open, 57 B',
      us(parts.nobleEncrypt) + us(parts.nobleDecrypt),
    ],
  ],
);
