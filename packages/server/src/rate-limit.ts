/**
 * Per-principal rate limit of tool invocations (`server/tools`, "Security
 * Considerations": servers MUST rate limit tool invocations). A token bucket
 * per principal id: `limit` calls at once, regained evenly over `windowMs`.
 * State lives in this process: N instances behind a load balancer allow N
 * times the limit, so keep a gateway limit as well when that matters.
 */

/**
 * JSON-RPC error code of a refused, rate-limited request. Application
 * defined: outside the range JSON-RPC reserves (`-32768` to `-32000`), as
 * `basic/index` ("Error Codes") asks of codes the specification does not define.
 * Sent with HTTP 429 and `Retry-After` (RFC 6585 §4, RFC 9110 §10.2.3).
 */
export const RATE_LIMITED = -31429;

/** Options of the per-principal limit (`rateLimit` of `createMcpEndpoint`). */
export interface RateLimitOptions {
  /** Tool calls one principal may make in a burst (the bucket size); a positive integer. */
  limit: number;
  /** Milliseconds over which a principal regains `limit` calls; a positive integer. */
  windowMs: number;
}

/** Buckets kept before idle ones (full again) are dropped. */
const PRUNE_AT = 10_000;

/** The token buckets of one endpoint. */
export class RateLimiter {
  readonly #limit: number;
  readonly #perMs: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  #pruneAt = PRUNE_AT;

  /** @throws TypeError when `limit` or `windowMs` is not a positive integer. */
  constructor({ limit, windowMs }: RateLimitOptions) {
    if (!Number.isSafeInteger(limit) || limit <= 0)
      throw new TypeError('rateLimit.limit must be a positive integer');
    if (!Number.isSafeInteger(windowMs) || windowMs <= 0)
      throw new TypeError('rateLimit.windowMs must be a positive integer');
    this.#limit = limit;
    this.#perMs = limit / windowMs;
  }

  /**
   * Take one call for `key` at `now` (milliseconds since the epoch).
   * @returns 0 when allowed, else the milliseconds until one call is regained.
   */
  take(key: string, now = Date.now()): number {
    const bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= this.#pruneAt) this.#prune(now);
      this.#buckets.set(key, { tokens: this.#limit - 1, at: now });
      return 0;
    }
    bucket.tokens = Math.min(this.#limit, bucket.tokens + (now - bucket.at) * this.#perMs);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.#perMs);
  }

  /**
   * Drop the buckets that are full again: forgetting them changes nothing.
   * The next prune waits until the map has doubled, so a crowd of active
   * principals costs amortized constant time per new one.
   */
  #prune(now: number): void {
    for (const [key, bucket] of this.#buckets)
      if (bucket.tokens + (now - bucket.at) * this.#perMs >= this.#limit) this.#buckets.delete(key);
    this.#pruneAt = Math.max(PRUNE_AT, this.#buckets.size * 2);
  }
}
