/**
 * Waiting at start for a service the server needs: a database or Redis that
 * is down when the process starts (a host rebooting, containers started in
 * any order) is waited for, not a reason to exit.
 */
import { serviceUnavailable, sessionRefusedByConfiguration } from '@mrtr/wire';

/** First wait after a failed attempt, milliseconds; doubled after each, up to {@link MAX_WAIT_MS}. */
export const FIRST_WAIT_MS = 500;
/** Longest wait between two attempts, milliseconds. */
export const MAX_WAIT_MS = 5_000;

/** Options of {@link untilReachable}. */
export interface UntilReachableOptions {
  /** Where each failed attempt is told (default `console.warn`). */
  log?: (line: string) => void;
  /** Waits `ms` milliseconds (default a timer). */
  sleep?: (ms: number) => Promise<void>;
  /** Stop waiting after this many milliseconds in all and throw the last error (default: never). */
  giveUpAfterMs?: number;
}

/**
 * Whether `error` says a service could not be reached, rather than that it
 * refused what it was asked: a connection refused, reset or timed out, a
 * database starting up or shutting down, a deadline of `@mrtr/sql` (as
 * `serviceUnavailable` of `@mrtr/wire` reads them), or a replay store's
 * `ReplayStoreUnavailableError` itself (Redis unreachable), by its exact
 * name: its subclasses that say Redis answered with a refusal
 * (`RedisDurabilityError`, `RedisRefusedConnectionError`) are no outage,
 * nor is a PostgreSQL server that refuses the session for its configuration
 * (a wrong password, an unknown role or database, no TLS), however
 * `serviceUnavailable` words it for a request.
 */
export function isUnreachable(error: unknown): boolean {
  if (refusedByConfiguration(error)) return false;
  if (serviceUnavailable(error) !== undefined) return true;
  return error instanceof Error && error.name === 'ReplayStoreUnavailableError';
}

/**
 * A PostgreSQL server that refuses the session for its configuration
 * (`sessionRefusedByConfiguration` of `@mrtr/wire`) anywhere in the `cause`
 * chain: waiting changes none of them. `serviceUnavailable` answers a
 * request that meets one with 503 (the server cannot serve it now); at
 * start it is a mistake to fix.
 */
function refusedByConfiguration(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (sessionRefusedByConfiguration(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Run `attempt` until it succeeds. A failure that {@link isUnreachable} calls
 * a service out of reach is told (`<what> is not reachable yet (<message>);
 * trying again in <s> s`) and tried again after 0.5 s, doubling up to 5 s;
 * any other failure (a URL of another scheme, a refused password) is thrown
 * at once. A host name that does not resolve (`ENOTFOUND`) is waited for too:
 * DNS may not know a service yet that is still starting; a misspelled one
 * shows as the same line every 5 s.
 * @returns what `attempt` resolved to.
 * @throws the first failure that is not {@link isUnreachable}, or the last one after `giveUpAfterMs`.
 */
export async function untilReachable<T>(
  what: string,
  attempt: () => Promise<T>,
  options: UntilReachableOptions = {},
): Promise<T> {
  const log = options.log ?? ((line: string) => console.warn(line));
  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const giveUpAfter = options.giveUpAfterMs ?? Number.POSITIVE_INFINITY;
  let waited = 0;
  let wait = FIRST_WAIT_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isUnreachable(error) || waited >= giveUpAfter) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      log(`${what} is not reachable yet (${reason}); trying again in ${wait / 1000} s`);
      await sleep(wait);
      waited += wait;
      wait = Math.min(wait * 2, MAX_WAIT_MS);
    }
  }
}
