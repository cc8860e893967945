import type { ClaimRequest, Json, OnceResult, ReplayStore } from './contract.js';

interface Entry {
  requestDigest: string;
  expiresAt: number;
  outcome?: Json;
}

/** Options of {@link MemoryReplayStore}. */
export interface MemoryReplayStoreOptions {
  /** Clock, milliseconds since the epoch (default `Date.now`); for tests. */
  now?: () => number;
  /** Sweep expired entries every this many claims (default 1024). */
  sweepEvery?: number;
}

/**
 * A {@link ReplayStore} in process memory. Correct for one process only: two
 * server instances must share a Redis or PostgreSQL store instead. Entries
 * are forgotten after `expiresAt`.
 */
export class MemoryReplayStore implements ReplayStore<void> {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #sweepEvery: number;
  #claims = 0;

  constructor(options: MemoryReplayStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#sweepEvery = options.sweepEvery ?? 1024;
  }

  /** Number of live entries (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }

  /** See {@link ReplayStore.once}. Never throws on its own; rethrows what `action` throws. */
  async once<T extends Json>(
    claim: ClaimRequest,
    action: () => Promise<T>,
  ): Promise<OnceResult<T>> {
    const now = this.#now();
    if (++this.#claims % this.#sweepEvery === 0) this.sweep(now);
    const existing = this.#entries.get(claim.nonce);
    // A claim still running never expires: forgetting it would let a second caller run the action.
    if (existing && (existing.expiresAt > now || existing.outcome === undefined)) {
      if (existing.requestDigest !== claim.requestDigest)
        return { status: 'refused', reason: 'used' };
      if (existing.outcome === undefined) return { status: 'refused', reason: 'in_progress' };
      return { status: 'replayed', outcome: structuredClone(existing.outcome) as T };
    }
    // Claim synchronously, before the first await, so concurrent callers see it.
    const entry: Entry = { requestDigest: claim.requestDigest, expiresAt: claim.expiresAt };
    this.#entries.set(claim.nonce, entry);
    let outcome: T;
    try {
      outcome = await action();
    } catch (error) {
      if (this.#entries.get(claim.nonce) === entry) this.#entries.delete(claim.nonce);
      throw error;
    }
    entry.outcome = structuredClone(outcome);
    return { status: 'performed', outcome };
  }

  /** Forget completed entries whose `expiresAt` is at or before `now` (milliseconds). */
  sweep(now = this.#now()): void {
    for (const [nonce, entry] of this.#entries)
      if (entry.expiresAt <= now && entry.outcome !== undefined) this.#entries.delete(nonce);
  }
}
