import {
  assertClaimRequest,
  type ClaimRequest,
  type Json,
  type OnceResult,
  type ReplayStore,
} from './contract.js';

interface Entry {
  requestDigest: string;
  expiresAt: number;
  /** The outcome as JSON text: a copy that neither the caller nor a replay can change. */
  outcome?: string;
  /** The action has finished (with `outcome`, or with a value that is not JSON). */
  settled?: boolean;
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
  /**
   * Nonces by the second their entry expires in: a sweep visits only the
   * seconds that have passed, not every live entry (a server doing thousands
   * of claims a second holds hundreds of thousands within a ticket lifetime).
   */
  readonly #bySecond = new Map<number, string[]>();
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

  /**
   * See {@link ReplayStore.once}. An identical presentation while the action
   * runs is refused as `in_progress` at once.
   * @throws {TypeError} for a malformed claim; otherwise only what `action` throws.
   */
  async once<T extends Json>(
    claim: ClaimRequest,
    action: (tx: undefined) => Promise<T>,
  ): Promise<OnceResult<T>> {
    assertClaimRequest(claim);
    const now = this.#now();
    if (++this.#claims % this.#sweepEvery === 0) this.sweep(now);
    const existing = this.#entries.get(claim.nonce);
    // A claim still running never expires: forgetting it would let a second caller run the action.
    if (existing && (existing.expiresAt > now || !existing.settled)) {
      if (existing.requestDigest !== claim.requestDigest)
        return { status: 'refused', reason: 'used' };
      if (!existing.settled) return { status: 'refused', reason: 'in_progress' };
      if (existing.outcome === undefined) return { status: 'refused', reason: 'used' };
      return { status: 'replayed', outcome: JSON.parse(existing.outcome) as T };
    }
    // Claim synchronously, before the first await, so concurrent callers see it.
    const entry: Entry = { requestDigest: claim.requestDigest, expiresAt: claim.expiresAt };
    this.#entries.set(claim.nonce, entry);
    const second = Math.floor(claim.expiresAt / 1000);
    const due = this.#bySecond.get(second);
    if (due) due.push(claim.nonce);
    else this.#bySecond.set(second, [claim.nonce]);
    let outcome: T;
    try {
      outcome = await action(undefined);
    } catch (error) {
      if (this.#entries.get(claim.nonce) === entry) {
        this.#entries.delete(claim.nonce);
        // Out of the sweep index too, or retries that keep failing would pile up there until expiry.
        const due = this.#bySecond.get(second);
        const at = due?.lastIndexOf(claim.nonce) ?? -1;
        if (due && at !== -1) due.splice(at, 1);
      }
      throw error;
    }
    let recorded: string | undefined;
    try {
      recorded = JSON.stringify(outcome);
    } catch {
      recorded = undefined; // BigInt or a cycle
    }
    entry.settled = true;
    // The action ran, so the nonce stays used; there is just no outcome to replay.
    if (recorded === undefined) throw new TypeError('the action must return a JSON value');
    entry.outcome = recorded;
    return { status: 'performed', outcome };
  }

  /**
   * Forget completed entries whose `expiresAt` is at or before `now`
   * (milliseconds since the epoch). Entries whose action still runs stay.
   * @returns how many entries were removed.
   */
  sweep(now = this.#now()): number {
    let removed = 0;
    if (Number.isNaN(now)) return removed; // no time is past a broken clock's reading
    for (const [second, nonces] of this.#bySecond) {
      if (second * 1000 > now) continue;
      const kept: string[] = [];
      for (const nonce of nonces) {
        const entry = this.#entries.get(nonce);
        // Released, or claimed again under another second: that bucket has it now.
        if (entry === undefined || Math.floor(entry.expiresAt / 1000) !== second) continue;
        // Not yet due (later in this second), or still running: never forgotten while it runs.
        if (entry.expiresAt > now || !entry.settled) kept.push(nonce);
        else {
          this.#entries.delete(nonce);
          removed++;
        }
      }
      if (kept.length > 0) this.#bySecond.set(second, kept);
      else this.#bySecond.delete(second);
    }
    return removed;
  }
}
