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

/** What {@link reconnectStalled} reads of a client: ioredis's `Redis` has all of it; a `Cluster` has no `stream`. */
export interface DroppableClient {
  readonly status?: string;
  readonly stream?: { destroy(): void };
  readonly options?: { autoResendUnfulfilledCommands?: boolean; retryStrategy?: unknown };
}

/**
 * Drop a connection that let a reply go past its deadline, so the client
 * connects again: Redis answers in order, so behind a reply that never comes
 * (a half-open TCP connection, a stuck proxy) every later reply waits too,
 * and the connection would fail every command until the process restarts.
 * Its socket is destroyed at once (`disconnect` would keep it up to
 * `disconnectTimeout` more), which ioredis treats as a lost connection: it
 * fails the commands in flight and reconnects by its `retryStrategy`.
 *
 * Only where that is safe for every user of the client: a standalone client
 * (a `Cluster` has no one socket) that is `ready`, resends nothing after a
 * reconnect (`autoResendUnfulfilledCommands: false`: another user's
 * `INCR` whose reply was only slow must not run twice) and reconnects at all
 * (`retryStrategy` a function), as with `FAIL_FAST_REDIS_OPTIONS`.
 * @returns whether the connection was dropped.
 */
export function reconnectStalled(client: DroppableClient): boolean {
  const options = client.options;
  if (
    client.status !== 'ready' ||
    !client.stream ||
    options?.autoResendUnfulfilledCommands !== false ||
    typeof options.retryStrategy !== 'function'
  )
    return false;
  client.stream.destroy();
  return true;
}

/** The events {@link dropStalledHandshakes} listens to: ioredis's `Redis` emits them as its status changes. */
export interface StatusEvents {
  on(event: 'connect' | 'ready' | 'close' | 'end', listener: () => void): unknown;
  off(event: 'connect' | 'ready' | 'close' | 'end', listener: () => void): unknown;
}

/**
 * Drop a connection whose handshake gets no reply at all within `ms`:
 * ioredis's `connectTimeout` ends once TCP connects, and nothing bounds
 * `HELLO`, `AUTH`, `SELECT` or the ready check after it, so a server (or a
 * proxy) that accepts and never answers would leave the client in status
 * `connect` for good, refusing every command, and `connect()` would never
 * settle. Its socket is destroyed, which ioredis treats as a lost connection:
 * it reconnects by its `retryStrategy` (and a pending `connect()` rejects).
 * Dropped only when a command of the handshake has waited `ms` without a
 * byte back, whichever step it is (a server may answer `HELLO` and then
 * stall on `AUTH`); a server that answers, however long it takes to get
 * ready (a Redis loading its data answers `LOADING`, and ioredis asks again
 * later), is left alone. Only where dropping is safe, as for {@link reconnectStalled}: a
 * standalone client (a `Cluster` has no one socket) that resends nothing
 * after a reconnect (`autoResendUnfulfilledCommands: false`).
 * @param ms milliseconds a handshake may go without a reply (the store's `timeoutMs`).
 * @returns a function that removes the listeners.
 */
export function dropStalledHandshakes(
  client: StatusEvents &
    DroppableClient & {
      readonly stream?: HandshakeSocket;
      /** ioredis's commands written and awaiting their reply (the handshake's, while `connect`). */
      readonly commandQueue?: { readonly length: number };
    },
  ms: number,
): () => void {
  if (client.options?.autoResendUnfulfilledCommands !== false) return () => {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const connected = () => {
    clear();
    const socket = client.stream;
    if (!socket) return;
    let heard = false;
    socket.on?.('data', () => {
      heard = true;
    });
    const arm = () => {
      timer = setTimeout(() => {
        timer = undefined;
        if (client.status !== 'connect' || client.stream !== socket) return;
        // Silent for `ms` with a command of the handshake waiting for its reply: stalled.
        if (!heard && (client.commandQueue?.length ?? 1) > 0) socket.destroy();
        else {
          heard = false; // answering, or between ready checks (a loading Redis): watch on
          arm();
        }
      }, ms);
      timer.unref?.();
    };
    arm();
  };
  client.on('connect', connected);
  for (const event of ['ready', 'close', 'end'] as const) client.on(event, clear);
  if (client.status === 'connect') connected();
  return () => {
    clear();
    client.off('connect', connected);
    for (const event of ['ready', 'close', 'end'] as const) client.off(event, clear);
  };
}

/** The socket of a connection being made: destroyed if it stays silent, watched for its bytes. */
interface HandshakeSocket {
  destroy(): void;
  on?(event: 'data', listener: () => void): unknown;
}
