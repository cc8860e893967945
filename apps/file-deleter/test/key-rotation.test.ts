/**
 * Rotating the ticket key of the example servers (`MRTR_SECRET_KID`,
 * `MRTR_OPEN_SECRET`, `MRTR_OPEN_SECRET_KID` through `ticketKeys` of the
 * example kit): a ticket sealed before the switch opens after it, under the
 * key kept for opening; an instance without that key refuses it.
 */
import { readServerEnv, ticketKeys } from '@mrtr/example-kit';
import { TicketSealer } from '@mrtr/ticket';
import { describe, expect, it } from 'vitest';

const OLD = 'o'.repeat(32);
const NEW = 'n'.repeat(32);
const binding = {
  sub: 'alice',
  op: 'tools/call:delete_file',
  argsDigest: `sha256:${'a'.repeat(43)}`,
};
const sealerFor = (env: Record<string, string>) => {
  const read = readServerEnv({ MRTR_TOKENS: 'tok-alice-0123456789abcdef:alice', ...env }, 3002);
  return new TicketSealer({ keys: ticketKeys(read) });
};

describe('rotating the ticket key', () => {
  it('a ticket of the old key opens where it is kept for opening, and nowhere else', async () => {
    const before = sealerFor({ MRTR_SECRET: OLD });
    const { ticket } = await before.seal({ ...binding, inputKey: 'confirm', phase: 'confirm' });
    // Phase 1: every instance opens the new key before any seals with it.
    const phase1 = sealerFor({
      MRTR_SECRET: OLD,
      MRTR_OPEN_SECRET: NEW,
      MRTR_OPEN_SECRET_KID: 'k2',
    });
    expect((await phase1.open(ticket, binding)).ok).toBe(true);
    // Phase 2: the new key seals; the old one still opens what it sealed.
    const phase2 = sealerFor({ MRTR_SECRET: NEW, MRTR_SECRET_KID: 'k2', MRTR_OPEN_SECRET: OLD });
    expect(await phase2.open(ticket, binding)).toMatchObject({ ok: true, kid: 'k1' });
    const { ticket: fresh } = await phase2.seal({
      ...binding,
      inputKey: 'confirm',
      phase: 'confirm',
    });
    expect(await phase1.open(fresh, binding)).toMatchObject({ ok: true, kid: 'k2' });
    // Then the old key goes: its tickets are refused, fail closed.
    const after = sealerFor({ MRTR_SECRET: NEW, MRTR_SECRET_KID: 'k2' });
    expect((await after.open(ticket, binding)).ok).toBe(false);
  });

  it('refuses settings that would make two keys one', () => {
    const env = { MRTR_TOKENS: 'tok-alice-0123456789abcdef:alice' };
    expect(() => readServerEnv({ ...env, MRTR_SECRET: NEW, MRTR_OPEN_SECRET: OLD }, 3002)).toThrow(
      /MRTR_OPEN_SECRET_KID \(k1\) must differ from MRTR_SECRET_KID \(k1\)/,
    );
    expect(() => readServerEnv({ ...env, MRTR_OPEN_SECRET: OLD }, 3002)).toThrow(
      /without MRTR_SECRET/,
    );
    expect(() =>
      readServerEnv({ ...env, MRTR_SECRET: NEW, MRTR_OPEN_SECRET_KID: 'k0' }, 3002),
    ).toThrow(/MRTR_OPEN_SECRET_KID is set without MRTR_OPEN_SECRET/);
  });
});
