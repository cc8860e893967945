import {
  assertOnceRequest,
  type Json,
  type OnceRequest,
  type OnceResult,
  type ReplayStore,
} from './contract.js';

/** A claim whose action is still running. */
interface Running {
  requestDigest: string;
  expiresAt: number;
}

/** A settled claim as it is kept: {@link record} of it, read back by {@link parseRecord}. */
interface Settled {
  expiresAt: number;
  /** The request digest as {@link compactDigest} keeps it. */
  digest: string;
  /** The outcome as JSON text; `''` when the action returned something JSON cannot hold. */
  outcome: string;
}

/*
 * A server keeps one record per confirmation for the ticket's lifetime
 * (thousands a second under load), so a record is one flat string with the
 * fixed parts of the usual values left out. What a gate records is almost
 * always a text `CallToolResult` (`textResult` of `@mrtr/wire`), whose JSON
 * around the text is the same every time, and its request digest is a
 * `sha256:` digest of `@mrtr/digest`. Each is kept with a one-character tag,
 * so that any other value still round-trips exactly.
 */
const TEXT_RESULT_HEAD = '{"resultType":"complete","content":[{"type":"text","text":';
const TEXT_RESULT_TAIL = '}],"isError":false}';
const SHA256 = 'sha256:';

/** The digest as a record keeps it: `#` + base64url for `sha256:<base64url>`, else `=` + the digest. */
function compactDigest(digest: string): string {
  return digest.startsWith(SHA256) ? `#${digest.slice(SHA256.length)}` : `=${digest}`;
}

/** The outcome JSON as a record keeps it: `t` + the text's JSON string for a text result, else `j` + the JSON; `''` for none. */
function compactOutcome(json: string | undefined): string {
  if (json === undefined) return '';
  return json.length > TEXT_RESULT_HEAD.length + TEXT_RESULT_TAIL.length &&
    json.startsWith(TEXT_RESULT_HEAD) &&
    json.endsWith(TEXT_RESULT_TAIL)
    ? `t${json.slice(TEXT_RESULT_HEAD.length, -TEXT_RESULT_TAIL.length)}`
    : `j${json}`;
}

function outcomeOf(compact: string): string {
  if (compact === '') return '';
  const json = compact.slice(1);
  return compact[0] === 't' ? TEXT_RESULT_HEAD + json + TEXT_RESULT_TAIL : json;
}

/**
 * One flat string per settled claim, `<expiresAt> <digest length> <digest><outcome>`
 * (digest and outcome as {@link compactDigest} and {@link compactOutcome}
 * keep them): about 110 bytes for a short text result with a `sha256:`
 * digest, where the whole JSON took 190 and an object holding two strings
 * about 490. `join` builds a flat string, where `+` would keep the pieces.
 */
function record(expiresAt: number, digest: string, outcome: string): string {
  return [expiresAt, digest.length, digest + outcome].join(' ');
}

function expiresAtOf(kept: string): number {
  return Number(kept.slice(0, kept.indexOf(' ')));
}

function parseRecord(kept: string): Settled {
  const first = kept.indexOf(' ');
  const second = kept.indexOf(' ', first + 1);
  const length = Number(kept.slice(first + 1, second));
  return {
    expiresAt: Number(kept.slice(0, first)),
    digest: kept.slice(second + 1, second + 1 + length),
    outcome: outcomeOf(kept.slice(second + 1 + length)),
  };
}

/** Options of {@link MemoryReplayStore}. */
export interface MemoryReplayStoreOptions {
  /**
   * Clock, milliseconds since the epoch (default `Date.now`); for tests. A
   * reading that is not a finite number makes `once` throw a `TypeError`:
   * no entry could be told live from expired.
   */
  now?: () => number;
  /** Sweep expired entries every this many claims: a whole number ≥ 1 (default 1024). */
  sweepEvery?: number;
}

/**
 * A {@link ReplayStore} in process memory. Correct for one process only: two
 * server instances must share a Redis or PostgreSQL store instead. Entries
 * are forgotten after `expiresAt`.
 */
export class MemoryReplayStore implements ReplayStore<void> {
  /**
   * Every live claim by nonce: a {@link Running} object while its action
   * runs (never forgotten, whatever its `expiresAt`), then the {@link record}
   * string of its outcome. One map, so a claim costs the two writes at most
   * once needs (claim, then outcome) and a presentation one lookup.
   */
  readonly #entries = new Map<string, Running | string>();
  /**
   * Nonces by the second their entry expires in: a sweep visits only the
   * seconds that have passed, not every live entry (a server doing thousands
   * of claims a second holds hundreds of thousands within a ticket lifetime).
   */
  readonly #bySecond = new Map<number, string[]>();
  readonly #now: () => number;
  readonly #sweepEvery: number;
  #claims = 0;

  /**
   * @throws {TypeError} when `now` is given and is not a function, or
   *   `sweepEvery` is not a whole number ≥ 1.
   */
  constructor(options: MemoryReplayStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#sweepEvery = options.sweepEvery ?? 1024;
    if (typeof this.#now !== 'function')
      throw new TypeError('MemoryReplayStore: now must be a function returning milliseconds');
    if (!Number.isSafeInteger(this.#sweepEvery) || this.#sweepEvery < 1)
      throw new TypeError(
        `MemoryReplayStore: sweepEvery must be a whole number of claims ≥ 1; got ${String(this.#sweepEvery)}`,
      );
  }

  /** Number of live entries (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * See {@link ReplayStore.once}. An identical presentation while the action
   * runs is refused as `in_progress` at once.
   * @throws {TypeError} for a malformed request, a clock (`now`) that reads no
   *   finite number (before anything is claimed), or an outcome that is no JSON
   *   value (after the action ran; its claim is kept, recorded as used);
   *   otherwise only what `action` throws.
   */
  async once<T extends Json>(
    request: OnceRequest,
    action: (tx: undefined) => Promise<T>,
  ): Promise<OnceResult<T>> {
    assertOnceRequest(request);
    const { nonce, requestDigest, expiresAt } = request;
    const now = this.#now();
    // A broken clock would read every settled entry as expired and run the action again: fail closed.
    if (!Number.isFinite(now))
      throw new TypeError(`MemoryReplayStore: the clock returned ${String(now)}, not milliseconds`);
    if (++this.#claims % this.#sweepEvery === 0) this.sweep(now);
    const kept = this.#entries.get(nonce);
    if (kept !== undefined) {
      // A claim still running never expires: forgetting it would let a second caller run the action.
      if (typeof kept !== 'string')
        return kept.requestDigest === requestDigest
          ? { status: 'refused', reason: 'in_progress' }
          : { status: 'refused', reason: 'used' };
      const settled = parseRecord(kept);
      if (settled.expiresAt > now) {
        if (settled.digest !== compactDigest(requestDigest) || settled.outcome === '')
          return { status: 'refused', reason: 'used' };
        return { status: 'replayed', outcome: JSON.parse(settled.outcome) as T };
      }
      // Expired: the nonce may be claimed again (the entry below replaces it).
    }
    // An entry that would be forgotten at once: its ticket has expired by this clock too.
    if (expiresAt <= now) return { status: 'refused', reason: 'expired' };
    // Claim synchronously, before the first await, so concurrent callers see it.
    const entry: Running = { requestDigest, expiresAt };
    this.#entries.set(nonce, entry);
    const second = Math.floor(expiresAt / 1000);
    const due = this.#bySecond.get(second);
    if (due) due.push(nonce);
    else this.#bySecond.set(second, [nonce]);
    let outcome: T;
    try {
      outcome = await action(undefined);
    } catch (error) {
      if (this.#entries.get(nonce) === entry) {
        this.#entries.delete(nonce);
        // Out of the sweep index too, or retries that keep failing would pile up there until expiry.
        const list = this.#bySecond.get(second);
        const index = list ? list.lastIndexOf(nonce) : -1;
        if (list && index !== -1) list.splice(index, 1);
      }
      throw error;
    }
    let recorded: string | undefined;
    try {
      recorded = JSON.stringify(outcome);
    } catch {
      recorded = undefined; // BigInt or a cycle
    }
    // The action ran, so the nonce stays used even with no outcome to replay ('').
    this.#entries.set(
      nonce,
      record(expiresAt, compactDigest(requestDigest), compactOutcome(recorded)),
    );
    if (recorded === undefined) throw new TypeError('the action must return a JSON value');
    return { status: 'performed', outcome };
  }

  /**
   * See {@link ReplayStore.recorded}: the settled, unexpired entry of the nonce, if any.
   * @throws {TypeError} for a malformed request.
   */
  async recorded<T extends Json>(request: OnceRequest): Promise<OnceResult<T> | undefined> {
    assertOnceRequest(request);
    const kept = this.#entries.get(request.nonce);
    if (typeof kept !== 'string') return undefined; // none, or its action still runs
    const settled = parseRecord(kept);
    if (settled.expiresAt <= this.#now()) return undefined;
    if (settled.digest !== compactDigest(request.requestDigest) || settled.outcome === '')
      return { status: 'refused', reason: 'used' };
    return { status: 'replayed', outcome: JSON.parse(settled.outcome) as T };
  }

  /**
   * Forget completed entries whose `expiresAt` is at or before `now`
   * (milliseconds since the epoch). Entries whose action still runs stay.
   * @returns how many entries were removed.
   */
  sweep(now = this.#now()): number {
    let removed = 0;
    // No time is past a broken clock's reading (NaN), nor a value that is no time: never delete live entries.
    if (typeof now !== 'number' || !(now >= 0)) return removed;
    for (const [second, nonces] of this.#bySecond) {
      if (second * 1000 > now) continue;
      const kept: string[] = [];
      for (const nonce of nonces) {
        const entry = this.#entries.get(nonce);
        if (entry === undefined) continue; // released, or already forgotten
        const expiresAt = typeof entry === 'string' ? expiresAtOf(entry) : entry.expiresAt;
        // Claimed again under another second: that bucket has it now.
        if (Math.floor(expiresAt / 1000) !== second) continue;
        // Still running: never forgotten, kept in the bucket of its own second.
        if (typeof entry !== 'string' || expiresAt > now) kept.push(nonce);
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
