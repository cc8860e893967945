import { DEFAULT_AUDIT_TABLE, migrateAuditTable, PostgresAuditSink } from '@mrtr/audit-postgres';
import {
  atStartUp,
  bearerAuthenticator,
  exampleApprovals,
  listenApp,
  type RunningServer,
  type Sweep,
  startSweeper,
  type TicketKeyOption,
  ticketKeys,
  untilReachable,
} from '@mrtr/example-kit';
import { type ApprovalChannel, type AuditSink, ConfirmationGate } from '@mrtr/gate';
import { ReceiptSigner, type ReceiptSigningKey, receiptIssuer } from '@mrtr/receipt';
import { LedgerReplayStore, type ReplayStore } from '@mrtr/replay';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { type RedisDurability, RedisDurabilityError, RedisReplayStore } from '@mrtr/replay-redis';
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import type { Database, Queryable } from './db.js';
import { RECEIPT_USES_TABLE, ServiceExecutor } from './executor.js';
import { freshReceiptKeys } from './receipt-keys.js';
import { migrate } from './services.js';
import { serviceTools } from './tools.js';

export { parseTokens, type RunningServer, randomSecret } from '@mrtr/example-kit';

/** Options of {@link createServiceDeleterEndpoint}. */
export interface ServiceDeleterOptions {
  /** The services database (see `openDatabase`). */
  db: Database;
  /** Bearer token → principal id. */
  tokens: Map<string, string>;
  /**
   * Principals made members of team `platform` (which owns the seeded
   * services) at start. Default: the principals of `tokens`. A server whose
   * framework authenticates (no tokens of its own) names them here.
   */
  members?: readonly string[];
  /** Master secret for tickets, at least 32 bytes. */
  secret: Uint8Array | string;
  /** The key id of `secret` (default `k1`; see `ticketKeys` of the example kit). */
  secretKid?: string | undefined;
  /** A ticket key that opens tickets but seals none, for rotating the key (see `ticketKeys`). */
  openKey?: TicketKeyOption | undefined;
  /**
   * A faster replay store shared by every instance (e.g. `RedisReplayStore`),
   * put in front of the ledger: a `PostgresReplayStore` in `db` (table
   * `mrtr_replay`) whose claim commits in the mutation's transaction, so a
   * front store that forgets a record can never make an operation run twice.
   */
  store?: ReplayStore<void> | ReplayStore<undefined>;
  /**
   * The approval page's channel (`@mrtr/approval-page`). Without one, the
   * operations `POLICY` confirms on the page (URL level) are confirmed by
   * form instead: weaker, for tests and for servers that mount no page.
   * `startServiceDeleter` serves a page and passes its channel.
   */
  approvals?: ApprovalChannel;
  /**
   * Audit sinks (optional), e.g. `new JsonLinesAuditSink()` of `@mrtr/audit`: each round of
   * a gated tool writes its records there (`GateAuditEvent` of `@mrtr/gate`).
   */
  audit?: AuditSink<Queryable> | readonly AuditSink<Queryable>[];
  /**
   * Also write the records to table `mrtr_audit` of `db` (created if missing). With the
   * default replay store, the `completed` and `declined` rows commit in the transaction that
   * claims the nonce and performs the mutation. Default `false`.
   */
  auditTable?: boolean;
  /**
   * How long rows of table `mrtr_audit` are kept, in milliseconds (default 30
   * days): the started server sweeps older ones. An in-memory database keeps
   * at most {@link MEMORY_AUDIT_MAX_ROWS} of them as well.
   */
  auditRetentionMs?: number;
  /**
   * Tool calls each principal may make per window (`@mrtr/server`'s
   * `rateLimit`; default 300 per 60 000 ms); `false` turns the limit off.
   */
  rateLimit?: { limit: number; windowMs: number } | false;
  /**
   * The approval receipts' Ed25519 keys (`ReceiptSigner.create` of
   * `@mrtr/receipt`), the signing key first; more keys verify and are
   * published (rotation). Default: a fresh key for this instance
   * (`receiptKeysFromEnv` reads `MRTR_RECEIPT_KEY` for `main`). Instances
   * behind one origin must share it.
   */
  receiptKeys?: ReceiptSigningKey[];
  /**
   * The receipts' `iss`: the origin the server is reached at
   * (`startServiceDeleter`), else `mrtr-service-deleter`.
   */
  receiptIssuer?: string;
  /**
   * Clock of the ticket sealer, milliseconds since the epoch (default
   * `Date.now`): sets `iat`/`exp` of new tickets and judges expiry. For
   * tests that need a ticket minted in the past.
   */
  now?: () => number;
}

/**
 * The front replay store: Redis when `redisUrl` is given (shared by every
 * instance on that Redis), else none (the PostgreSQL ledger alone).
 * @param redisDurability what the Redis must guarantee (`RedisDurability` of
 * `@mrtr/replay-redis`, env `MRTR_REDIS_DURABILITY`); unset: `'aof-always'`,
 * so a Redis that could forget a claim is refused unless the operator names
 * `'volatile'` (the PostgreSQL ledger still keeps every operation at most once).
 * A Redis that cannot be reached yet is waited for (`untilReachable` of `@mrtr/example-kit`).
 * @throws {Error} when Redis is not durable enough (its message names
 * `MRTR_REDIS_DURABILITY`; the store's `RedisDurabilityError` is its `cause`),
 * refuses the connection, or the URL is not one `ioredis` reads.
 */
export async function openReplayStore(
  redisUrl: string | undefined,
  redisDurability?: RedisDurability,
): Promise<{ store: ReplayStore<void> | undefined; close: () => Promise<void> }> {
  if (!redisUrl) return { store: undefined, close: async () => {} };
  // A Redis that is down at start is waited for; one that is not durable enough, or refuses our
  // password, is refused at once (RedisDurabilityError, RedisRefusedConnectionError: no outage).
  const store = await untilReachable(`Redis at ${hostOf(redisUrl)}`, () =>
    RedisReplayStore.connect(redisUrl, {
      keyPrefix: 'mrtr:service-deleter:',
      ...(redisDurability ? { durability: redisDurability } : {}),
    }),
  ).catch((error: unknown) => {
    // The store's message names its option; whoever starts this app sets the variable.
    if (!(error instanceof RedisDurabilityError)) throw error;
    throw new Error(
      `Redis at ${hostOf(redisUrl)} cannot keep replay claims as MRTR_REDIS_DURABILITY=${error.report.durability} requires: ${error.problems.join('; ')}. To use it anyway, set MRTR_REDIS_DURABILITY=volatile: the PostgreSQL ledger behind it still runs each operation at most once when Redis forgets a claim.`,
      { cause: error },
    );
  });
  return { store, close: () => store.close() };
}

/**
 * Build the service deleter's MCP endpoint: schema migrated, demo services
 * seeded on a new database, tools per the declared `POLICY`. A migration that
 * PostgreSQL stalls or drops is told on stderr and run again (`atStartUp` of
 * `@mrtr/example-kit`), not a failed start.
 */
export async function createServiceDeleterEndpoint(
  options: ServiceDeleterOptions,
): Promise<McpEndpoint> {
  const { endpoint } = await assemble(options, []);
  return endpoint;
}

/** Receipts' `iss` when no origin is known (`createServiceDeleterEndpoint`). */
export const DEFAULT_RECEIPT_ISSUER = 'mrtr-service-deleter';

/** The receipt signer, and the executor that verifies what it signs against its published keys. */
async function receiptsOf(options: ServiceDeleterOptions, sweeps: Sweep[]) {
  const signer = await ReceiptSigner.create({
    keys: options.receiptKeys ?? (await freshReceiptKeys()).keys,
    issuer: options.receiptIssuer ?? DEFAULT_RECEIPT_ISSUER,
  });
  const executor = await ServiceExecutor.create({
    db: options.db,
    // In this process: the very set served at /.well-known/jwks.json. A separate
    // executor process would pass new URL('<origin>/.well-known/jwks.json') instead.
    keys: signer.jwks(),
    issuer: signer.issuer,
    enforcePolicyLevels: options.approvals !== undefined,
  });
  sweeps.push({ table: RECEIPT_USES_TABLE, run: () => executor.sweep() });
  return { signer, executor };
}

/** The example servers' rate limit: 300 tool calls per principal per minute. */
export const DEFAULT_RATE_LIMIT = { limit: 300, windowMs: 60_000 };

/** Most rows of `mrtr_audit` an in-memory database keeps, whatever their age. */
export const MEMORY_AUDIT_MAX_ROWS = 100_000;

/** The endpoint, and the tables that grow with it: the replay ledger's and the audit table. */
async function assemble(
  options: ServiceDeleterOptions,
  sweeps: Sweep[],
): Promise<{ endpoint: McpEndpoint; jwks: () => { keys: object[] } }> {
  const members = options.members ?? [...new Set(options.tokens.values())];
  await atStartUp(options.db, 'migrating the services tables', () => migrate(options.db, members));
  const { signer, executor } = await receiptsOf(options, sweeps);
  await atStartUp(options.db, 'migrating mrtr_replay', () => migrateReplayTable(options.db));
  const ledger = new PostgresReplayStore(options.db);
  sweeps.push({ table: ledger.table, run: () => ledger.sweep() });
  const store: ReplayStore<Queryable> = options.store
    ? new LedgerReplayStore(options.store, ledger)
    : ledger;
  const gate = new ConfirmationGate<Queryable>({
    sealer: new TicketSealer({
      keys: ticketKeys(options),
      ...(options.now ? { now: options.now } : {}),
    }),
    store,
    ...(options.approvals ? { approvals: options.approvals } : {}),
    audit: await auditSinks(options, sweeps),
    receipts: receiptIssuer(signer),
  });
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 'mrtr-service-deleter', version: '0.1.0' },
    instructions:
      'Platform operations on services. delete_service, delete_volume and scale_to_zero ask a person to confirm before acting; trigger_deploy and the read tools do not.',
    tools: serviceTools(options.db, gate, executor),
    authenticate: bearerAuthenticator(options.tokens),
    // server/tools: servers MUST rate limit tool invocations.
    ...(options.rateLimit === false ? {} : { rateLimit: options.rateLimit ?? DEFAULT_RATE_LIMIT }),
  });
  return { endpoint, jwks: () => signer.jwks() };
}

/**
 * Start the service deleter at `/mcp` on `host:port` (port 0 picks a free
 * one), with its approval page under `/approve/` on the same database: people
 * sign in there with their principal id and page password (`pageUsers`), and approve what `POLICY`
 * confirms on the page. `approvalPage: false` serves no page (every
 * confirmation by form; for tests). The public keys of its approval receipts
 * are served at `/.well-known/jwks.json`; their `iss` is the origin. Every `sweepIntervalMs` milliseconds
 * (default 60 000), and once at start, until `close()`: expired rows of the
 * replay ledger and the approvals, and with `auditTable` rows of `mrtr_audit`
 * past `auditRetentionMs`, are deleted (PGlite tables vacuumed after).
 */
export async function startServiceDeleter(
  options: ServiceDeleterOptions & {
    host?: string;
    port?: number;
    publicOrigin?: string;
    approvalPage?: boolean;
    /**
     * Principal → password of the approval page's sign-in (`pageUsers` of
     * `readServerEnv`: `MRTR_PAGE_USERS`): passwords the MCP clients do not
     * hold. Default: each principal's bearer token of `tokens`, so whoever
     * holds a client's token can approve on the page (a demonstration only).
     */
    pageUsers?: ReadonlyMap<string, string>;
    sweepIntervalMs?: number;
  },
): Promise<RunningServer> {
  let sweeper: ReturnType<typeof startSweeper> | undefined;
  return listenApp(
    async (origin) => {
      const sweeps: Sweep[] = [];
      const approvals =
        options.approvalPage === false || options.approvals
          ? undefined
          : await exampleApprovals(options.db, origin, options.tokens, 'Service deleter', {
              ...(options.pageUsers ? { pageUsers: options.pageUsers } : {}),
            });
      if (approvals) sweeps.push({ table: 'mrtr_approvals', run: () => approvals.sweep() });
      const { endpoint, jwks } = await assemble(
        {
          ...options,
          receiptIssuer: options.receiptIssuer ?? origin,
          ...(approvals ? { approvals: approvals.channel } : {}),
        },
        sweeps,
      );
      sweeper = startSweeper(options.db, sweeps, options.sweepIntervalMs ?? 60_000);
      return approvals ? { endpoint, page: approvals.page, jwks } : { endpoint, jwks };
    },
    {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      ...(options.publicOrigin ? { publicOrigin: options.publicOrigin } : {}),
      onClose: () => sweeper?.stop(),
    },
  );
}

/**
 * The sinks of `options`: those given, then table `mrtr_audit` of `db` when
 * `auditTable` is set (its sweep added to `sweeps`).
 */
async function auditSinks(
  options: ServiceDeleterOptions,
  sweeps: Sweep[],
): Promise<AuditSink<Queryable>[]> {
  const sinks = [options.audit ?? []].flat() as AuditSink<Queryable>[];
  if (options.auditTable) {
    await atStartUp(options.db, 'migrating mrtr_audit', () => migrateAuditTable(options.db));
    const table = new PostgresAuditSink(options.db, {
      ...(options.auditRetentionMs !== undefined ? { retentionMs: options.auditRetentionMs } : {}),
      ...(options.db.inMemory ? { maxRows: MEMORY_AUDIT_MAX_ROWS } : {}),
    });
    sinks.push(table);
    sweeps.push({ table: DEFAULT_AUDIT_TABLE, run: () => table.sweep() });
  }
  return sinks;
}

/** The host and port of a Redis URL, without its password, for a log line. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || 'REDIS_URL';
  } catch {
    return 'REDIS_URL';
  }
}
