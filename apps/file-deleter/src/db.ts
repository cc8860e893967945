import { type Database, openDatabase as open } from '@mrtr/example-kit';

export type { Database, Queryable, QueryResult } from '@mrtr/example-kit';

/**
 * Open the file deleter's database (replay ledger, deletions, audit):
 * `DATABASE_URL` unset → PGlite under `./.data/file-deleter`; `memory://` →
 * in-memory PGlite; `postgres://…` → a server.
 */
export function openDatabase(
  url: string | undefined,
  options: { dataDir?: string; searchPath?: string; timeoutMs?: number } = {},
): Promise<Database> {
  return open(url, { dataDir: './.data/file-deleter', ...options });
}
