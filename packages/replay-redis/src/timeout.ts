import type { Cluster, Redis } from 'ioredis';

/** The message of an error, or the value as text. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `promise`, or a rejection after `ms` milliseconds, after calling
 * `onTimeout`. The command behind it is not cancelled: its reply may still
 * come, which is why a claim that timed out is released by its token afterwards.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  onTimeout?: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(`no reply from Redis within ${ms} ms`));
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Drop a connection that let a reply go past its deadline, and connect
 * again: Redis answers in order, so behind a reply that never comes (a
 * half-open TCP connection, a stuck proxy) every later reply waits too, and
 * the connection would fail every command until the process restarts. The
 * client reconnects by its own `retryStrategy`; a client that is not `ready`
 * is already reconnecting, or was closed by its owner, and is left alone.
 * @returns whether the connection was dropped.
 */
export function reconnectStalled(client: Pick<Redis | Cluster, 'status' | 'disconnect'>): boolean {
  if (client.status !== 'ready') return false;
  client.disconnect(true);
  return true;
}
