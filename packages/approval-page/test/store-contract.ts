/**
 * The contract every ApprovalStore keeps, run on each implementation:
 * one decision, first wins, only by the principal, only before expiry,
 * `presence` only by passkey; bad input refused without a change; sessions.
 */
import { randomBytes } from 'node:crypto';
import type { PendingApproval } from '@mrtr/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { approvalChallenge } from '../src/challenge.js';
import type { ApprovalStore, PasskeyCredential } from '../src/index.js';

export interface StoreContractOptions<S extends ApprovalStore> {
  open(): S | Promise<S>;
  close?(store: S): void | Promise<void>;
  /** Instances from `open` share one backend (PostgreSQL, Redis); memory does not. */
  shared: boolean;
  /** `sweep()` deletes expired entries itself (not Redis, which expires them). */
  sweeps: boolean;
  skip?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const newId = () => randomBytes(16).toString('base64url');
export const sessionKey = () => randomBytes(32).toString('base64url');

export const newRandom = () => randomBytes(32).toString('base64url');

export function credential(overrides: Partial<PasskeyCredential> = {}): PasskeyCredential {
  return {
    id: randomBytes(16).toString('base64url'),
    principal: 'alice',
    publicKey: randomBytes(77).toString('base64url'),
    counter: 0,
    transports: ['internal'],
    createdAt: Date.now(),
    ...overrides,
  };
}

export function approval(overrides: Partial<PendingApproval> = {}): PendingApproval {
  return {
    id: newId(),
    nonce: randomBytes(16).toString('base64url'),
    principal: 'alice',
    operation: 'tools/call:delete_volume',
    argumentsDigest: 'sha256:args',
    questionDigest: 'sha256:question',
    message: 'Delete volume vol-1 (120 GiB) of service api-prod.',
    level: 'url',
    expiresAt: Date.now() + 300_000,
    ...overrides,
  };
}

export function describeApprovalStoreContract<S extends ApprovalStore>(
  name: string,
  options: StoreContractOptions<S>,
) {
  describe.skipIf(options.skip)(`ApprovalStore contract: ${name}`, () => {
    const opened: S[] = [];
    const store = async () => {
      const s = await options.open();
      opened.push(s);
      return s;
    };
    afterAll(async () => {
      for (const s of opened) await options.close?.(s);
    });

    it('keeps an opened approval exactly, pending, and a retried open changes nothing', async () => {
      const s = await store();
      const a = approval({
        message: 'a <script>x</script>\0 NUL, a lone \ud800 and 😀 line\nbreak',
      });
      await s.open(a);
      await s.open({ ...a });
      expect(await s.get(a.id)).toEqual({ approval: a, decision: undefined });
    });

    it('refuses to reopen an id with another approval, and keeps the first', async () => {
      const s = await store();
      const a = approval();
      await s.open(a);
      await expect(s.open({ ...a, principal: 'mallory' })).rejects.toThrow(TypeError);
      expect((await s.get(a.id))?.approval.principal).toBe('alice');
    });

    it.each([
      ['a short id', { id: 'short' }],
      ['an expiry in the past', { expiresAt: Date.now() - 1 }],
      ['a non-integer expiry', { expiresAt: Date.now() + 1000.5 }],
      ['level form', { level: 'form' as never }],
      ['NUL in the principal', { principal: 'ali\0ce' }],
      ['a lone surrogate in the nonce', { nonce: 'n\udc00' }],
      ['an empty digest', { argumentsDigest: '' }],
      ['a huge operation', { operation: 'x'.repeat(5000) }],
      ['a huge message', { message: 'x'.repeat(70_000) }],
    ])('refuses %s with a TypeError and records nothing', async (_, bad) => {
      const s = await store();
      const a = approval(bad);
      await expect(s.open(a)).rejects.toThrow(TypeError);
      if (/^[A-Za-z0-9_-]{22}$/.test(a.id)) expect(await s.get(a.id)).toBeUndefined();
    });

    it("records the principal's decision once: a second one changes nothing", async () => {
      const s = await store();
      const a = approval();
      await s.open(a);
      const first = await s.decide({
        id: a.id,
        principal: 'alice',
        outcome: 'approved',
        via: 'url',
      });
      expect(first).toMatchObject({
        status: 'recorded',
        decision: { status: 'approved', via: 'url' },
      });
      const second = await s.decide({ id: a.id, principal: 'alice', outcome: 'denied' });
      expect(second).toMatchObject({
        status: 'refused',
        reason: 'decided',
        decision: { status: 'approved' },
      });
      expect((await s.get(a.id))?.decision).toEqual(first.status === 'recorded' && first.decision);
    });

    it('records a denial', async () => {
      const s = await store();
      const a = approval();
      await s.open(a);
      const result = await s.decide({ id: a.id, principal: 'alice', outcome: 'denied' });
      expect(result).toMatchObject({ status: 'recorded', decision: { status: 'denied' } });
      expect((await s.get(a.id))?.decision?.status).toBe('denied');
    });

    it('records a withdrawal once, which no later decision overrides; over an approval, never over a denial', async () => {
      const s = await store();
      const a = approval();
      await s.open(a);
      const withdrawn = await s.decide({ id: a.id, principal: 'alice', outcome: 'withdrawn' });
      expect(withdrawn).toMatchObject({ status: 'recorded', decision: { status: 'withdrawn' } });
      const late = await s.decide({
        id: a.id,
        principal: 'alice',
        outcome: 'approved',
        via: 'url',
      });
      expect(late).toMatchObject({
        status: 'refused',
        reason: 'decided',
        decision: { status: 'withdrawn' },
      });
      expect((await s.get(a.id))?.decision?.status).toBe('withdrawn');
      // Approved on the page, then the client declined: the decline used the ticket up.
      const b = approval();
      await s.open(b);
      await s.decide({ id: b.id, principal: 'alice', outcome: 'approved', via: 'url' });
      expect(await s.decide({ id: b.id, principal: 'alice', outcome: 'withdrawn' })).toMatchObject({
        status: 'recorded',
        decision: { status: 'withdrawn' },
      });
      expect((await s.get(b.id))?.decision?.status).toBe('withdrawn');
      const c = approval();
      await s.open(c);
      await s.decide({ id: c.id, principal: 'alice', outcome: 'denied' });
      expect(await s.decide({ id: c.id, principal: 'alice', outcome: 'withdrawn' })).toMatchObject({
        status: 'refused',
        reason: 'decided',
        decision: { status: 'denied' },
      });
      expect((await s.get(c.id))?.decision?.status).toBe('denied');
    });

    it('refuses another principal and records nothing, telling it nothing', async () => {
      const s = await store();
      const a = approval();
      await s.open(a);
      const result = await s.decide({
        id: a.id,
        principal: 'bob',
        outcome: 'approved',
        via: 'url',
      });
      expect(result).toEqual({ status: 'refused', reason: 'principal' });
      expect((await s.get(a.id))?.decision).toBeUndefined();
    });

    it('refuses a presence approval without a passkey, but records a denial or a passkey approval', async () => {
      const s = await store();
      const a = approval({ level: 'presence' });
      await s.open(a);
      expect(
        await s.decide({ id: a.id, principal: 'alice', outcome: 'approved', via: 'url' }),
      ).toEqual({
        status: 'refused',
        reason: 'level',
      });
      expect((await s.get(a.id))?.decision).toBeUndefined();
      const b = approval({ level: 'presence' });
      await s.open(b);
      const set = await s.setChallenge({
        id: b.id,
        principal: 'alice',
        random: newRandom(),
        content: {},
        expiresAt: Date.now() + 60_000,
      });
      if (set.status !== 'set') throw new Error(`challenge refused: ${set.reason}`);
      const passkey = await s.decide({
        id: b.id,
        principal: 'alice',
        outcome: 'approved',
        via: 'passkey',
        credentialId: 'cred-1',
        challenge: set.challenge.challenge,
      });
      expect(passkey).toMatchObject({
        status: 'recorded',
        decision: { via: 'passkey', credentialId: 'cred-1' },
      });
      expect(await s.decide({ id: a.id, principal: 'alice', outcome: 'denied' })).toMatchObject({
        status: 'recorded',
      });
    });

    it('keeps a passkey challenge that commits to the approval; a passkey decision uses it once', async () => {
      const s = await store();
      const a = approval({ level: 'presence' });
      await s.open(a);
      const random = newRandom();
      const expiresAt = Date.now() + 60_000;
      const set = await s.setChallenge({
        id: a.id,
        principal: 'alice',
        random,
        content: {},
        expiresAt,
      });
      const challenge = approvalChallenge({ ...a, content: {}, random });
      expect(set).toEqual({
        status: 'set',
        challenge: { random, challenge, content: {}, expiresAt },
      });
      expect((await s.get(a.id))?.challenge).toEqual({ random, challenge, content: {}, expiresAt });
      const passkey = {
        id: a.id,
        principal: 'alice',
        outcome: 'approved' as const,
        via: 'passkey' as const,
        credentialId: 'cred-1',
      };
      const other = approvalChallenge({ ...a, content: {}, random: newRandom() });
      expect(await s.decide({ ...passkey, challenge: other })).toEqual({
        status: 'refused',
        reason: 'challenge',
      });
      expect((await s.get(a.id))?.decision).toBeUndefined();
      const recorded = await s.decide({ ...passkey, challenge });
      expect(recorded).toMatchObject({ status: 'recorded', decision: { via: 'passkey' } });
      const after = await s.get(a.id);
      expect(after?.challenge).toBeUndefined();
      expect(await s.decide({ ...passkey, challenge })).toMatchObject({
        status: 'refused',
        reason: 'decided',
      });
      expect(
        await s.setChallenge({ id: a.id, principal: 'alice', random, content: {}, expiresAt }),
      ).toEqual({
        status: 'refused',
        reason: 'decided',
      });
    });

    it('a newer challenge replaces the older one, and an expired one is refused', async () => {
      const s = await store();
      const a = approval({ level: 'presence' });
      await s.open(a);
      const ask = (expiresAt: number) =>
        s.setChallenge({
          id: a.id,
          principal: 'alice',
          random: newRandom(),
          content: {},
          expiresAt,
        });
      const first = await ask(Date.now() + 60_000);
      const second = await ask(Date.now() + 300);
      if (first.status !== 'set' || second.status !== 'set') throw new Error('challenge refused');
      const passkey = {
        id: a.id,
        principal: 'alice',
        outcome: 'approved' as const,
        via: 'passkey' as const,
        credentialId: 'cred-1',
      };
      expect(await s.decide({ ...passkey, challenge: first.challenge.challenge })).toEqual({
        status: 'refused',
        reason: 'challenge',
      });
      await sleep(450);
      expect(await s.decide({ ...passkey, challenge: second.challenge.challenge })).toEqual({
        status: 'refused',
        reason: 'challenge',
      });
      expect((await s.get(a.id))?.decision).toBeUndefined();
    });

    it("caps a challenge at the approval's expiry and refuses one for another principal, answers that do not fit, or bad input", async () => {
      const s = await store();
      const requestedSchema = {
        type: 'object' as const,
        properties: { note_id: { type: 'string' as const, enum: ['note-1', 'note-2'] } },
        required: ['note_id'],
      };
      const a = approval({ level: 'presence', requestedSchema, expiresAt: Date.now() + 60_000 });
      await s.open(a);
      const base = {
        id: a.id,
        principal: 'alice',
        random: newRandom(),
        content: {},
        expiresAt: Date.now() + 3_600_000,
      };
      expect(await s.setChallenge({ ...base, principal: 'bob' })).toEqual({
        status: 'refused',
        reason: 'principal',
      });
      expect(await s.setChallenge(base)).toEqual({ status: 'refused', reason: 'content' });
      expect(await s.setChallenge({ ...base, content: { note_id: 'note-3' } })).toEqual({
        status: 'refused',
        reason: 'content',
      });
      expect(await s.setChallenge({ ...base, id: newId() })).toEqual({
        status: 'refused',
        reason: 'unknown',
      });
      for (const bad of [
        { random: 'short' },
        { id: 'x' },
        { principal: '\0' },
        { content: [] },
        { expiresAt: 1.5 },
      ])
        await expect(s.setChallenge({ ...base, ...bad } as never)).rejects.toThrow(TypeError);
      expect((await s.get(a.id))?.challenge).toBeUndefined();
      const set = await s.setChallenge({ ...base, content: { note_id: 'note-2' } });
      expect(set).toMatchObject({
        status: 'set',
        challenge: { expiresAt: a.expiresAt, content: { note_id: 'note-2' } },
      });
      if (set.status !== 'set') return;
      const passkey = {
        id: a.id,
        principal: 'alice',
        outcome: 'approved' as const,
        via: 'passkey' as const,
        credentialId: 'cred-1',
        challenge: set.challenge.challenge,
      };
      await expect(s.decide({ ...passkey, content: { note_id: 'note-1' } })).rejects.toThrow(
        TypeError,
      );
      await expect(s.decide({ ...passkey, challenge: undefined })).rejects.toThrow(TypeError);
      expect(await s.decide(passkey)).toMatchObject({
        status: 'recorded',
        decision: { via: 'passkey', content: { note_id: 'note-2' } },
      });
    });

    it('records exactly one of many concurrent passkey decisions with one challenge', async () => {
      const instances = options.shared ? [await store(), await store()] : [await store()];
      const a = approval({ level: 'presence' });
      const first = instances[0] as S;
      await first.open(a);
      const set = await first.setChallenge({
        id: a.id,
        principal: 'alice',
        random: newRandom(),
        content: {},
        expiresAt: Date.now() + 60_000,
      });
      if (set.status !== 'set') throw new Error('challenge refused');
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (instances[i % instances.length] as S).decide({
            id: a.id,
            principal: 'alice',
            outcome: 'approved',
            via: 'passkey',
            credentialId: 'cred-1',
            challenge: set.challenge.challenge,
          }),
        ),
      );
      expect(results.filter((r) => r.status === 'recorded')).toHaveLength(1);
    });

    it('keeps credentials bound to their principal, unique by id, shared by every instance', async () => {
      const [one, two] = options.shared
        ? [await store(), await store()]
        : [await store(), undefined];
      const other = two ?? one;
      const principal = `alice-${newId()}`;
      const older = credential({
        principal,
        createdAt: Date.now() - 1000,
        transports: ['usb', 'nfc'],
      });
      const newer = credential({ principal, counter: 7, transports: [] });
      expect(await one.addCredential(newer)).toBe(true);
      expect(await one.addCredential(older)).toBe(true);
      expect(await other.getCredential(older.id)).toEqual(older);
      expect(await other.listCredentials(principal)).toEqual([older, newer]);
      expect(await one.addCredential({ ...older, principal: 'mallory', publicKey: 'AAAA' })).toBe(
        false,
      );
      expect(await other.getCredential(older.id)).toEqual(older);
      expect(await other.listCredentials('mallory')).toEqual([]);
      expect(await one.getCredential(newId())).toBeUndefined();
      for (const bad of [
        { id: 'not base64url!' },
        { principal: 'a\0' },
        { publicKey: 'x'.repeat(5000) },
        { counter: -1 },
        { counter: 2 ** 32 },
        { transports: ['carrier-pigeon'] },
        { createdAt: Number.NaN },
      ]) {
        const c = credential({ principal, ...(bad as Partial<PasskeyCredential>) });
        await expect(one.addCredential(c)).rejects.toThrow(TypeError);
      }
      expect(await other.listCredentials(principal)).toHaveLength(2);
      await expect(one.getCredential('')).rejects.toThrow(TypeError);
      await expect(one.listCredentials('\0')).rejects.toThrow(TypeError);
    });

    it('moves a signature counter only from the value read (compare-and-set)', async () => {
      const [one, two] = options.shared
        ? [await store(), await store()]
        : [await store(), undefined];
      const c = credential({ counter: 5 });
      await one.addCredential(c);
      const tries = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          ((i % 2 ? two : undefined) ?? one).updateCredentialCounter(c.id, 5, 6),
        ),
      );
      expect(tries.filter(Boolean)).toHaveLength(1);
      expect((await one.getCredential(c.id))?.counter).toBe(6);
      expect(await one.updateCredentialCounter(c.id, 5, 9)).toBe(false);
      expect(await one.updateCredentialCounter(newId(), 0, 1)).toBe(false);
      await expect(one.updateCredentialCounter(c.id, 6, -1)).rejects.toThrow(TypeError);
      expect((await one.getCredential(c.id))?.counter).toBe(6);
    });

    it('deletes a credential only for its own principal', async () => {
      const s = await store();
      const c = credential({ principal: `bob-${newId()}` });
      await s.addCredential(c);
      expect(await s.deleteCredential(c.id, 'mallory')).toBe(false);
      expect(await s.getCredential(c.id)).toEqual(c);
      expect(await s.deleteCredential(c.id, c.principal)).toBe(true);
      expect(await s.getCredential(c.id)).toBeUndefined();
      expect(await s.listCredentials(c.principal)).toEqual([]);
      expect(await s.deleteCredential(c.id, c.principal)).toBe(false);
      expect(await s.addCredential(c)).toBe(true);
    });

    it('hands out a registration challenge once, replaced by a newer one, never after it expires', async () => {
      const [one, two] = options.shared
        ? [await store(), await store()]
        : [await store(), undefined];
      const other = two ?? one;
      const key = sessionKey();
      const challenge = {
        challenge: newRandom(),
        principal: 'alice',
        expiresAt: Date.now() + 60_000,
      };
      await one.putRegistrationChallenge(key, { ...challenge, challenge: newRandom() });
      await one.putRegistrationChallenge(key, challenge);
      const taken = await Promise.all([
        other.takeRegistrationChallenge(key),
        one.takeRegistrationChallenge(key),
      ]);
      expect(taken.filter(Boolean)).toEqual([challenge]);
      expect(await one.takeRegistrationChallenge(key)).toBeUndefined();
      const short = sessionKey();
      await one.putRegistrationChallenge(short, { ...challenge, expiresAt: Date.now() + 300 });
      await sleep(450);
      expect(await one.takeRegistrationChallenge(short)).toBeUndefined();
      await expect(one.putRegistrationChallenge('short', challenge)).rejects.toThrow(TypeError);
      await expect(
        one.putRegistrationChallenge(key, { ...challenge, challenge: 'x' }),
      ).rejects.toThrow(TypeError);
      await expect(one.takeRegistrationChallenge('x')).rejects.toThrow(TypeError);
      if (options.sweeps) {
        const stale = sessionKey();
        await one.putRegistrationChallenge(stale, { ...challenge, expiresAt: Date.now() + 300 });
        await sleep(450);
        expect(await one.sweep()).toBeGreaterThanOrEqual(1);
      }
    });

    it('keeps a requestedSchema, and records an approval only with content that fits it', async () => {
      const s = await store();
      const requestedSchema = {
        type: 'object' as const,
        properties: {
          note_id: { type: 'string' as const, title: 'Note', enum: ['note-1', 'note-2'] },
          keep_backup: { type: 'boolean' as const },
        },
        required: ['note_id'],
      };
      const a = approval({ requestedSchema });
      await s.open(a);
      expect((await s.get(a.id))?.approval).toEqual(a);
      const approve = {
        id: a.id,
        principal: 'alice',
        outcome: 'approved' as const,
        via: 'url' as const,
      };
      const contents: (Record<string, string> | undefined)[] = [
        undefined,
        { note_id: 'note-3' },
        { note_id: 'note-1', extra: 'x' },
      ];
      for (const content of contents)
        expect(await s.decide({ ...approve, ...(content ? { content } : {}) })).toEqual({
          status: 'refused',
          reason: 'content',
        });
      expect((await s.get(a.id))?.decision).toBeUndefined();
      const ok = await s.decide({ ...approve, content: { note_id: 'note-2', keep_backup: false } });
      expect(ok).toMatchObject({
        status: 'recorded',
        decision: { content: { note_id: 'note-2', keep_backup: false } },
      });
      expect((await s.get(a.id))?.decision).toMatchObject({ content: { note_id: 'note-2' } });
      const plain = approval();
      await s.open(plain);
      const extra = await s.decide({ ...approve, id: plain.id, content: { anything: 'x' } });
      expect(extra).toEqual({ status: 'refused', reason: 'content' });
      await expect(
        s.open(
          approval({
            requestedSchema: { type: 'object', properties: { x: { type: 'object' } } } as never,
          }),
        ),
      ).rejects.toThrow(TypeError);
      await expect(
        s.decide({ ...approve, content: { note_id: Number.NaN } as never }),
      ).rejects.toThrow(TypeError);
      await expect(s.decide({ ...approve, content: [] as never })).rejects.toThrow(TypeError);
    });

    it('refuses an unknown id and malformed requests', async () => {
      const s = await store();
      expect(await s.decide({ id: newId(), principal: 'alice', outcome: 'denied' })).toEqual({
        status: 'refused',
        reason: 'unknown',
      });
      const a = approval();
      await s.open(a);
      await expect(s.decide({ id: 'x', principal: 'alice', outcome: 'denied' })).rejects.toThrow(
        TypeError,
      );
      await expect(s.decide({ id: a.id, principal: 'alice', outcome: 'approved' })).rejects.toThrow(
        TypeError,
      );
      await expect(
        s.decide({ id: a.id, principal: 'alice', outcome: 'maybe' as never }),
      ).rejects.toThrow(TypeError);
      await expect(s.decide({ id: a.id, principal: '\0', outcome: 'denied' })).rejects.toThrow(
        TypeError,
      );
      expect((await s.get(a.id))?.decision).toBeUndefined();
    });

    it('refuses a decision after expiry, and sweeps expired approvals', async () => {
      const s = await store();
      const a = approval({ expiresAt: Date.now() + 300 });
      await s.open(a);
      await sleep(450);
      const result = await s.decide({
        id: a.id,
        principal: 'alice',
        outcome: 'approved',
        via: 'url',
      });
      expect(result.status).toBe('refused');
      expect(['expired', 'unknown']).toContain(result.status === 'refused' && result.reason);
      if (options.sweeps) expect(await s.sweep()).toBeGreaterThanOrEqual(1);
      expect(await s.get(a.id)).toBeUndefined();
    });

    it('records exactly one of many concurrent decisions, across instances', async () => {
      const instances = options.shared ? [await store(), await store()] : [await store()];
      const a = approval();
      await instances[0]?.open(a);
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          (instances[i % instances.length] as S).decide(
            i % 2 === 0
              ? { id: a.id, principal: 'alice', outcome: 'approved', via: 'url' }
              : { id: a.id, principal: 'alice', outcome: 'denied' },
          ),
        ),
      );
      const recorded = results.filter((r) => r.status === 'recorded');
      expect(recorded).toHaveLength(1);
      expect(results.filter((r) => r.status === 'refused' && r.reason === 'decided')).toHaveLength(
        23,
      );
      const winner = recorded[0]?.status === 'recorded' ? recorded[0].decision : undefined;
      for (const s of instances) expect((await s.get(a.id))?.decision).toEqual(winner);
    });

    it('keeps sessions until they end or are deleted', async () => {
      const [one, two] = options.shared
        ? [await store(), await store()]
        : [await store(), undefined];
      const other = two ?? one;
      const key = sessionKey();
      const session = {
        principal: 'alice',
        csrfSecret: sessionKey(),
        expiresAt: Date.now() + 60_000,
      };
      await one.createSession(key, session);
      expect(await other.readSession(key)).toEqual(session);
      await other.deleteSession(key);
      expect(await one.readSession(key)).toBeUndefined();
      const short = sessionKey();
      await one.createSession(short, { ...session, expiresAt: Date.now() + 300 });
      await sleep(450);
      expect(await one.readSession(short)).toBeUndefined();
      expect(await one.readSession(sessionKey())).toBeUndefined();
      await expect(one.readSession('not-a-digest')).rejects.toThrow(TypeError);
      await expect(one.createSession(key, { ...session, csrfSecret: 'short' })).rejects.toThrow(
        TypeError,
      );
    });
  });
}
