import {
  type ApprovalPage,
  createApprovalChannel,
  createApprovalPage,
  migrateApprovalTables,
  PostgresApprovalStore,
} from '@mrtr/approval-page';
import type { ApprovalChannel } from '@mrtr/gate';
import type { Database } from './db.js';

/** Where the example servers serve their approval page. */
export const APPROVAL_BASE_PATH = '/approve';

/** The approval page of an example server, its channel for the gate, and the sweep of its store. */
export interface ExampleApprovals {
  channel: ApprovalChannel;
  page: ApprovalPage;
  /** Delete expired approvals and sessions; @returns how many rows went. */
  sweep(): Promise<number>;
}

/**
 * The URL-mode approval page of an example server, on `db` (tables
 * `mrtr_approvals` and `mrtr_approval_sessions`, created if missing), so
 * every instance on the same database serves the page and reads decisions.
 * People sign in with their principal id and the bearer token the server
 * knows them by (`tokens`: token → principal): the examples' stand-in for
 * the server's own sign-in.
 * @param origin the public origin people open (`http://127.0.0.1:3001`), the page's URLs and CSRF checks use it.
 */
export async function exampleApprovals(
  db: Database,
  origin: string,
  tokens: ReadonlyMap<string, string>,
  serviceName: string,
): Promise<ExampleApprovals> {
  await migrateApprovalTables(db);
  const store = new PostgresApprovalStore(db);
  const users = new Map([...tokens].map(([token, principal]) => [principal, token]));
  const location = { origin, basePath: APPROVAL_BASE_PATH };
  return {
    channel: createApprovalChannel({ store, ...location }),
    page: createApprovalPage({ store, ...location, signIn: { users }, serviceName }),
    sweep: () => store.sweep(),
  };
}
