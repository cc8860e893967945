/**
 * A replay record that the front store forgets never runs a confirmed
 * deletion twice: the service deleter on a Redis of its own that keeps
 * nothing on disk; Redis restarts empty after a deletion, the same service is
 * created again with the same body, and the identical retry of the completed
 * confirmation comes back. The PostgreSQL ledger, whose claim committed with
 * the deletion, still holds the record: the retry gets the recorded result
 * and the new service stays.
 */
import { RedisReplayStore } from '@mrtr/replay-redis';
import { callTool } from '@mrtr/spec-schema';
import { PrivateRedis, redisServerAvailable } from '@mrtr/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { getService } from '../src/services.js';

const available = await redisServerAvailable();
const TOKEN = 'tok-ops-0123456789';

describe.skipIf(!available)('a lost replay record (Redis restarted empty)', () => {
  let redis: PrivateRedis;
  let store: RedisReplayStore;
  let db: Database;
  let server: RunningServer;

  beforeAll(async () => {
    redis = await PrivateRedis.start({});
    // This Redis keeps nothing on disk: the test opts in by name to show what the ledger covers.
    store = await RedisReplayStore.connect(redis.url, {
      durability: 'volatile',
      keyPrefix: 'lost:',
    });
    db = await openDatabase('memory://');
    server = await startServiceDeleter({
      db,
      tokens: new Map([[TOKEN, 'ops']]),
      secret: randomSecret(),
      store,
      approvalPage: false,
    });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
    await db?.close();
    await redis?.dispose();
  });

  const body = {
    id: 'svc_lost1',
    name: 'lost-svc',
    environment: 'staging',
    instances: 2,
    dnsRecords: ['lost.example.com'],
    volumes: [],
  };
  const create = async () => {
    const r = await callTool(server.url, TOKEN, 'create_service', body);
    expect(r.body.result.isError).toBe(false);
  };

  it('the identical retry after Redis lost the record gets the recorded result; nothing is deleted twice', async () => {
    await create();
    const args = { serviceId: body.id, name: body.name };
    const asked = await callTool(server.url, TOKEN, 'delete_service', args);
    const requestState = asked.body.result.requestState as string;
    const confirm = () =>
      callTool(server.url, TOKEN, 'delete_service', args, {
        requestState,
        inputResponses: {
          confirm_delete: { action: 'accept', content: { serviceName: body.name } },
        },
      });
    const done = await confirm();
    expect(done.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(await getService(db, body.id)).toBeUndefined();

    await redis.restart({ empty: true });
    for (let i = 0; i < 200 && store.client.status !== 'ready'; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await store.client.call('DBSIZE')).toBe(0);
    await create(); // the same service, the same body: the live record looks as it did when asked

    const again = await confirm();
    expect(again.body.result).toEqual(done.body.result);
    expect(await getService(db, body.id)).toBeDefined();
    // Another answer on that ticket is refused by the ledger, not performed.
    const other = await callTool(server.url, TOKEN, 'delete_service', args, {
      requestState,
      inputResponses: {
        confirm_delete: {
          action: 'accept',
          content: { serviceName: body.name, deleteVolumes: true },
        },
      },
    });
    expect(other.body.result.isError).toBe(true);
    expect(await getService(db, body.id)).toBeDefined();
  });
});
