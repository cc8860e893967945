/**
 * The passkey records of {@link PostgresApprovalStore}: credentials (with
 * the signature counter as its own column, for compare-and-set) and the
 * registrations under way.
 */
import {
  assertCounters,
  assertCredential,
  assertCredentialId,
  assertPrincipal,
  assertRegistration,
  credentialRecord,
  MAX_CREDENTIALS,
} from './passkey-rules.js';
import type { PasskeyCredential, PasskeyStore, RegistrationChallenge } from './passkey-store.js';
import type { approvalTables } from './postgres-tables.js';
import { ApprovalStoreUnavailableError } from './store.js';

/** Runs one statement, wrapping a failure in {@link ApprovalStoreUnavailableError}. */
export type Run = <R>(sql: string, params: unknown[]) => Promise<{ rows: R[] }>;

interface CredentialRow {
  principal: string;
  credential: string;
  counter: string | number;
}

const iso = (ms: number) => new Date(ms).toISOString();

function parse<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new ApprovalStoreUnavailableError(`${what} row is not valid JSON`, { cause: error });
  }
}

/** The {@link PasskeyStore} half of the PostgreSQL store (internal). */
export class PostgresPasskeyRecords implements PasskeyStore {
  readonly #run: Run;
  readonly #now: () => number;
  readonly #sql: Record<'add' | 'get' | 'list' | 'count' | 'del' | 'putR' | 'takeR', string>;

  constructor(run: Run, tables: ReturnType<typeof approvalTables>, now: () => number) {
    this.#run = run;
    this.#now = now;
    const c = tables.credentials.sql;
    const r = tables.registrations.sql;
    this.#sql = {
      add: `INSERT INTO ${c} (id, principal, credential, counter, created_at)
        VALUES ($1, $2, $3, $4, $5::timestamptz) ON CONFLICT (id) DO NOTHING RETURNING 1 AS added`,
      get: `SELECT principal, credential, counter FROM ${c} WHERE id = $1`,
      list: `SELECT id, principal, credential, counter FROM ${c} WHERE principal = $1
        ORDER BY created_at, id LIMIT ${MAX_CREDENTIALS}`,
      count: `UPDATE ${c} SET counter = $3 WHERE id = $1 AND counter = $2 RETURNING 1 AS set`,
      del: `DELETE FROM ${c} WHERE id = $1 AND principal = $2 RETURNING 1 AS deleted`,
      putR: `INSERT INTO ${r} (key, challenge, expires_at) VALUES ($1, $2, $3::timestamptz)
        ON CONFLICT (key) DO UPDATE SET challenge = EXCLUDED.challenge, expires_at = EXCLUDED.expires_at`,
      takeR: `DELETE FROM ${r} WHERE key = $1 RETURNING challenge, expires_at > $2::timestamptz AS live`,
    };
  }

  /** See {@link PasskeyStore.addCredential}. */
  async addCredential(credential: PasskeyCredential): Promise<boolean> {
    assertCredential(credential);
    const { id, principal, publicKey, transports, createdAt, counter } =
      credentialRecord(credential);
    const json = JSON.stringify({ publicKey, transports, createdAt });
    const { rows } = await this.#run(this.#sql.add, [id, principal, json, counter, iso(createdAt)]);
    return rows.length > 0;
  }

  /** See {@link PasskeyStore.getCredential}. */
  async getCredential(id: string): Promise<PasskeyCredential | undefined> {
    assertCredentialId(id);
    const { rows } = await this.#run<CredentialRow>(this.#sql.get, [id]);
    return rows[0] && this.#credential(id, rows[0]);
  }

  /** See {@link PasskeyStore.listCredentials}. */
  async listCredentials(principal: string): Promise<PasskeyCredential[]> {
    assertPrincipal(principal);
    const { rows } = await this.#run<CredentialRow & { id: string }>(this.#sql.list, [principal]);
    return rows.map((row) => this.#credential(row.id, row));
  }

  /** See {@link PasskeyStore.updateCredentialCounter}. */
  async updateCredentialCounter(id: string, from: number, to: number): Promise<boolean> {
    assertCredentialId(id);
    assertCounters(from, to);
    const { rows } = await this.#run(this.#sql.count, [id, from, to]);
    return rows.length > 0;
  }

  /** See {@link PasskeyStore.deleteCredential}. */
  async deleteCredential(id: string, principal: string): Promise<boolean> {
    assertCredentialId(id);
    assertPrincipal(principal);
    const { rows } = await this.#run(this.#sql.del, [id, principal]);
    return rows.length > 0;
  }

  /** See {@link PasskeyStore.putRegistrationChallenge}. */
  async putRegistrationChallenge(key: string, challenge: RegistrationChallenge): Promise<void> {
    assertRegistration(key, challenge);
    const { principal, expiresAt } = challenge;
    const json = JSON.stringify({ challenge: challenge.challenge, principal, expiresAt });
    await this.#run(this.#sql.putR, [key, json, iso(expiresAt)]);
  }

  /** See {@link PasskeyStore.takeRegistrationChallenge}: one `DELETE … RETURNING`. */
  async takeRegistrationChallenge(key: string): Promise<RegistrationChallenge | undefined> {
    assertRegistration(key);
    const { rows } = await this.#run<{ challenge: string; live: boolean }>(this.#sql.takeR, [
      key,
      iso(this.#now()),
    ]);
    const row = rows[0];
    return row?.live ? parse<RegistrationChallenge>(row.challenge, 'registration') : undefined;
  }

  #credential(id: string, row: CredentialRow): PasskeyCredential {
    const rest = parse<Pick<PasskeyCredential, 'publicKey' | 'transports' | 'createdAt'>>(
      row.credential,
      'credential',
    );
    return credentialRecord({
      id,
      principal: row.principal,
      counter: Number(row.counter),
      ...rest,
    });
  }
}
