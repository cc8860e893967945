/**
 * notes_delete on every replay store: two server instances (separate pools
 * or clients where the store has a backend) and 50 concurrent presentations
 * of one confirmation give exactly one deletion; a re-issue after completion
 * gets the recorded outcome and deletes nothing more.
 */
import { MemoryReplayStore, type ReplayStore } from '@mrtr/replay';
import { RedisReplayStore } from '@mrtr/replay-redis';
import {
  deleteKeys,
  dropSchema,
  POSTGRES_URL,
  postgresReachable,
  REDIS_URL,
  redisReachable,
} from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { ask, confirm, notesLeft, seedWorkspace } from './confirm.js';

const postgres = await postgresReachable();
const redis = await redisReachable();
const tag = `${process.pid}_${Date.now().toString(36)}`;
const schema = `notes_replay_${tag}`;
const redisPrefix = `mrtr:notes-test:${tag}:`;
const TOKEN = 'tok-alice';
const tokens = new Map([[TOKEN, 'alice']]);

/** Two instances of the notes server sharing one notes database and one replay backend. */
interface Pair {
  a: RunningServer;
  b: RunningServer;
  /** The notes database, for looking at what is left. */
  db: Database;
  close(): Promise<void>;
}

/** Where the two instances keep their notes: two pools on the server when it is reachable, else one PGlite. */
async function notesDatabases(): Promise<[Database, Database]> {
  if (!postgres) {
    const db = await openDatabase('memory://');
    return [db, db];
  }
  return [
    await openDatabase(POSTGRES_URL, { searchPath: schema }),
    await openDatabase(POSTGRES_URL, { searchPath: schema }),
  ];
}

async function pair(
  dbs: [Database, Database],
  stores: [ReplayStore<undefined> | undefined, ReplayStore<undefined> | undefined],
  extra: () => Promise<void> = async () => {},
): Promise<Pair> {
  const secret = randomSecret();
  const a = await startNotesServer({
    db: dbs[0],
    tokens,
    secret,
    ...(stores[0] ? { store: stores[0] } : {}),
  });
  const b = await startNotesServer({
    db: dbs[1],
    tokens,
    secret,
    ...(stores[1] ? { store: stores[1] } : {}),
  });
  return {
    a,
    b,
    db: dbs[0],
    async close() {
      await a.close();
      await b.close();
      await extra();
      for (const db of new Set(dbs)) await db.close();
    },
  };
}

const setups: {
  name: string;
  skip: boolean;
  /** Whether a presentation made while the first runs waits for it (PostgreSQL) instead of being refused as in progress. */
  waits: boolean;
  open(): Promise<Pair>;
}[] = [
  {
    name: 'MemoryReplayStore (one store object shared by both instances)',
    skip: false,
    waits: false,
    async open() {
      const db = await openDatabase('memory://');
      const store = new MemoryReplayStore();
      return pair([db, db], [store, store]);
    },
  },
  {
    name: 'the default PostgresReplayStore on PGlite',
    skip: false,
    waits: true,
    async open() {
      const db = await openDatabase('memory://');
      return pair([db, db], [undefined, undefined]);
    },
  },
  {
    name: 'the default PostgresReplayStore on PostgreSQL (two pools)',
    skip: !postgres,
    waits: true,
    open: async () => pair(await notesDatabases(), [undefined, undefined]),
  },
  {
    name: 'RedisReplayStore (two clients)',
    skip: !redis,
    waits: false,
    async open() {
      const stores = [
        await RedisReplayStore.connect(REDIS_URL, {
          keyPrefix: redisPrefix,
          durability: 'volatile',
        }),
        await RedisReplayStore.connect(REDIS_URL, {
          keyPrefix: redisPrefix,
          durability: 'volatile',
        }),
      ] as const;
      return pair(await notesDatabases(), [stores[0], stores[1]], async () => {
        for (const s of stores) await s.close();
      });
    },
  },
];

afterAll(async () => {
  if (postgres) await dropSchema(schema);
  if (redis) await deleteKeys(redisPrefix);
});

const IN_PROGRESS =
  'This confirmation is being carried out by another request, or by one that stopped before it finished; nothing more was done. Send it again for its result; if this answer stays, call the tool again for a new confirmation.';
const USED =
  'This confirmation was already used; this request changed nothing. Call the tool again for a new confirmation.';

for (const setup of setups) {
  describe.skipIf(setup.skip)(`notes_delete on ${setup.name}`, () => {
    let opened: Pair | undefined;
    afterAll(async () => {
      await opened?.close();
    });
    const servers = async () => {
      opened ??= await setup.open();
      return opened;
    };

    it('50 concurrent presentations of one confirmation on two instances delete exactly one note; a re-issue replays', async () => {
      const { a, b, db } = await servers();
      const { uri, ids } = await seedWorkspace(db, 'alice');
      const { requestState, candidates } = await ask(a.url, TOKEN, uri);
      expect([...candidates].sort()).toEqual([...ids].sort());
      const chosen = candidates[1] as string;

      const bodies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          confirm(i % 2 ? a.url : b.url, TOKEN, uri, requestState, chosen),
        ),
      );
      expect(await notesLeft(db, uri)).toEqual(ids.filter((id) => id !== chosen).sort());

      expect(bodies.filter((body) => body.error !== undefined)).toEqual([]);
      const deleted = bodies.filter(
        (body) => body.result.structuredContent?.deleted?.id === chosen,
      );
      const performed = deleted[0].result;
      expect(performed).toMatchObject({ resultType: 'complete', isError: false });
      // Every copy is the recorded outcome, or (stores that do not wait) told the first is still running.
      for (const body of bodies) {
        if (setup.waits || body.result.structuredContent) expect(body.result).toEqual(performed);
        else expect(body.result.content[0].text).toBe(IN_PROGRESS);
      }
      if (setup.waits) expect(deleted).toHaveLength(50);

      // After completion: the identical confirmation gets the recorded outcome on either instance.
      for (const url of [a.url, b.url]) {
        const again = await confirm(url, TOKEN, uri, requestState, chosen);
        expect(again.result).toEqual(performed);
      }
      expect(await notesLeft(db, uri)).toHaveLength(2);
    });

    it('50 concurrent presentations carrying different answers delete exactly one note; the other answers are refused', async () => {
      const { a, b, db } = await servers();
      const { uri, ids } = await seedWorkspace(db, 'alice');
      const { requestState, candidates } = await ask(b.url, TOKEN, uri);
      const bodies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          confirm(i % 2 ? a.url : b.url, TOKEN, uri, requestState, candidates[i % 3] as string),
        ),
      );
      const left = await notesLeft(db, uri);
      expect(left).toHaveLength(2);
      const gone = ids.find((id) => !left.includes(id)) as string;
      for (const body of bodies) {
        const deletedId = body.result.structuredContent?.deleted?.id;
        if (deletedId !== undefined) expect(deletedId).toBe(gone);
        else expect([USED, IN_PROGRESS]).toContain(body.result.content[0].text);
      }
      // Presenting a losing answer after completion is still refused and deletes nothing.
      const loser = candidates.find((id) => id !== gone) as string;
      expect((await confirm(a.url, TOKEN, uri, requestState, loser)).result.content[0].text).toBe(
        USED,
      );
      expect(await notesLeft(db, uri)).toEqual(left);
    });
  });
}
