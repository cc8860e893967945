/** Pause after the first round that got no reply, milliseconds; doubles up to {@link MAX_DELAY_MS}. */
const FIRST_DELAY_MS = 100;
/** Longest pause between two rounds that got no reply, milliseconds. */
const MAX_DELAY_MS = 5_000;
/** Most writes kept; past it the oldest is dropped (its claim still ends at its `PXAT`). */
export const MAX_PENDING_WRITES = 10_000;

interface PendingWrite {
  /** The command, sent as is (`EVAL` of a token-checked script). */
  command: readonly string[];
  /** When the key expires in Redis by itself, milliseconds since the epoch: no use writing after. */
  until: number;
}

/**
 * Token-checked writes (delete a claim, record an outcome) that got no
 * reply in time. Each is sent again until Redis answers it: as soon as
 * Redis shows it answers (the store calls {@link nudge} on every reply and
 * on every reconnect), and on an unref'd timer with backoff, whatever the
 * state of the connection. One round is in flight at a time, and its
 * commands wait for their real replies (not a timeout), so a stalled Redis
 * never piles up copies; memory is bounded by {@link MAX_PENDING_WRITES}.
 */
export class PendingWrites {
  readonly #writes = new Map<string, PendingWrite>();
  readonly #send: (command: readonly string[]) => Promise<unknown>;
  readonly #now: () => number;
  #inFlight = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #delayMs = FIRST_DELAY_MS;
  #closed = false;

  /** @param send sends one command and settles with its reply (no timeout of its own). */
  constructor(send: (command: readonly string[]) => Promise<unknown>, now: () => number) {
    this.#send = send;
    this.#now = now;
  }

  /** Writes not yet answered. */
  get size(): number {
    return this.#writes.size;
  }

  /** Keep `command` under `id` (unique per claim) until Redis answers it or `until` passes. */
  add(id: string, command: readonly string[], until: number): void {
    if (this.#writes.size >= MAX_PENDING_WRITES && !this.#writes.has(id))
      this.#writes.delete(this.#writes.keys().next().value as string);
    this.#writes.set(id, { command, until });
    this.nudge();
  }

  /** Send every write now, unless a round is still waiting for its replies. */
  nudge(): void {
    if (this.#inFlight || this.#closed) return;
    // Called on every reply: the usual case, nothing to send and no timer, costs one check.
    if (this.#writes.size === 0 && this.#timer === undefined) {
      this.#delayMs = FIRST_DELAY_MS;
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const now = this.#now();
    for (const [id, write] of this.#writes) if (write.until <= now) this.#writes.delete(id);
    if (this.#writes.size === 0) {
      this.#delayMs = FIRST_DELAY_MS;
      return;
    }
    this.#inFlight = true;
    let answered = false;
    const round = [...this.#writes].map(([id, write]) =>
      this.#send(write.command).then(() => {
        answered = true;
        if (this.#writes.get(id) === write) this.#writes.delete(id);
      }),
    );
    void Promise.allSettled(round).then(() => {
      this.#inFlight = false;
      if (answered) {
        // Redis answers: send what was added meanwhile, or failed beside a success, at once.
        this.#delayMs = FIRST_DELAY_MS;
        if (this.#writes.size > 0) this.nudge();
      } else {
        this.#schedule();
      }
    });
  }

  /** Stop retrying; what is left ends with its `PXAT` in Redis. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#closed || this.#timer || this.#writes.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.nudge();
    }, this.#delayMs);
    this.#timer.unref?.();
    this.#delayMs = Math.min(this.#delayMs * 2, MAX_DELAY_MS);
  }
}
