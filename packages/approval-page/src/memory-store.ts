import type { PendingApproval } from '@mrtr/gate';
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
    this.#approvals.set(approval.id, { approval: pendingApproval(approval), decision: undefined });
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
    return { status: 'recorded', decision: { ...verdict.record } };
  }

  /** See {@link ApprovalStore.sweep}. */
  async sweep(now: number = this.#now()): Promise<number> {
    let removed = 0;
    for (const [id, { approval }] of this.#approvals)
      if (approval.expiresAt <= now && this.#approvals.delete(id)) removed++;
    for (const [key, session] of this.#sessions)
      if (session.expiresAt <= now && this.#sessions.delete(key)) removed++;
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
