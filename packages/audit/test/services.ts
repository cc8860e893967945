import pg from 'pg';

/** The PostgreSQL server tests use: `DATABASE_URL`, or the local standard port. */
export const POSTGRES_URL =
  process.env.DATABASE_URL && /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL)
    ? process.env.DATABASE_URL
    : 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether PostgreSQL answers. Under `CI=true` an unreachable server is an
 * error, never a skip: CI must not go green without the tests that need it.
 */
export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    if (process.env.CI === 'true') {
      throw new Error(
        `PostgreSQL at ${new URL(POSTGRES_URL).host} is unreachable under CI=true: ${String(error)}`,
      );
    }
    console.warn(`skipping PostgreSQL tests: ${new URL(POSTGRES_URL).host} is unreachable`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A pool on its own schema (created if missing), for isolated tests; `pipeline` turns on query pipelining. */
export async function poolInSchema(schema: string, max = 10, pipeline = false): Promise<pg.Pool> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error('invalid schema name');
  const setup = new pg.Client({ connectionString: POSTGRES_URL });
  await setup.connect();
  try {
    await setup.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } finally {
    await setup.end();
  }
  const pool = new pg.Pool({
    connectionString: POSTGRES_URL,
    max,
    pipeline,
    options: `-c search_path=${schema}`,
  });
  pool.on('error', () => {}); // idle clients killed by a fault test
  return pool;
}

/** Drop a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
