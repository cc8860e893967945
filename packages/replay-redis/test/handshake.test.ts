/**
 * A Redis (or a proxy before it) that accepts a connection and never answers
 * its handshake: ioredis's `connectTimeout` ends once TCP connects, so without
 * a bound of the store's own the client would stay in status `connect` for
 * good, refusing every command, and `connect()` would never settle.
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { FaultProxy, REDIS_URL, redisReachable } from '@mrtr/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisReplayStore } from '../src/index.js';
import { eventually, onceRequest, sleep } from './support.js';

const reachable = await redisReachable();
const TIMEOUT_MS = 300;
const options = { timeoutMs: TIMEOUT_MS, durability: 'volatile' as const };

describe.skipIf(!reachable && process.env.CI !== 'true')(
  'RedisReplayStore and a handshake that gets no reply',
  () => {
    let proxy: FaultProxy;
    let store: RedisReplayStore | undefined;
    afterEach(async () => {
      proxy.resume();
      await store?.close();
      store = undefined;
      await proxy.stop();
    });

    it('connect() gives up instead of waiting for good', async () => {
      proxy = new FaultProxy(REDIS_URL);
      await proxy.start();
      proxy.stall();
      const started = Date.now();
      const error = await RedisReplayStore.connect(proxy.url(REDIS_URL), options).catch((e) => e);
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(10_000);
    });

    it('a reconnect whose handshake hangs is dropped and made again: claims work again', async () => {
      proxy = new FaultProxy(REDIS_URL);
      await proxy.start();
      store = await RedisReplayStore.connect(proxy.url(REDIS_URL), options);
      expect((await store.once(onceRequest(), async () => 1)).status).toBe('performed');
      // The connection hangs; the store drops it, and the reconnect's handshake hangs too.
      proxy.stall();
      await store.once(onceRequest(), async () => 2).catch(() => undefined);
      await sleep(TIMEOUT_MS);
      expect(store.client.status).not.toBe('ready');
      // Redis answers new connections again; the one whose handshake hangs stays held.
      proxy.admit();
      let runs = 0;
      expect(
        await eventually(async () => {
          const r = await store?.once(onceRequest(), async () => ++runs).catch(() => undefined);
          return r?.status === 'performed';
        }),
      ).toBe(true);
      expect(runs).toBe(1);
    });
  },
);

/**
 * A server that answers every command, and whose `INFO` says `loading:1` for
 * `loadMs`: a Redis loading its data, which ioredis's ready check waits for.
 */
async function loadingRedis(loadMs: number, answers = Number.POSITIVE_INFINITY) {
  const started = Date.now();
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    let buffered = '';
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      for (;;) {
        if (!buffered.startsWith('*')) return;
        const lines = buffered.split('\r\n');
        const count = Number(lines[0]?.slice(1));
        if (lines.length < 2 + 2 * count) return;
        const name = (lines[2] ?? '').toUpperCase();
        const used = lines.slice(0, 1 + 2 * count).join('\r\n').length + 2;
        buffered = buffered.slice(used);
        if (answers-- <= 0) continue; // from here on, silent: a handshake stalled after its first step
        if (name === 'HELLO') socket.write("-ERR unknown command 'HELLO'\r\n");
        else if (name === 'INFO') {
          const loading = Date.now() - started < loadMs ? 1 : 0;
          const body = `# Persistence\r\nloading:${loading}\r\nloading_eta_seconds:1\r\n# Server\r\nredis_version:7.2.0\r\n# Replication\r\nrole:master\r\n`;
          socket.write(`$${Buffer.byteLength(body)}\r\n${body}\r\n`);
        } else if (name === 'QUIT') socket.end('+OK\r\n');
        else socket.write('+OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('RedisReplayStore and a Redis still loading its data', () => {
  // Each reply of the fake server, which runs on this test's own event loop, must come within
  // timeoutMs: 300 ms was missed on a loaded host. Loading still lasts twice as long.
  const patient = { ...options, timeoutMs: 1500 };

  it('waits for it past timeoutMs on one connection: a server that answers is not dropped', async () => {
    const redis = await loadingRedis(2 * patient.timeoutMs);
    try {
      const store = await RedisReplayStore.connect(redis.url, patient);
      expect(redis.connections()).toBe(1);
      await store.close();
    } finally {
      await redis.close();
    }
  });

  it('gives up on a handshake that stalls after its first reply', async () => {
    const redis = await loadingRedis(0, 1);
    try {
      const started = Date.now();
      const error = await RedisReplayStore.connect(redis.url, options).catch((e) => e);
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await redis.close();
    }
  });
});
