import { deleteKeys, FaultProxy, REDIS_URL, redisReachable } from '@mrtr/test-services';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalStoreUnavailableError, RedisApprovalStore } from '../src/index.js';
import { approval, describeApprovalStoreContract } from './store-contract.js';

const reachable = await redisReachable();
const prefix = `mrtr:test:approval:${process.pid}:${Date.now().toString(36)}:`;
const clients = new Map<RedisApprovalStore, Redis>();
const failFast = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
} as const;

afterAll(async () => {
  if (reachable) await deleteKeys(prefix);
});

describeApprovalStoreContract('RedisApprovalStore (one client per instance)', {
  async open() {
    const client = new Redis(REDIS_URL, { ...failFast, lazyConnect: true });
    client.on('error', () => {});
    await client.connect();
    const store = new RedisApprovalStore(client, { keyPrefix: prefix });
    clients.set(store, client);
    return store;
  },
  close: (store) => clients.get(store)?.disconnect(),
  shared: true,
  sweeps: false,
  skip: !reachable,
});

describe.skipIf(!reachable)('RedisApprovalStore keys', () => {
  it("gives an approval key the approval's expiry as its TTL", async () => {
    const client = new Redis(REDIS_URL, { ...failFast, lazyConnect: true });
    client.on('error', () => {});
    await client.connect();
    try {
      const store = new RedisApprovalStore(client, { keyPrefix: prefix });
      const a = approval({ expiresAt: Date.now() + 120_000 });
      await store.open(a);
      expect(Number(await client.call('PEXPIRETIME', `${prefix}a:${a.id}`))).toBe(a.expiresAt);
      await store.decide({ id: a.id, principal: 'alice', outcome: 'approved', via: 'url' });
      expect(Number(await client.call('PEXPIRETIME', `${prefix}a:${a.id}`))).toBe(a.expiresAt);
    } finally {
      client.disconnect();
    }
  });
});

describe('RedisApprovalStore when Redis cannot be reached', () => {
  it('fails closed with ApprovalStoreUnavailableError and never hangs', async () => {
    // Port 1 on loopback: nothing listens; the fail-fast client rejects at once.
    const client = new Redis('redis://127.0.0.1:1', {
      ...failFast,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    const store = new RedisApprovalStore(client, { timeoutMs: 500 });
    await expect(store.open(approval())).rejects.toBeInstanceOf(ApprovalStoreUnavailableError);
    await expect(
      store.decide({ id: approval().id, principal: 'alice', outcome: 'denied' }),
    ).rejects.toBeInstanceOf(ApprovalStoreUnavailableError);
    client.disconnect();
  });

  it('times out a Redis that never answers', async () => {
    const store = new RedisApprovalStore({ call: () => new Promise(() => {}) }, { timeoutMs: 50 });
    await expect(store.get(approval().id)).rejects.toThrow(/no reply within 50 ms/);
  });

  it.skipIf(!reachable)(
    'drops a connection that stops answering while Redis answers, and serves again on a new one',
    async () => {
      const proxy = new FaultProxy(REDIS_URL);
      await proxy.start();
      const client = new Redis(proxy.url(REDIS_URL), { ...failFast, lazyConnect: true });
      client.on('error', () => {});
      await client.connect();
      try {
        const store = new RedisApprovalStore(client, { keyPrefix: prefix, timeoutMs: 300 });
        proxy.wedge(); // this connection hangs; a new one would pass
        await expect(store.get(approval().id)).rejects.toBeInstanceOf(
          ApprovalStoreUnavailableError,
        );
        const a = approval();
        let opened = false;
        for (let i = 0; i < 60 && !opened; i++) {
          opened = await store.open(a).then(
            () => true,
            () => false,
          );
          if (!opened) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(opened).toBe(true);
        expect((await store.get(a.id))?.approval.id).toBe(a.id);
      } finally {
        proxy.resume();
        client.disconnect();
        await proxy.stop();
      }
    },
  );

  it.skipIf(!reachable)(
    'drops a reconnect whose handshake gets no reply, and serves again on the next one',
    async () => {
      const proxy = new FaultProxy(REDIS_URL);
      await proxy.start();
      const client = new Redis(proxy.url(REDIS_URL), { ...failFast, lazyConnect: true });
      client.on('error', () => {});
      await client.connect();
      try {
        const store = new RedisApprovalStore(client, { keyPrefix: prefix, timeoutMs: 300 });
        proxy.stall(); // this connection hangs, and so does the handshake of the next one
        await expect(store.get(approval().id)).rejects.toBeInstanceOf(
          ApprovalStoreUnavailableError,
        );
        await new Promise((resolve) => setTimeout(resolve, 400));
        expect(client.status).not.toBe('ready');
        proxy.admit(); // new connections pass; the held handshake stays held
        const a = approval();
        let opened = false;
        for (let i = 0; i < 100 && !opened; i++) {
          opened = await store.open(a).then(
            () => true,
            () => false,
          );
          if (!opened) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(opened).toBe(true);
        expect((await store.get(a.id))?.approval.id).toBe(a.id);
      } finally {
        proxy.resume();
        client.disconnect();
        await proxy.stop();
      }
    },
  );

  it('guards a client once, however many stores share it, and not for a store it refused', () => {
    const client = new Redis(REDIS_URL, { ...failFast, lazyConnect: true });
    const before = client.listenerCount('connect');
    expect(() => new RedisApprovalStore(client, { timeoutMs: 0 })).toThrow(RangeError);
    expect(client.listenerCount('connect')).toBe(before);
    for (let i = 0; i < 12; i++) new RedisApprovalStore(client, { keyPrefix: `${prefix}${i}:` });
    expect(client.listenerCount('connect')).toBe(before + 1);
    expect(client.listenerCount('ready')).toBeLessThanOrEqual(client.getMaxListeners());
    client.disconnect();
  });

  it('refuses a timeoutMs Node cannot wait (past 2^31 − 1 ms a timer fires at once)', () => {
    const never = { call: () => new Promise(() => {}) };
    for (const timeoutMs of [0, Number.NaN, 2 ** 31, Infinity])
      expect(() => new RedisApprovalStore(never, { timeoutMs })).toThrow(RangeError);
    expect(() => new RedisApprovalStore(never, { timeoutMs: 2 ** 31 - 1 })).not.toThrow();
  });
});
