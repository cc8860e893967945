/**
 * The contract every ApprovalStore keeps, run on each implementation:
 * one decision, first wins, only by the principal, only before expiry,
 * `presence` only by passkey; bad input refused without a change; sessions.
 */
import { randomBytes } from 'node:crypto';
import type { PendingApproval } from '@mrtr/gate';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApprovalStore } from '../src/index.js';

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
      const passkey = await s.decide({
        id: b.id,
        principal: 'alice',
        outcome: 'approved',
        via: 'passkey',
        credentialId: 'cred-1',
      });
      expect(passkey).toMatchObject({
        status: 'recorded',
        decision: { via: 'passkey', credentialId: 'cred-1' },
      });
      expect(await s.decide({ id: a.id, principal: 'alice', outcome: 'denied' })).toMatchObject({
        status: 'recorded',
      });
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
