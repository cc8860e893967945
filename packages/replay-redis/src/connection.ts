import type { Cluster, Redis } from 'ioredis';
import type { Command } from './commands.js';
import { type DroppableClient, describeError, reconnectStalled, withTimeout } from './timeout.js';

/**
 * The store's commands on its client: each reply awaited at most
 * `timeoutMs`, a write and its `WAIT` on one connection, scripts by SHA.
 */
export class Connection {
  readonly client: Redis | Cluster;
  readonly #timeoutMs: number;
  readonly #onReply: () => void;

  /**
   * A reply past its deadline: the connection is of no more use; drop it
   * where that is safe (see `reconnectStalled`), once until the new one is ready.
   */
  readonly dropStalled = (): void => {
    // One drop until the new connection is ready: the old one may say 'ready' until it closes.
    if (this.#rejoined || !reconnectStalled(this.client as DroppableClient)) return;
    const rejoined: Promise<void> = new Promise<void>((resolve) => {
      this.client.once('ready', () => {
        if (this.#rejoined === rejoined) this.#rejoined = undefined;
        resolve();
      });
    });
    this.#rejoined = rejoined;
  };
  /**
   * Set while the client reconnects after this store dropped a stalled
   * connection, settled when it is ready: commands wait for it (up to
   * `timeoutMs`) instead of failing at once as they do while Redis is down.
   * A wait for it that runs out clears it: Redis is down, fail fast again.
   */
  #rejoined: Promise<void> | undefined;

  /** Whether a command must {@link settle} first: the client is not ready, or reconnects after a drop. */
  get unsettled(): boolean {
    return this.client.status !== 'ready' || this.#rejoined !== undefined;
  }

  /** @param onReply called after every reply: Redis answers again. */
  constructor(client: Connection['client'], timeoutMs: number, onReply: () => void) {
    this.client = client;
    this.#timeoutMs = timeoutMs;
    this.#onReply = onReply;
  }

  /**
   * A client still making its first connection (or reconnecting's handshake),
   * or reconnecting after this store dropped a stalled connection, gets up to
   * `timeoutMs` to finish it; one that lost its connection otherwise returns
   * at once, and its next command fails (Redis is down).
   */
  async settle(): Promise<void> {
    const client = this.client;
    if (client.status === 'wait') client.connect().catch(() => {});
    const rejoined = this.#rejoined;
    if (rejoined) {
      await withTimeout(rejoined, this.#timeoutMs).catch(() => {
        if (this.#rejoined === rejoined) this.#rejoined = undefined;
      });
      return;
    }
    const connecting = client.status === 'connecting' || client.status === 'connect';
    if (!connecting) return;
    let ready = () => {};
    const up = new Promise<void>((resolve) => {
      ready = resolve;
      client.once('ready', ready);
    });
    try {
      await withTimeout(up, this.#timeoutMs);
    } catch {
      // not ready within the deadline: the command fails
    } finally {
      client.off('ready', ready); // one listener per waiting command, gone with it
    }
  }

  /**
   * Send `commands` on one connection (a pipeline when several; on a
   * `Cluster`, to the node of the first key), and their replies.
   * @throws the first error reply, or when there is no reply within `timeoutMs`.
   */
  async exec(...commands: Command[]): Promise<unknown[]> {
    if (this.unsettled) await this.settle();
    let replies: unknown[];
    if (commands.length === 1) {
      const [name, ...args] = commands[0] as Command;
      replies = [
        await withTimeout(
          this.client.call(name as string, ...args),
          this.#timeoutMs,
          this.dropStalled,
        ),
      ];
    } else {
      const pipeline = this.client.pipeline();
      for (const [name, ...args] of commands) pipeline.call(name as string, ...args);
      const results = (await withTimeout(pipeline.exec(), this.#timeoutMs, this.dropStalled)) ?? [];
      for (const [error] of results) if (error) throw error;
      replies = results.map(([, reply]) => reply);
    }
    this.#onReply();
    return replies;
  }

  /** Run script `s` on `key` by its SHA (its text when Redis lacks it), then `wait` if given. */
  async script(
    s: { lua: string; sha: string },
    key: string,
    args: readonly string[],
    wait?: Command,
  ): Promise<unknown[]> {
    const tail = wait ? [wait] : [];
    try {
      return await this.exec(['EVALSHA', s.sha, '1', key, ...args], ...tail);
    } catch (error) {
      if (!describeError(error).startsWith('NOSCRIPT')) throw error;
      return this.exec(['EVAL', s.lua, '1', key, ...args], ...tail);
    }
  }
}
