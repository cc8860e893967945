import { describe, expect, it } from 'vitest';
import { createApprovalChannel, MemoryApprovalStore } from '../src/index.js';
import { approval, newId } from './store-contract.js';

describe('createApprovalChannel', () => {
  it('returns a URL on the origin that carries only the opaque id', async () => {
    const store = new MemoryApprovalStore();
    const channel = createApprovalChannel({
      store,
      origin: 'https://ops.example.com',
      basePath: '/mcp-approve',
    });
    const a = approval({ principal: 'alice@example.com' });
    const url = await channel.open(a);
    expect(url).toBe(`https://ops.example.com/mcp-approve/${a.id}`);
    expect(channel.url(a.id)).toBe(url);
    expect(url).not.toContain('alice');
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
  });

  it('reads a decision only for the exact binding; anything else is unknown', async () => {
    const store = new MemoryApprovalStore();
    const channel = createApprovalChannel({ store, origin: 'http://127.0.0.1:3000' });
    const a = approval();
    await channel.open(a);
    await store.decide({ id: a.id, principal: 'alice', outcome: 'approved', via: 'url' });
    expect(await channel.decision(a.id, a)).toMatchObject({ status: 'approved', via: 'url' });
    for (const field of [
      'nonce',
      'principal',
      'operation',
      'argumentsDigest',
      'questionDigest',
    ] as const)
      expect(await channel.decision(a.id, { ...a, [field]: `${a[field]}x` }), field).toEqual({
        status: 'unknown',
      });
    expect(await channel.decision(newId(), a)).toEqual({ status: 'unknown' });
    expect(await channel.decision('../../etc', a)).toEqual({ status: 'unknown' });
    expect(await channel.decision(a.id, null as never)).toEqual({ status: 'unknown' });
  });

  it('withdraws a pending or approved approval of the exact binding, which the gate then reads as denied', async () => {
    const store = new MemoryApprovalStore();
    const channel = createApprovalChannel({ store, origin: 'http://127.0.0.1:3000' });
    const a = approval();
    await channel.open(a);
    for (const field of ['nonce', 'principal', 'questionDigest'] as const)
      await channel.withdraw(a.id, { ...a, [field]: `${a[field]}x` });
    await channel.withdraw('../../etc', a);
    expect(await channel.decision(a.id, a)).toEqual({ status: 'pending' });
    await channel.withdraw(a.id, a);
    expect((await store.get(a.id))?.decision?.status).toBe('withdrawn');
    expect(await channel.decision(a.id, a)).toMatchObject({ status: 'denied' });
    const b = approval();
    await channel.open(b);
    await store.decide({ id: b.id, principal: 'alice', outcome: 'approved', via: 'url' });
    await channel.withdraw(b.id, { ...b, nonce: `${b.nonce}x` });
    expect(await channel.decision(b.id, b)).toMatchObject({ status: 'approved', via: 'url' });
    await channel.withdraw(b.id, b);
    expect(await channel.decision(b.id, b)).toMatchObject({ status: 'denied' });
    const c = approval();
    await channel.open(c);
    await store.decide({ id: c.id, principal: 'alice', outcome: 'denied' });
    await channel.withdraw(c.id, c);
    expect((await store.get(c.id))?.decision?.status).toBe('denied');
  });

  it('reads an expired approval as unknown', async () => {
    let now = Date.now();
    const store = new MemoryApprovalStore({ now: () => now });
    const channel = createApprovalChannel({
      store,
      origin: 'http://127.0.0.1:3000',
      now: () => now,
    });
    const a = approval({ expiresAt: now + 1000 });
    await channel.open(a);
    now += 1000;
    expect(await channel.decision(a.id, a)).toEqual({ status: 'unknown' });
  });

  it.each([
    ['an origin with a path', { origin: 'https://ops.example.com/x' }],
    ['a relative origin', { origin: '/approve' }],
    ['a non-http origin', { origin: 'javascript:alert(1)' }],
    [
      'a base path with a trailing slash',
      { origin: 'https://ops.example.com', basePath: '/approve/' },
    ],
    ['a base path with a query', { origin: 'https://ops.example.com', basePath: '/approve?x' }],
  ])('refuses %s at creation', (_, location) => {
    expect(() => createApprovalChannel({ store: new MemoryApprovalStore(), ...location })).toThrow(
      TypeError,
    );
  });

  it.each([
    ['http://LOCALHOST:3000', 'http://localhost:3000'],
    ['http://localhost:80', 'http://localhost'],
    ['https://ops.example.com:443', 'https://ops.example.com'],
  ])('refuses %s, naming how browsers write it (%s)', (origin, written) => {
    expect(() => createApprovalChannel({ store: new MemoryApprovalStore(), origin })).toThrow(
      `origin must be written as browsers send it, "${written}"`,
    );
  });
});
