import { type Database, openDatabase as open } from '@mrtr/example-kit';

export type { Database, Queryable, QueryResult } from '@mrtr/example-kit';

/**
 * Open the services database: `DATABASE_URL` unset → PGlite under
 * `./.data/service-deleter`; `memory://` → in-memory PGlite; `postgres://…` → a server.
 */
export function openDatabase(
  url: string | undefined,
  options: { dataDir?: string; searchPath?: string; timeoutMs?: number } = {},
): Promise<Database> {
  return open(url, { dataDir: './.data/service-deleter', ...options });
}
