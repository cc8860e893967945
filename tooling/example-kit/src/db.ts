import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pgliteDriver, pgPoolDriver } from '@mrtr/replay-postgres';
import pg from 'pg';

/** The rows of a query. */
export interface QueryResult<R> {
  rows: R[];
}

/** What the example servers need of PostgreSQL: queries. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

/**
 * A database handle: PGlite (embedded) or a `pg.Pool` behind one interface.
 * It is also the `SqlDriver` of `@mrtr/replay-postgres`, so the replay store
 * claims nonces inside the transactions that mutate the app's records.
 */
export interface Database extends Queryable {
  /** Run `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Human-readable description of where the data lives (no credentials). */
  readonly description: string;
}

function fromPglite(db: PGlite, description: string): Database {
  return { ...pgliteDriver(db), description, close: () => db.close() };
}

// Transactions destroy a client whose connection broke instead of pooling it again.
function fromPool(pool: pg.Pool, description: string): Database {
  return { ...pgPoolDriver(pool), description, close: () => pool.end() };
}

/**
 * Open the database named by `url`:
 * - `undefined` or `''`: embedded PGlite persisted under `options.dataDir` (required then);
 * - `memory://`: in-memory PGlite, gone when the process ends;
 * - `postgres://…` / `postgresql://…`: a PostgreSQL server through a `pg.Pool`.
 * @param options.searchPath a schema to use on a server (created if missing), for isolated tests.
 * @throws when the URL has another scheme, or PostgreSQL cannot be reached.
 */
export async function openDatabase(
  url: string | undefined,
  options: { dataDir?: string; searchPath?: string } = {},
): Promise<Database> {
  if (url === undefined || url === '') {
    const dir = options.dataDir;
    if (!dir) throw new Error('openDatabase: a dataDir is needed for embedded PGlite');
    mkdirSync(dir, { recursive: true });
    const db = new PGlite(dir);
    await db.waitReady;
    return fromPglite(db, `PGlite at ${dir}`);
  }
  if (url === 'memory://') {
    const db = new PGlite();
    await db.waitReady;
    return fromPglite(db, 'in-memory PGlite');
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Pipelining sends BEGIN with the replay claim and COMMIT with the recorded outcome.
    const config: pg.PoolConfig = { connectionString: url, max: 10, pipeline: true };
    if (options.searchPath) {
      if (!/^[a-z_][a-z0-9_]*$/.test(options.searchPath)) throw new Error('invalid schema name');
      const setup = new pg.Client({ connectionString: url });
      await setup.connect();
      await setup.query(`CREATE SCHEMA IF NOT EXISTS ${options.searchPath}`);
      await setup.end();
      config.options = `-c search_path=${options.searchPath}`;
    }
    const pool = new pg.Pool(config);
    // An idle client whose connection dies is dropped by the pool; without a listener the process would exit.
    pool.on('error', (error) => console.warn(`PostgreSQL idle client failed: ${error.message}`));
    await pool.query('SELECT 1');
    const where = new URL(url);
    return fromPool(pool, `PostgreSQL at ${where.host}${where.pathname}`);
  }
  throw new Error(
    `DATABASE_URL must be unset, memory:// or postgres://…; got scheme ${url.split(':')[0]}`,
  );
}
