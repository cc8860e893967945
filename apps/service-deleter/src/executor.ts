/**
 * The one code path that deletes services and volumes. It acts only on a
 * signed approval receipt (`@mrtr/receipt`) that approves exactly this
 * operation with exactly these arguments, verified with `verifyAndRun`, and
 * at most once: the receipt's confirmation is claimed in table
 * `mrtr_receipt_uses` in the same PostgreSQL transaction as the DELETE, so
 * the claim and the deletion commit or roll back together. The MCP layer
 * (tools, gate) hands the receipt over; a bug or a bypass there cannot delete
 * anything without one.
 */

import { atStartUp } from '@mrtr/example-kit';
import {
  ReceiptError,
  type ReceiptKeySource,
  type ReceiptLevel,
  remoteKeySet,
  type VerifiedReceipt,
  verifyAndRun,
} from '@mrtr/receipt';
import type { Json, ReplayStore } from '@mrtr/replay';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import type { Database, Queryable } from './db.js';
import { POLICY } from './policy.js';
import { getService, getVolume, isTeamMember, type Volume } from './services.js';

/** The operations the executor performs, `<method>:<name>` as the gate spells them in receipts. */
export const DELETE_SERVICE = 'tools/call:delete_service';
/** See {@link DELETE_SERVICE}. */
export const DELETE_VOLUME = 'tools/call:delete_volume';
/** Table of the receipts' single-use claims (a `@mrtr/replay-postgres` table). */
export const RECEIPT_USES_TABLE = 'mrtr_receipt_uses';

/** Why the executor refused after the receipt verified: the target is not what it approved. */
export type ExecutorRefusalCode = 'not_found' | 'name_mismatch' | 'not_a_member';

/** The executor's refusal of a verified receipt; nothing was deleted and the receipt is not used up. */
export class ExecutorRefusal extends Error {
  override readonly name = 'ExecutorRefusal';
  constructor(
    readonly code: ExecutorRefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** Options of {@link ServiceExecutor.create}. */
export interface ServiceExecutorOptions {
  /** The services database; table {@link RECEIPT_USES_TABLE} is created in it if missing. */
  db: Database;
  /** The issuer's public keys: its JWKS, the URL of its `/.well-known/jwks.json`, or a jose key resolver. */
  keys: ReceiptKeySource;
  /** The `iss` a receipt must carry. */
  issuer: string;
  /**
   * Require the level `POLICY` declares (production `delete_service`:
   * `passkey`; `delete_volume`, and `delete_service` that destroys volumes:
   * at least `url`), so a confirmation weakened in the MCP layer is refused
   * here too. Off for a server without an approval page,
   * which confirms everything by form. Default `false`.
   */
  enforcePolicyLevels?: boolean;
}

/** What {@link ServiceExecutor.deleteService} deleted, as JSON data. */
export interface DeletedService {
  deleted: {
    id: string;
    name: string;
    environment: string;
    instances: number;
    dnsRecords: string[];
  };
  volumes: { destroyed: Volume[]; retained: Volume[] };
  /** The receipt's principal, level and ticket nonce. */
  approvedBy: { principal: string; level: ReceiptLevel; nonce: string };
}

/** What {@link ServiceExecutor.deleteVolume} destroyed, as JSON data. */
export interface DestroyedVolume {
  destroyed: { id: string; sizeGb: number };
  approvedBy: { principal: string; level: ReceiptLevel; nonce: string };
}

const LEVEL_OF = { form: 'form', url: 'url', presence: 'passkey' } as const;
const approvedBy = ({ claims }: VerifiedReceipt) => ({
  principal: claims.sub,
  level: claims.lvl,
  nonce: claims.n,
});

/**
 * Performs the service deleter's destructive operations, each only for a
 * receipt that verifies (`verifyAndRun` of `@mrtr/receipt`): signature under
 * `keys`, `iss`, not expired, `op` and the RFC 8785 digest of the arguments
 * equal to what is about to be done, and a confirmation never used before.
 * Then, in the same transaction: the target is re-read and locked, must be
 * what the arguments name, and the receipt's principal must still be a member
 * of the owning team.
 */
export class ServiceExecutor {
  readonly #uses: PostgresReplayStore;
  readonly #options: ServiceExecutorOptions;
  readonly #keys: ReceiptKeySource;

  private constructor(options: ServiceExecutorOptions) {
    this.#options = options;
    // A URL becomes one remote set, made once: it caches, refetches on an unknown kid, reads at most 1 MiB.
    this.#keys = options.keys instanceof URL ? remoteKeySet(options.keys) : options.keys;
    this.#uses = new PostgresReplayStore(options.db, { table: RECEIPT_USES_TABLE });
  }

  /**
   * Create table {@link RECEIPT_USES_TABLE} if missing, and the executor. A
   * database that stalls or drops the connection meanwhile is waited for
   * (`atStartUp` of `@mrtr/example-kit`: told on stderr, tried again).
   * @throws the database's error when it refuses to create the table.
   */
  static async create(options: ServiceExecutorOptions): Promise<ServiceExecutor> {
    await atStartUp(options.db, `migrating ${RECEIPT_USES_TABLE}`, () =>
      migrateReplayTable(options.db, { table: RECEIPT_USES_TABLE }),
    );
    return new ServiceExecutor(options);
  }

  /** Delete the claims whose receipts expired (for the server's sweeper). @returns how many rows. */
  sweep(): Promise<number> {
    return this.#uses.sweep();
  }

  /**
   * Delete service `serviceId` named `name` (the arguments the receipt must
   * approve), with its volumes when the accepted answer `content` has
   * `deleteVolumes: true` (the receipt's content digest must match it, so a
   * choice the person did not make is refused); retained volumes are
   * detached and kept.
   * @param receipt the compact JWS, as received (anything else is refused).
   * @param tx a transaction to run in (the gate's): the claim and the DELETE
   *   commit with it. Absent: a transaction of its own.
   * @throws {ReceiptError} for a receipt that does not approve exactly this
   *   (`operation_mismatch`, `arguments_mismatch`, `expired`, `already_used`, …),
   *   or, with policy levels enforced, one confirmed below the level the
   *   deletion needs (`insufficient_level`: production, or destroying volumes).
   * @throws {ExecutorRefusal} when the target is gone, renamed, or no longer
   *   its principal's; the claim is rolled back.
   */
  deleteService(
    receipt: string | undefined,
    args: { serviceId: string; name: string },
    options: { content: Readonly<Record<string, unknown>>; principal?: string },
    tx?: Queryable,
  ): Promise<DeletedService> {
    const target = { serviceId: args.serviceId, name: args.name };
    const deleteVolumes = options.content.deleteVolumes === true;
    return this.#run(
      receipt,
      DELETE_SERVICE,
      target,
      options.content,
      options.principal,
      tx,
      async (verified, q) => {
        const s = await getService(q, target.serviceId, true);
        if (!s) throw new ExecutorRefusal('not_found', `No service ${target.serviceId}.`);
        if (s.name !== target.name)
          throw new ExecutorRefusal(
            'name_mismatch',
            `Service ${s.id} is not named ${target.name}.`,
          );
        await this.#authorize(q, verified, s.teamId, s.id);
        const environment = s.environment === 'production' ? 'production' : 'other';
        this.#checkLevel(verified, POLICY.delete_service.level[environment]);
        // Destroying volumes is delete_volume's work, at its level whichever tool asks.
        if (deleteVolumes && s.volumes.length > 0)
          this.#checkLevel(verified, POLICY.delete_volume.level[environment]);
        // Each volume is its own team's (helper-162 H2): destroying it takes that membership too.
        if (deleteVolumes)
          for (const v of s.volumes) await this.#authorize(q, verified, v.teamId ?? s.teamId, v.id);
        if (deleteVolumes) await q.query('DELETE FROM volumes WHERE service_id = $1', [s.id]);
        await q.query('DELETE FROM services WHERE id = $1', [s.id]);
        return {
          deleted: {
            id: s.id,
            name: s.name,
            environment: s.environment,
            instances: s.instances,
            dnsRecords: s.dnsRecords,
          },
          volumes: deleteVolumes
            ? { destroyed: s.volumes.map(idAndSize), retained: [] }
            : { destroyed: [], retained: s.volumes.map(idAndSize) },
          approvedBy: approvedBy(verified),
        };
      },
    );
  }

  /**
   * Destroy volume `volumeId` (the argument the receipt must approve).
   * @throws as {@link deleteService}.
   */
  deleteVolume(
    receipt: string | undefined,
    args: { volumeId: string },
    options: { content?: Readonly<Record<string, unknown>>; principal?: string } = {},
    tx?: Queryable,
  ): Promise<DestroyedVolume> {
    const target = { volumeId: args.volumeId };
    const content = options.content ?? {};
    return this.#run(
      receipt,
      DELETE_VOLUME,
      target,
      content,
      options.principal,
      tx,
      async (verified, q) => {
        const v = await getVolume(q, target.volumeId, true);
        if (!v) throw new ExecutorRefusal('not_found', `No volume ${target.volumeId}.`);
        await this.#authorize(q, verified, v.teamId, v.id);
        this.#checkLevel(verified, POLICY.delete_volume.level.production);
        await q.query('DELETE FROM volumes WHERE id = $1', [v.id]);
        return { destroyed: { id: v.id, sizeGb: v.sizeGb }, approvedBy: approvedBy(verified) };
      },
    );
  }

  async #authorize(q: Queryable, verified: VerifiedReceipt, teamId: string, what: string) {
    if (!(await isTeamMember(q, verified.claims.sub, teamId)))
      throw new ExecutorRefusal(
        'not_a_member',
        `The approving principal is not a member of team ${teamId}, which owns ${what}.`,
      );
  }

  #checkLevel(verified: VerifiedReceipt, policy: keyof typeof LEVEL_OF) {
    if (!this.#options.enforcePolicyLevels) return;
    const order = ['form', 'url', 'passkey'];
    if (order.indexOf(verified.claims.lvl) < order.indexOf(LEVEL_OF[policy]))
      throw new ReceiptError('insufficient_level');
  }

  /** Verify, then claim and act in one transaction (`tx`, or one of its own). */
  #run<T extends DeletedService | DestroyedVolume>(
    receipt: string | undefined,
    operation: string,
    args: Record<string, string>,
    content: Readonly<Record<string, unknown>>,
    principal: string | undefined,
    tx: Queryable | undefined,
    action: (verified: VerifiedReceipt, q: Queryable) => Promise<T>,
  ): Promise<T> {
    // Verified before any transaction opens (a JWKS fetch never holds one); the claim
    // and the action then run in `tx`, or in a transaction of the store's own.
    // Inside `tx`: under a savepoint, so a refusal after the claim (target gone, level too low)
    // takes the claim back without aborting the caller's transaction.
    const store: ReplayStore<Queryable> = tx ? this.#uses.inTransaction(tx) : this.#uses;
    return verifyAndRun(
      receipt as string, // undefined is refused as malformed
      {
        operation,
        arguments: args,
        content,
        keys: this.#keys,
        issuer: this.#options.issuer,
        ...(principal !== undefined ? { principal } : {}),
        store,
      },
      // Plain JSON data: the store records it as the claim's outcome.
      (verified, q) => action(verified, q) as unknown as Promise<Json>,
    ).then(({ outcome }) => outcome as unknown as T);
  }
}

/** A volume as results report it: its id and size (GB), not its team. */
const idAndSize = ({ id, sizeGb }: { id: string; sizeGb: number }) => ({ id, sizeGb });
