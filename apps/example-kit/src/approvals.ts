import {
  type ApprovalPage,
  createApprovalChannel,
  createApprovalPage,
  migrateApprovalTables,
  PostgresApprovalStore,
} from '@mrtr/approval-page';
import type { ApprovalChannel } from '@mrtr/gate';
import { tokenAsPagePassword } from './auth.js';
import { atStartUp, type Database } from './db.js';

/** Where the example servers serve their approval page. */
export const APPROVAL_BASE_PATH = '/approve';

/** The approval page of an example server, its channel for the gate, and the sweep of its store. */
export interface ExampleApprovals {
  channel: ApprovalChannel;
  page: ApprovalPage;
  /** Delete expired approvals and sessions; @returns how many rows went. */
  sweep(): Promise<number>;
}

/** Options of {@link exampleApprovals}. */
export interface ExampleApprovalsOptions {
  /**
   * Principal → password of the page's sign-in (`signIn.users`), e.g.
   * `pageUsers` of `readServerEnv` (`MRTR_PAGE_USERS`): passwords the MCP
   * clients do not hold. Unset: each principal's bearer token of `tokens`,
   * so whoever holds a client's token can approve on the page (a
   * demonstration only).
   */
  pageUsers?: ReadonlyMap<string, string>;
}

/**
 * The URL-mode approval page of an example server, on `db` (tables
 * `mrtr_approvals` and `mrtr_approval_sessions`, created if missing, waiting
 * for a database that stalls or drops the connection meanwhile: `atStartUp`),
 * so every instance on the same database serves the page and reads decisions.
 * People sign in with their principal id and their page password
 * (`options.pageUsers`), the examples' stand-in for the server's own
 * sign-in; without `pageUsers`, with the bearer token the server knows them
 * by (`tokens`: token → principal), which proves nothing the client could
 * not do.
 * @param origin the public origin people open (`http://127.0.0.1:3001`), the page's URLs and CSRF checks use it.
 * @throws {TypeError} when a password of `pageUsers` is a bearer token of `tokens`.
 */
export async function exampleApprovals(
  db: Database,
  origin: string,
  tokens: ReadonlyMap<string, string>,
  serviceName: string,
  options: ExampleApprovalsOptions = {},
): Promise<ExampleApprovals> {
  const users =
    options.pageUsers ?? new Map([...tokens].map(([token, principal]) => [principal, token]));
  const reused = options.pageUsers ? tokenAsPagePassword(options.pageUsers, tokens) : undefined;
  if (reused !== undefined)
    throw new TypeError(
      `the page password of "${reused}" is a bearer token: whoever holds it could approve on the page`,
    );
  await atStartUp(db, 'migrating the approval tables', () => migrateApprovalTables(db));
  const store = new PostgresApprovalStore(db);
  const location = { origin, basePath: APPROVAL_BASE_PATH };
  return {
    channel: createApprovalChannel({ store, ...location }),
    page: createApprovalPage({
      store,
      ...location,
      // The tokens as passwords are the tokens' strength, whatever their length (and prove no person).
      signIn: options.pageUsers ? { users } : { users, minPasswordLength: 1 },
      serviceName,
    }),
    sweep: () => store.sweep(),
  };
}
