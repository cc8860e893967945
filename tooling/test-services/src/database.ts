import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_URL } from './index.js';

/** A database of one fault test's own on the shared PostgreSQL server. */
export interface OwnDatabase {
  /** Its name: `<prefix>_<random>`. */
  name: string;
  /** `POSTGRES_URL` with the database path replaced by this one. */
  url: string;
  /** Terminate what is still connected to it and drop it (idempotent). */
  drop(): Promise<void>;
}

const PREFIX = /^[a-z_][a-z0-9_]{0,40}$/;

/** Run `fn` on a short-lived client of the maintenance database `POSTGRES_URL` names. */
async function onServer<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  client.on('error', () => {}); // a dropped connection is reported by the query that needs it
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * `CREATE DATABASE <prefix>_<random hex>` on the shared server, for a fault
 * test that terminates backends or otherwise needs a database nobody else
 * uses. Drop it with `drop()` in `afterAll`.
 * @param prefix lower-case identifier, at most 40 characters.
 * @throws on a bad prefix; the server's error when it cannot create databases.
 */
export async function createOwnDatabase(prefix: string): Promise<OwnDatabase> {
  if (!PREFIX.test(prefix)) throw new Error(`invalid database prefix ${prefix}`);
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await onServer((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await onServer(async (c) => {
        // Only this database's backends: never anyone else's.
        await c.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        await c.query(`DROP DATABASE IF EXISTS "${name}"`);
      });
    },
  };
}

/** A loop that keeps terminating the backends connected to one database. */
export interface BackendTerminator {
  /** Backends terminated so far. */
  readonly terminated: number;
  /** Stop the loop; resolves with the total terminated once the last statement ended. */
  stop(): Promise<number>;
}

/**
 * Every `everyMs` milliseconds, `pg_terminate_backend` every backend of
 * database `database` except the terminator's own (error 57P01 on the
 * victims' connections), until `stop()`. Refuses the names of the databases
 * other people's tests share (`postgres`, `test`, templates, and the
 * database of `POSTGRES_URL`): use it on a database from {@link createOwnDatabase}.
 * @throws {Error} for a shared database's name.
 */
export async function terminateBackendsRepeatedly(
  database: string,
  options: { everyMs?: number } = {},
): Promise<BackendTerminator> {
  const shared = new Set(['postgres', 'test', 'template0', 'template1']);
  shared.add(decodeURIComponent(new URL(POSTGRES_URL).pathname.slice(1)));
  if (shared.has(database)) throw new Error(`refusing to terminate backends of ${database}`);
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  client.on('error', () => {});
  await client.connect();
  let terminated = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n
           FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [database],
      );
      terminated += rows[0]?.n ?? 0;
      await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
    }
  })();
  return {
    get terminated() {
      return terminated;
    },
    async stop() {
      running = false;
      try {
        await loop;
      } finally {
        await client.end().catch(() => {});
      }
      return terminated;
    },
  };
}
