import { Writable } from 'node:stream';
import type { AuditWriter, GateAuditEvent } from '@mrtr/gate';
import { type DestinationStream, type Logger, pino } from 'pino';
import {
  bounded,
  type FileLines,
  fileLines,
  type LineSender,
  streamLines,
} from './line-writers.js';

export { AuditDestinationBusyError } from './line-writers.js';

/**
 * A destination that takes one whole line per call: `write` returns once the
 * line is written, or a promise that resolves then, and throws (or rejects)
 * when it cannot be written.
 */
export interface LineDestination {
  write(line: string): unknown;
}

/** Options of {@link JsonLinesAuditSink}. */
export interface JsonLinesAuditSinkOptions {
  /**
   * Where the lines go: `'stdout'` (default, `process.stdout`), `'stderr'`, a
   * file path (appended, created with its directory, mode 0600), or a
   * {@link LineDestination}. A Node.js `Writable` stream is one: a line
   * counts as written when the stream's write callback comes.
   *
   * A regular file is looked at again before each line: renamed or removed
   * since (log rotation), it is opened anew at the path, so no signal or
   * restart is needed. A line a full disk cut short is cut back off the file,
   * so every line stays a whole record. A FIFO or device path is written as
   * it is (no `fsync`); a FIFO that no process reads fails at construction
   * (`ENXIO`).
   */
  destination?: 'stdout' | 'stderr' | string | LineDestination;
  /**
   * `fsync` the file after each record, so a record is on disk before the
   * gate goes on to the mutation (default `true` for a file path, ignored otherwise).
   */
  fsync?: boolean;
  /** Fields on every line (default pino's: `pid` and `hostname`); `null` for none. */
  base?: Record<string, unknown> | null;
  /**
   * Milliseconds a record may wait for the destination to take it (a full
   * pipe, a slow disk) before its write fails (default 2000). The round that
   * wrote it waits that long at most, then fails closed.
   */
  timeoutMs?: number;
  /**
   * Bytes of records that may wait for the destination at once (default
   * 1 MiB); a record beyond that fails at once instead of waiting.
   */
  maxPendingBytes?: number;
}

/** The `msg` of every audit line: `jq 'select(.msg == "mrtr.audit")'` picks them out of a mixed stream. */
export const AUDIT_LINE_MESSAGE = 'mrtr.audit';

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_MAX_PENDING_BYTES = 1024 * 1024;

/** A {@link LineDestination} as a {@link LineSender}: its throw or rejection fails the line. */
function fromLineDestination(destination: LineDestination): LineSender {
  return async (line) => {
    await destination.write(line);
  };
}

/**
 * An audit sink that writes each `GateAuditEvent` of `@mrtr/gate` as one JSON
 * line through pino: pino's fields (`level`, `time` as ISO 8601, `pid`,
 * `hostname`), then the record's own fields, then `"msg":"mrtr.audit"`.
 *
 * Writes never block the event loop: a file is written (and `fsync`ed) on
 * libuv's thread pool, stdout and stderr through `process.stdout` /
 * `process.stderr` (asynchronous for pipes). `write` resolves once the
 * destination took the line, and rejects when it failed, took nothing for
 * `timeoutMs`, or already holds `maxPendingBytes` of waiting lines: the gate
 * awaits it, so the round that wrote the record fails closed (nothing
 * claimed, nothing changed) while every other request goes on. A destination
 * that takes nothing costs each audited round `timeoutMs` at most, and
 * nothing once `maxPendingBytes` are waiting.
 * Not transactional: the `completed` record is written after the replay
 * store commits, and the `accepted` record before the claim.
 *
 * @example
 * ```ts
 * import { JsonLinesAuditSink } from '@mrtr/audit';
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { MemoryReplayStore } from '@mrtr/replay';
 * import { TicketSealer } from '@mrtr/ticket';
 *
 * const sealer = new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET ?? '' }] });
 * const store = new MemoryReplayStore();
 * const trail = new JsonLinesAuditSink({ destination: process.env.MRTR_AUDIT_FILE ?? 'stdout' });
 * const gate = new ConfirmationGate({ sealer, store, audit: trail });
 * // {"level":"info","time":"2026-08-01T09:30:00.000Z","pid":7,"hostname":"web-1","outcome":"asked",…,"msg":"mrtr.audit"}
 * ```
 */
export class JsonLinesAuditSink implements AuditWriter {
  readonly transactional = false;
  readonly #logger: Logger;
  readonly #lines: ReturnType<typeof bounded>;
  readonly #file: FileLines | undefined;
  readonly #timeoutMs: number;
  /** The line pino handed over during the current `write` call. */
  #handed: Promise<void> | undefined;
  #closed = false;

  /**
   * @throws the file system's error when the file cannot be opened (at construction, not at the
   *   first record), e.g. `EISDIR`, or `ENXIO` for a FIFO that no process reads.
   * @throws {RangeError} for a `timeoutMs` that is not a number of milliseconds from 1 to
   *   2,147,483,647 (a longer timer fires at once), or a `maxPendingBytes` that is not a whole
   *   number of bytes ≥ 0 (`NaN` removed the bound).
   */
  constructor(options: JsonLinesAuditSinkOptions = {}) {
    const where = options.destination ?? 'stdout';
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs >= 1 && timeoutMs <= 2 ** 31 - 1))
      throw new RangeError(
        `timeoutMs must be a number of milliseconds from 1 to 2147483647, got ${timeoutMs}`,
      );
    const pending = options.maxPendingBytes;
    if (pending !== undefined && !(Number.isSafeInteger(pending) && pending >= 0))
      throw new RangeError(`maxPendingBytes must be a whole number of bytes ≥ 0, got ${pending}`);
    this.#timeoutMs = timeoutMs;
    let send: LineSender;
    if (where instanceof Writable) {
      send = streamLines(where);
    } else if (typeof where !== 'string') {
      send = fromLineDestination(where);
    } else if (where === 'stdout' || where === 'stderr') {
      send = streamLines(where === 'stdout' ? process.stdout : process.stderr);
    } else {
      this.#file = fileLines(where, options.fsync ?? true, timeoutMs);
      send = this.#file.send;
    }
    this.#lines = bounded(send, {
      timeoutMs,
      maxPendingBytes: options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES,
    });
    // pino formats the line and hands it to this destination synchronously, inside `info`.
    const capture = {
      write: (line: string) => {
        this.#handed = this.#lines.send(line);
      },
    };
    this.#logger = pino(
      {
        ...(options.base !== undefined ? { base: options.base } : {}),
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      capture as DestinationStream,
    );
  }

  /**
   * Write one record as one line.
   * @returns a promise that resolves once the destination took the line.
   * @throws (rejects with) the destination's error, or `AuditDestinationBusyError`
   *   when the line was not taken within `timeoutMs` or too much is waiting; an
   *   `Error` once {@link close} was called (the gate then fails the round closed).
   */
  write(event: GateAuditEvent): Promise<void> {
    if (this.#closed)
      return Promise.reject(
        new Error('the audit sink is closed: no record is written after close()'),
      );
    this.#handed = undefined;
    this.#logger.info(event, AUDIT_LINE_MESSAGE);
    const handed = this.#handed as Promise<void> | undefined;
    this.#handed = undefined;
    return handed ?? Promise.reject(new Error('pino wrote no line for the audit record'));
  }

  /**
   * Refuse every later {@link write}, wait until the lines handed over were
   * taken or failed (`timeoutMs` at most), then close the file this sink
   * opened (nothing is closed for stdout, stderr and given destinations): a
   * line still being written is refused if not started, and the file is
   * closed once the one in flight settles, never under it.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#timeoutMs);
      timer.unref();
    });
    await Promise.race([this.#lines.settled(), late]);
    clearTimeout(timer);
    this.#file?.close();
  }
}
