import type {
  ApprovalBinding,
  ApprovalChannel,
  ApprovalDecision,
  PendingApproval,
} from '@mrtr/gate';
import { APPROVAL_ID, matchesBinding } from './rules.js';
import type { ApprovalStore } from './store.js';

/** Where the approval page lives: the server's public origin and the page's base path. */
export interface PageLocation {
  /**
   * The public origin people reach the server at, e.g. `https://ops.example.com`
   * (scheme, host, optional port; no path). It is what approval URLs start
   * with and what a decision POST's `Origin` header must equal; `https:`
   * also makes the session cookie `Secure`.
   */
  origin: string;
  /** The page's base path (default `/approve`): one or more segments, no trailing slash. */
  basePath?: string;
}

const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

/**
 * Check and normalize a {@link PageLocation}.
 * @throws {TypeError} for an origin that is not `http(s)://host[:port]` or a malformed base path.
 */
export function pageLocation(location: PageLocation): {
  origin: string;
  basePath: string;
  secure: boolean;
} {
  let url: URL;
  try {
    url = new URL(location.origin);
  } catch {
    throw new TypeError(
      `origin must be an absolute http(s) URL, got ${JSON.stringify(location.origin)}`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new TypeError(
      `origin must be an http or https URL, got ${JSON.stringify(location.origin)}`,
    );
  if (url.origin !== location.origin.replace(/\/$/, ''))
    throw new TypeError(
      `origin must be written as browsers send it, ${JSON.stringify(url.origin)}: scheme://host[:port] only (no path or query), lower case, without the scheme's default port; got ${JSON.stringify(location.origin)}`,
    );
  const basePath = location.basePath ?? '/approve';
  if (!BASE_PATH.test(basePath))
    throw new TypeError(
      `basePath must look like /approve (no trailing slash), got ${JSON.stringify(basePath)}`,
    );
  return { origin: url.origin, basePath, secure: url.protocol === 'https:' };
}

/** Options of {@link createApprovalChannel}. */
export interface ApprovalChannelOptions extends PageLocation {
  /** Where approvals and decisions live (the replay store's database for more than one instance). */
  store: ApprovalStore;
  /** Clock, milliseconds since the epoch (default `Date.now`): an expired approval reads as `unknown`. */
  now?: () => number;
}

/**
 * The {@link ApprovalChannel} the gate mints URL-mode questions through
 * (MCP 2026-07-28 `client/elicitation`, URL mode): `open` records the
 * pending approval in `store` and returns `<origin><basePath>/<id>`, a URL
 * that carries only the opaque id, no personal data, and grants nothing by
 * itself (the page requires the principal to sign in). `decision` reads
 * what the principal decided on the page, only for exactly the binding the
 * approval was opened with; an expired, unknown or differently bound
 * approval reads as `unknown`. `withdraw` closes a pending approval after
 * the client declined, so the page shows it as declined and takes no
 * decision for it (read as `denied` afterwards).
 *
 * Serve the page with {@link createApprovalPage} on the same `store`,
 * `origin` and `basePath`; any instance may open, serve or read.
 * @throws {TypeError} at creation for a malformed origin or base path.
 * @example
 * ```ts
 * import { createApprovalChannel, PostgresApprovalStore } from '@mrtr/approval-page';
 * import type { PendingApproval } from '@mrtr/gate';
 * import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
 * import pg from 'pg';
 *
 * declare const approval: PendingApproval; // what the gate asks the channel to open
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, ...pgPoolTimeouts() });
 * const store = new PostgresApprovalStore(pgPoolDriver(pool));
 * const channel = createApprovalChannel({ store, origin: 'https://ops.example.com', basePath: '/approve' });
 * const url = await channel.open(approval); // https://ops.example.com/approve/<id>
 * ```
 */
export function createApprovalChannel(
  options: ApprovalChannelOptions,
): ApprovalChannel & Required<Pick<ApprovalChannel, 'withdraw'>> {
  const { origin, basePath } = pageLocation(options);
  const { store } = options;
  const now = options.now ?? Date.now;
  return {
    /** See {@link ApprovalChannel.open}. @throws {TypeError} for a malformed approval, or the store's error. */
    async open(approval: PendingApproval): Promise<string> {
      await store.open(approval);
      return this.url(approval.id);
    },
    /** See {@link ApprovalChannel.url}: `<origin><basePath>/<id>`. */
    url(id: string): string {
      return `${origin}${basePath}/${id}`;
    },
    /** See {@link ApprovalChannel.decision}. @throws the store's error when it cannot be reached. */
    async decision(id: string, binding: ApprovalBinding): Promise<ApprovalDecision> {
      if (typeof id !== 'string' || !APPROVAL_ID.test(id)) return { status: 'unknown' };
      const stored = await store.get(id);
      if (!stored || !matchesBinding(stored.approval, binding)) return { status: 'unknown' };
      if (stored.approval.expiresAt <= now()) return { status: 'unknown' };
      const decision = stored.decision;
      if (!decision) return { status: 'pending' };
      // Nothing may run on a withdrawn approval: to the gate it is a refusal like a denial.
      if (decision.status === 'withdrawn')
        return { status: 'denied', decidedAt: decision.decidedAt };
      return { ...decision };
    },
    /**
     * See {@link ApprovalChannel.withdraw}: records `withdrawn` for an
     * approval opened with exactly `binding` that is pending, or approved
     * but never carried out (the decline used the ticket up); a denied,
     * withdrawn, unknown or differently bound one is left as it is.
     * @throws the store's error when it cannot be reached.
     */
    async withdraw(id: string, binding: ApprovalBinding): Promise<void> {
      if (typeof id !== 'string' || !APPROVAL_ID.test(id)) return;
      const stored = await store.get(id);
      if (!stored || !matchesBinding(stored.approval, binding)) return;
      if (stored.decision && stored.decision.status !== 'approved') return;
      await store.decide({ id, principal: stored.approval.principal, outcome: 'withdrawn' });
    },
  };
}
