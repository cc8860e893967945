import type { PendingApproval } from '@mrtr/gate';
import {
  assertChallengeRequest,
  assertCounters,
  assertCredential,
  assertCredentialId,
  assertPrincipal,
  assertRegistration,
  credentialRecord,
  judgeChallenge,
} from './passkey-rules.js';
import type {
  ChallengeRequest,
  PasskeyCredential,
  RegistrationChallenge,
} from './passkey-store.js';
import {
  assertDecideRequest,
  assertPendingApproval,
  assertSession,
  judge,
  pendingApproval,
  refusal,
  sameApproval,
} from './rules.js';
import type {
  ApprovalStore,
  ChallengeResult,
  DecideRequest,
  DecideResult,
  SessionRecord,
  StoredApproval,
} from './store.js';

/** Options of {@link MemoryApprovalStore}. */
export interface MemoryApprovalStoreOptions {
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

/**
 * The {@link ApprovalStore} in this process's memory: for tests and a
 * single-process server. Two processes (or two instances behind a load
 * balancer) do not share it; use the PostgreSQL or Redis store there.
 * Expired entries are dropped when read and by {@link sweep}.
 */
export class MemoryApprovalStore implements ApprovalStore {
  readonly #now: () => number;
  readonly #approvals = new Map<string, StoredApproval>();
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #credentials = new Map<string, PasskeyCredential>();
  readonly #registrations = new Map<string, RegistrationChallenge>();

  constructor(options: MemoryApprovalStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** See {@link ApprovalStore.open}. */
  async open(approval: PendingApproval): Promise<void> {
    assertPendingApproval(approval, this.#now());
    const existing = this.#approvals.get(approval.id);
    if (existing) {
      if (sameApproval(existing.approval, approval)) return;
      throw new TypeError('approval id already opened with another approval');
    }
    this.#approvals.set(approval.id, {
      approval: pendingApproval(approval),
      decision: undefined,
      challenge: undefined,
    });
  }

  /** See {@link ApprovalStore.get}. Returns a copy. */
  async get(id: string): Promise<StoredApproval | undefined> {
    const stored = this.#approvals.get(id);
    return stored && structuredClone(stored);
  }

  /** See {@link ApprovalStore.decide}: the check and the write happen in one synchronous step. */
  async decide(request: DecideRequest): Promise<DecideResult> {
    assertDecideRequest(request);
    const stored = this.#approvals.get(request.id);
    const verdict = judge(stored, request, this.#now());
    if ('refused' in verdict) return refusal(verdict);
    (stored as StoredApproval).decision = verdict.record;
    (stored as StoredApproval).challenge = undefined;
    return { status: 'recorded', decision: structuredClone(verdict.record) };
  }

  /** See {@link ApprovalStore.setChallenge}. */
  async setChallenge(request: ChallengeRequest): Promise<ChallengeResult> {
    assertChallengeRequest(request);
    const stored = this.#approvals.get(request.id);
    const verdict = judgeChallenge(stored, request, this.#now());
    if ('refused' in verdict) return { status: 'refused', reason: verdict.refused };
    (stored as StoredApproval).challenge = verdict.keep;
    return { status: 'set', challenge: structuredClone(verdict.keep) };
  }

  /** See {@link PasskeyStore.addCredential}. */
  async addCredential(credential: PasskeyCredential): Promise<boolean> {
    assertCredential(credential);
    if (this.#credentials.has(credential.id)) return false;
    this.#credentials.set(credential.id, credentialRecord(credential));
    return true;
  }

  /** See {@link PasskeyStore.getCredential}. Returns a copy. */
  async getCredential(id: string): Promise<PasskeyCredential | undefined> {
    assertCredentialId(id);
    const credential = this.#credentials.get(id);
    return credential && credentialRecord(credential);
  }

  /** See {@link PasskeyStore.listCredentials}. */
  async listCredentials(principal: string): Promise<PasskeyCredential[]> {
    assertPrincipal(principal);
    return [...this.#credentials.values()]
      .filter((c) => c.principal === principal)
      .sort((a, b) => a.createdAt - b.createdAt)
      .slice(0, 100)
      .map(credentialRecord);
  }

  /** See {@link PasskeyStore.updateCredentialCounter}. */
  async updateCredentialCounter(id: string, from: number, to: number): Promise<boolean> {
    assertCredentialId(id);
    assertCounters(from, to);
    const credential = this.#credentials.get(id);
    if (!credential || credential.counter !== from) return false;
    credential.counter = to;
    return true;
  }

  /** See {@link PasskeyStore.deleteCredential}. */
  async deleteCredential(id: string, principal: string): Promise<boolean> {
    assertCredentialId(id);
    assertPrincipal(principal);
    if (this.#credentials.get(id)?.principal !== principal) return false;
    return this.#credentials.delete(id);
  }

  /** See {@link PasskeyStore.putRegistrationChallenge}. */
  async putRegistrationChallenge(key: string, challenge: RegistrationChallenge): Promise<void> {
    assertRegistration(key, challenge);
    const { principal, expiresAt } = challenge;
    this.#registrations.set(key, { challenge: challenge.challenge, principal, expiresAt });
  }

  /** See {@link PasskeyStore.takeRegistrationChallenge}. */
  async takeRegistrationChallenge(key: string): Promise<RegistrationChallenge | undefined> {
    assertRegistration(key);
    const challenge = this.#registrations.get(key);
    this.#registrations.delete(key);
    return challenge && challenge.expiresAt > this.#now() ? challenge : undefined;
  }

  /** See {@link ApprovalStore.sweep}. */
  async sweep(now: number = this.#now()): Promise<number> {
    let removed = 0;
    for (const [id, { approval }] of this.#approvals)
      if (approval.expiresAt <= now && this.#approvals.delete(id)) removed++;
    for (const [key, session] of this.#sessions)
      if (session.expiresAt <= now && this.#sessions.delete(key)) removed++;
    for (const [key, challenge] of this.#registrations)
      if (challenge.expiresAt <= now && this.#registrations.delete(key)) removed++;
    return removed;
  }

  /** See {@link SessionStore.createSession}. */
  async createSession(key: string, session: SessionRecord): Promise<void> {
    assertSession(key, session);
    this.#sessions.set(key, { ...session });
  }

  /** See {@link SessionStore.readSession}. */
  async readSession(key: string): Promise<SessionRecord | undefined> {
    assertSession(key);
    const session = this.#sessions.get(key);
    if (!session) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(key);
      return undefined;
    }
    return { ...session };
  }

  /** See {@link SessionStore.deleteSession}. */
  async deleteSession(key: string): Promise<void> {
    assertSession(key);
    this.#sessions.delete(key);
  }
}
