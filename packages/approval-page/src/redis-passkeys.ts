/**
 * The passkey records of {@link RedisApprovalStore}: a credential is a hash
 * `<prefix>k:<id>` (`principal`, `record`, `counter`) listed in the set
 * `<prefix>p:<principal>`; each change is one script, so it is atomic. A
 * registration under way is `<prefix>r:<key>` with `PXAT` its expiry, taken
 * with `GETDEL`. Credentials have no expiry. Adding and removing touch two
 * keys in one script, which Redis Cluster refuses across hash slots
 * (`CROSSSLOT`): passkeys need a single Redis (or a primary with replicas).
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
import { ApprovalStoreUnavailableError } from './store.js';

/** Sends one Redis command, wrapping a failure in {@link ApprovalStoreUnavailableError}. */
export type Call = (command: string, ...args: string[]) => Promise<unknown>;

/** Add only when the id is new: the hash and the principal's set change together. */
const ADD = `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'principal', ARGV[1], 'record', ARGV[2], 'counter', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
return 1`;

/** Compare-and-set of the signature counter. */
const COUNTER = `if redis.call('HGET', KEYS[1], 'counter') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'counter', ARGV[2])
  return 1
end
return 0`;

/** Delete only the principal's own credential. */
const DELETE = `if redis.call('HGET', KEYS[1], 'principal') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], ARGV[2])
  return 1
end
return 0`;

function parse<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new ApprovalStoreUnavailableError(`Redis ${what} is not valid JSON`, { cause: error });
  }
}

/** The {@link PasskeyStore} half of the Redis store (internal). */
export class RedisPasskeyRecords implements PasskeyStore {
  readonly #call: Call;
  readonly #prefix: string;
  readonly #now: () => number;

  constructor(call: Call, prefix: string, now: () => number) {
    this.#call = call;
    this.#prefix = prefix;
    this.#now = now;
  }

  /** See {@link PasskeyStore.addCredential}. */
  async addCredential(credential: PasskeyCredential): Promise<boolean> {
    assertCredential(credential);
    const { id, principal, publicKey, transports, createdAt, counter } =
      credentialRecord(credential);
    const record = JSON.stringify({ publicKey, transports, createdAt });
    const keys = [this.#key(id), this.#list(principal)];
    const added = await this.#call('EVAL', ADD, '2', ...keys, principal, record, `${counter}`, id);
    return added === 1;
  }

  /** See {@link PasskeyStore.getCredential}. */
  async getCredential(id: string): Promise<PasskeyCredential | undefined> {
    assertCredentialId(id);
    return this.#read(id);
  }

  /** See {@link PasskeyStore.listCredentials}. */
  async listCredentials(principal: string): Promise<PasskeyCredential[]> {
    assertPrincipal(principal);
    const ids = await this.#call('SMEMBERS', this.#list(principal));
    const found: PasskeyCredential[] = [];
    for (const id of Array.isArray(ids) ? ids.slice(0, MAX_CREDENTIALS) : []) {
      const credential = typeof id === 'string' ? await this.#read(id) : undefined;
      if (credential?.principal === principal) found.push(credential);
    }
    return found.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  /** See {@link PasskeyStore.updateCredentialCounter}. */
  async updateCredentialCounter(id: string, from: number, to: number): Promise<boolean> {
    assertCredentialId(id);
    assertCounters(from, to);
    return (await this.#call('EVAL', COUNTER, '1', this.#key(id), `${from}`, `${to}`)) === 1;
  }

  /** See {@link PasskeyStore.deleteCredential}. */
  async deleteCredential(id: string, principal: string): Promise<boolean> {
    assertCredentialId(id);
    assertPrincipal(principal);
    const keys = [this.#key(id), this.#list(principal)];
    return (await this.#call('EVAL', DELETE, '2', ...keys, principal, id)) === 1;
  }

  /** See {@link PasskeyStore.putRegistrationChallenge}. */
  async putRegistrationChallenge(key: string, challenge: RegistrationChallenge): Promise<void> {
    assertRegistration(key, challenge);
    const { principal, expiresAt } = challenge;
    const value = JSON.stringify({ challenge: challenge.challenge, principal, expiresAt });
    await this.#call('SET', `${this.#prefix}r:${key}`, value, 'PXAT', `${expiresAt}`);
  }

  /** See {@link PasskeyStore.takeRegistrationChallenge}: `GETDEL`. */
  async takeRegistrationChallenge(key: string): Promise<RegistrationChallenge | undefined> {
    assertRegistration(key);
    const raw = await this.#call('GETDEL', `${this.#prefix}r:${key}`);
    if (typeof raw !== 'string') return undefined;
    const challenge = parse<RegistrationChallenge>(raw, 'registration');
    return challenge.expiresAt > this.#now() ? challenge : undefined;
  }

  async #read(id: string): Promise<PasskeyCredential | undefined> {
    const raw = await this.#call('HMGET', this.#key(id), 'principal', 'record', 'counter');
    if (!Array.isArray(raw) || typeof raw[0] !== 'string' || typeof raw[1] !== 'string')
      return undefined;
    const rest = parse<Pick<PasskeyCredential, 'publicKey' | 'transports' | 'createdAt'>>(
      raw[1],
      'credential',
    );
    return credentialRecord({ id, principal: raw[0], counter: Number(raw[2]), ...rest });
  }

  #key(id: string): string {
    return `${this.#prefix}k:${id}`;
  }

  #list(principal: string): string {
    return `${this.#prefix}p:${principal}`;
  }
}
